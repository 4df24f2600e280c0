# test/t/lib/upgrade.sh — what the upgrade tests from 0.4 on share (sourced,
# not a test): a catalog of two roles' programs, rules, bindings (one to a
# relation named like Freebase's), grants, learn runs and mined rules with
# constants, filled at an old version through the current library, then
# ALTER EXTENSION gpudl UPDATE; the catalog and the answers must be the
# same after, and the owners' rights still hold.
#
#   db=gpudl_upgradeNN; source test/t/lib/upgrade.sh
#   upgrade_fill_and_update FROM ROLE_PREFIX 'MINING ARGUMENTS OF family/sib'
# Defines run (psql on $db) and sets latest (the version updated to).
upgrade_fill_and_update() {
  local from=$1 prefix=$2 family_mine=$3
dropdb --if-exists $db; createdb $db
psql -X -q -d postgres -c "DROP ROLE IF EXISTS ${prefix}_ann" -c "DROP ROLE IF EXISTS ${prefix}_bob" \
  -c "CREATE ROLE ${prefix}_ann" -c "CREATE ROLE ${prefix}_bob"
run() { psql -X -q -v ON_ERROR_STOP=1 -d $db "$@"; }
run >/dev/null <<SQL
CREATE EXTENSION gpudl VERSION '$from';
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES ('abe', 'homer'), ('homer', 'bart'), ('homer', 'lisa'), ('bart', 'bo'),
  ('clancy', 'marge'), ('marge', 'bart'), ('marge', 'lisa'), ('homer', 'maggie'), ('marge', 'maggie');
CREATE TABLE gp_pos AS SELECT DISTINCT x.p, y.c FROM parent x JOIN parent y ON x.c = y.p;
CREATE TABLE sib(a text, b text);
INSERT INTO sib SELECT DISTINCT x.c, y.c FROM parent x JOIN parent y ON x.p = y.p AND x.c <> y.c;
-- a relation with names a Freebase user has
CREATE TABLE "/people/person/gender"(p text, g text);
INSERT INTO "/people/person/gender" VALUES ('bart', 'm'), ('homer', 'm'), ('abe', 'm'), ('lisa', 'f'),
  ('marge', 'f'), ('maggie', 'f'), ('bo', 'm'), ('clancy', 'm');
GRANT SELECT ON parent, gp_pos, sib, "/people/person/gender" TO ${prefix}_ann, ${prefix}_bob;
SELECT gpudl_create_program('family', 'anc(X, Y) :- parent(X, Y). anc(X, Z) :- anc(X, Y), parent(Y, Z).', 'ancestors');
SELECT gpudl_bind('family', 'sib', 'sib');
SELECT gpudl_bind('family', '/people/person/gender', '"/people/person/gender"');
SELECT count(*) FROM gpudl_learn('family', 'gp', 'gp_pos', max_rules => 2, commit => true);
SELECT count(*) FROM gpudl_mine('family', 'sib', $family_mine);
SELECT gpudl_grant('family', '${prefix}_bob', 'use');
SET ROLE ${prefix}_ann;
SELECT gpudl_create_program('anns', 'sib2(X, Y) :- parent(P, X), parent(P, Y), X != Y.');
SELECT gpudl_grant('anns', '${prefix}_bob', 'modify');
SELECT count(*) FROM gpudl_learn('anns', 'gp2', 'gp_pos', max_rules => 1, method => 'refine', max_seconds => 20);
SELECT count(*) FROM gpudl_mine('anns', NULL, max_body => 2, commit => true);
RESET ROLE;
SET ROLE ${prefix}_bob;
SELECT gpudl_add_rules('anns', 'cousin(X, Y) :- parent(A, X), parent(B, Y), sib2(A, B).');
RESET ROLE;
SELECT gpudl_create_program('facts', 'e(1, 2). e(2, 3). tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z).');
SQL
[ "$(run -At -c "SELECT extversion FROM pg_extension WHERE extname = 'gpudl'")" = "$from" ] \
  || { echo "not a $from install"; exit 1; }

state="SELECT name, description, version, owner, acl, created_at, updated_at FROM gpudl.programs ORDER BY name;
   SELECT id, program, rule, head, learned, enabled, weight, created_at FROM gpudl.rules ORDER BY id;
   SELECT program, predicate, relation::text, columns FROM gpudl.bindings ORDER BY 1, 2;
   SELECT id, program, target, status, device, params, run_by, started_at, finished_at, epochs, final_loss, message, timed_out FROM gpudl.learn_runs ORDER BY id;
   SELECT run_id, rank, rule, probability, loss, committed FROM gpudl.learned_rules ORDER BY 1, 2;
   SELECT * FROM gpudl.mined_rules ORDER BY id;
   SELECT * FROM gpudl.program_privileges ORDER BY 1, 2, 3;
   SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT * FROM gpudl_query('family', 'gp(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT * FROM gpudl_query('anns', 'cousin(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT answer, score, rank, rules FROM gpudl_predict('family', 'sib', 'sib(\"bart\", Y)', exclude_known => false, \"limit\" => 0) ORDER BY rank, answer;
   SELECT gpudl_count('facts', 'tc(X, Y)');"
before=$(run -At -c "$state")
[ "$(echo "$before" | grep -c .)" -gt 40 ] || { echo "too little data before the update?"; echo "$before"; exit 1; }
[ "$(run -At -c "SELECT count(*) FROM gpudl.mined_rules WHERE rule LIKE '%\"%'")" -gt 0 ] \
  || { echo "no mined rules with constants before the update"; exit 1; }

anns_mined=$(run -At -c "SELECT count(*) FROM gpudl.mined_rules WHERE program = 'anns'")
[ "$anns_mined" -gt 0 ] || { echo "ann mined nothing before the update"; exit 1; }
run -c "ALTER EXTENSION gpudl UPDATE"
latest=$(run -At -c "SELECT default_version FROM pg_available_extensions WHERE name = 'gpudl'")
[ "$(run -At -c "SELECT extversion FROM pg_extension WHERE extname = 'gpudl'")" = "$latest" ] \
  || { echo "not updated to $latest"; exit 1; }
after=$(run -At -c "$state")
if [ "$before" != "$after" ]; then
  echo "the catalog or the answers differ after the update"; diff <(echo "$before") <(echo "$after"); exit 1
fi
# one gpudl_mine and one gpudl_predict: earlier signatures were replaced, not overloaded
[ "$(run -At -c "SELECT count(*) FROM pg_proc WHERE proname IN ('gpudl_mine', 'gpudl_predict')")" = 2 ] \
  || { echo "more than one gpudl_mine or gpudl_predict after the update"; exit 1; }
# owners still hold: bob may use family but not change it
out=$(run -At 2>&1 <<SQL
SET client_min_messages = notice;
SET ROLE ${prefix}_bob;
DO \$\$ BEGIN PERFORM gpudl_mine('family', 'sib', commit => true, max_seconds => 10); RAISE NOTICE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'refused'; END \$\$;
SELECT 'bob counts ' || gpudl_count('family', 'anc(X, Y)');
RESET ROLE;
SQL
)
{ echo "$out" | grep -q "^bob counts $(run -At -c "SELECT gpudl_count('family', 'anc(X, Y)')")" \
  && [ "$(echo "$out" | grep -c "NOTICE:  refused")" = 1 ]; } \
  || { echo "bob's use after the update: $out"; exit 1; }
}

# upgrade_cleanup ROLE_PREFIX: drop the database and the roles
upgrade_cleanup() {
  dropdb $db
  psql -X -q -d postgres -c "DROP ROLE $1_ann" -c "DROP ROLE $1_bob"
}

# test/t/lib/upgrade.sh — what the upgrade tests share (sourced, not a test).
#
# The steps every upgrade test takes, on the database named by $db:
#   upgrade_setup ROLE...      a fresh $db and fresh roles
#   run ...                    psql on $db, stopping at the first error
#   upgrade_check_installed V  stop unless the old version V is installed
#   upgrade_snapshot MIN       before: what $state answers (more than MIN lines)
#   upgrade_update             ALTER EXTENSION gpudl UPDATE; sets latest; the
#                              same answers to $state after
#   upgrade_check_bob ROLE N   bob still may use family, and N refusals
#   upgrade_cleanup ROLE...    drop $db and the roles
# and the pieces of the catalog that the tests from 0.3 on fill alike
# (upgrade_sql_family_tables, upgrade_sql_role_programs, upgrade_state_sql).
#
# The tests from 0.4 on share all of it in upgrade_fill_and_update: a catalog
# of two roles' programs, rules, bindings (one to a relation named like
# Freebase's), grants, learn runs and mined rules with constants, filled at
# an old version through the current library, then ALTER EXTENSION gpudl
# UPDATE; the catalog and the answers must be the same after, and the
# owners' rights still hold.
#
#   db=gpudl_upgradeNN; source test/t/lib/upgrade.sh
#   upgrade_fill_and_update FROM ROLE_PREFIX 'MINING ARGUMENTS OF family/sib' ['MORE SQL']
# (MORE SQL: what the old version adds to the catalog, run after the rest)
# Sets latest (the version updated to) and anns_mined.

# run ARGS...: psql on $db, quiet, stopping at the first error
run() { psql -X -q -v ON_ERROR_STOP=1 -d $db "$@"; }

# upgrade_setup ROLE...: drop and create $db, then drop (if there) and create
# the roles, so that a test starts from nothing an earlier run left
upgrade_setup() {
  local role drop=() create=()
  for role in "$@"; do
    drop+=(-c "DROP ROLE IF EXISTS $role"); create+=(-c "CREATE ROLE $role")
  done
  dropdb --if-exists $db; createdb $db
  psql -X -q -d postgres "${drop[@]}" "${create[@]}"
}

# upgrade_version: the version of gpudl installed in $db
upgrade_version() {
  run -At -c "SELECT extversion FROM pg_extension WHERE extname = 'gpudl'"
}

# upgrade_check_installed FROM: stop unless $db holds gpudl at FROM, so that
# the update really starts from the version the test names
upgrade_check_installed() {
  [ "$(upgrade_version)" = "$1" ] || { echo "not a $1 install"; exit 1; }
}

# upgrade_snapshot MIN: set before to what $state answers now; stop unless it
# has more than MIN lines (a catalog too thin proves nothing)
upgrade_snapshot() {
  before=$(run -At -c "$state")
  [ "$(echo "$before" | grep -c .)" -gt "$1" ] || { echo "too little data before the update?"; echo "$before"; exit 1; }
}

# upgrade_update: ALTER EXTENSION gpudl UPDATE; set latest (the default
# version) and after (what $state answers then); stop unless gpudl is at
# latest and after is before, showing the difference
upgrade_update() {
  run -c "ALTER EXTENSION gpudl UPDATE"
  latest=$(run -At -c "SELECT default_version FROM pg_available_extensions WHERE name = 'gpudl'")
  [ "$(upgrade_version)" = "$latest" ] || { echo "not updated to $latest"; exit 1; }
  after=$(run -At -c "$state")
  if [ "$before" != "$after" ]; then
    echo "the catalog or the answers differ after the update"; diff <(echo "$before") <(echo "$after"); exit 1
  fi
}

# upgrade_check_bob ROLE N <<SQL: as ROLE (bob, who may use family), run the
# SQL read from stdin (DO blocks that raise the notice 'refused' where bob
# lacks a privilege) and count family's anc; stop unless bob counts what the
# owner counts and exactly N notices say refused.  Sets out (what psql said).
upgrade_check_bob() {
  local refused
  refused=$(cat)
  out=$(run -At 2>&1 <<SQL
SET client_min_messages = notice;
SET ROLE $1;
$refused
SELECT 'bob counts ' || gpudl_count('family', 'anc(X, Y)');
RESET ROLE;
SQL
)
  { grep -q <<<"$out" "^bob counts $(run -At -c "SELECT gpudl_count('family', 'anc(X, Y)')")" \
    && [ "$(echo "$out" | grep -c "NOTICE:  refused")" = "$2" ]; } \
    || { echo "bob's use after the update: $out"; exit 1; }
}

# upgrade_cleanup ROLE...: drop $db and the roles
upgrade_cleanup() {
  local role drop=()
  for role in "$@"; do drop+=(-c "DROP ROLE $role"); done
  dropdb $db
  psql -X -q -d postgres "${drop[@]}"
}

# upgrade_sql_family_tables: the SQL that makes the family's tables (parent,
# the grandparent examples gp_pos, the siblings sib) of the tests from 0.3 on
upgrade_sql_family_tables() {
  cat <<'SQL'
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES ('abe', 'homer'), ('homer', 'bart'), ('homer', 'lisa'), ('bart', 'bo'),
  ('clancy', 'marge'), ('marge', 'bart'), ('marge', 'lisa'), ('homer', 'maggie'), ('marge', 'maggie');
CREATE TABLE gp_pos AS SELECT DISTINCT x.p, y.c FROM parent x JOIN parent y ON x.c = y.p;
CREATE TABLE sib(a text, b text);
INSERT INTO sib SELECT DISTINCT x.c, y.c FROM parent x JOIN parent y ON x.p = y.p AND x.c <> y.c;
SQL
}

# upgrade_sql_role_programs PREFIX: the SQL, run as the extension's owner,
# by which PREFIX_ann makes, learns into and mines her program anns and lets
# PREFIX_bob modify it, bob adds a rule to it, and the owner makes facts
upgrade_sql_role_programs() {
  cat <<SQL
SET ROLE ${1}_ann;
SELECT gpudl_create_program('anns', 'sib2(X, Y) :- parent(P, X), parent(P, Y), X != Y.');
SELECT gpudl_grant('anns', '${1}_bob', 'modify');
SELECT count(*) FROM gpudl_learn('anns', 'gp2', 'gp_pos', max_rules => 1, method => 'refine', max_seconds => 20);
SELECT count(*) FROM gpudl_mine('anns', NULL, max_body => 2, commit => true);
RESET ROLE;
SET ROLE ${1}_bob;
SELECT gpudl_add_rules('anns', 'cousin(X, Y) :- parent(A, X), parent(B, Y), sib2(A, B).');
RESET ROLE;
SELECT gpudl_create_program('facts', 'e(1, 2). e(2, 3). tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z).');
SQL
}

# upgrade_state_sql PREDICT_COLUMNS: the catalog rows and answers that must
# be the same before and after the update, for the catalogs from 0.3 on;
# PREDICT_COLUMNS are the columns of gpudl_predict compared
upgrade_state_sql() {
  printf '%s' "SELECT name, description, version, owner, acl, created_at, updated_at FROM gpudl.programs ORDER BY name;
   SELECT id, program, rule, head, learned, enabled, weight, created_at FROM gpudl.rules ORDER BY id;
   SELECT program, predicate, relation::text, columns FROM gpudl.bindings ORDER BY 1, 2;
   SELECT id, program, target, status, device, params, run_by, started_at, finished_at, epochs, final_loss, message, timed_out FROM gpudl.learn_runs ORDER BY id;
   SELECT run_id, rank, rule, probability, loss, committed FROM gpudl.learned_rules ORDER BY 1, 2;
   SELECT * FROM gpudl.mined_rules ORDER BY id;
   SELECT * FROM gpudl.program_privileges ORDER BY 1, 2, 3;
   SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT * FROM gpudl_query('family', 'gp(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT * FROM gpudl_query('anns', 'cousin(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT $1 FROM gpudl_predict('family', 'sib', 'sib(\"bart\", Y)', exclude_known => false, \"limit\" => 0) ORDER BY rank, answer;
   SELECT gpudl_count('facts', 'tc(X, Y)');"
}

# upgrade_fill_and_update FROM ROLE_PREFIX FAMILY_MINE: fill $db at version
# FROM (FAMILY_MINE: the arguments of the owner's gpudl_mine of family/sib),
# update it and check that the catalog, the answers and the owners' rights
# are the same after
upgrade_fill_and_update() {
  local from=$1 prefix=$2 family_mine=$3 extra=${4:-}
upgrade_setup ${prefix}_ann ${prefix}_bob
run >/dev/null <<SQL
CREATE EXTENSION gpudl VERSION '$from';
$(upgrade_sql_family_tables)
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
$(upgrade_sql_role_programs $prefix)
$extra
SQL
upgrade_check_installed "$from"

state=$(upgrade_state_sql 'answer, score, rank, rules')
upgrade_snapshot 40
[ "$(run -At -c "SELECT count(*) FROM gpudl.mined_rules WHERE rule LIKE '%\"%'")" -gt 0 ] \
  || { echo "no mined rules with constants before the update"; exit 1; }

anns_mined=$(run -At -c "SELECT count(*) FROM gpudl.mined_rules WHERE program = 'anns'")
[ "$anns_mined" -gt 0 ] || { echo "ann mined nothing before the update"; exit 1; }
upgrade_update
# one gpudl_mine and one gpudl_predict: earlier signatures were replaced, not overloaded
[ "$(run -At -c "SELECT count(*) FROM pg_proc WHERE proname IN ('gpudl_mine', 'gpudl_predict')")" = 2 ] \
  || { echo "more than one gpudl_mine or gpudl_predict after the update"; exit 1; }
# owners still hold: bob may use family but not change it
upgrade_check_bob ${prefix}_bob 1 <<'SQL'
DO $$ BEGIN PERFORM gpudl_mine('family', 'sib', commit => true, max_seconds => 10); RAISE NOTICE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'refused'; END $$;
SQL
}

#!/usr/bin/env bash
# 14_upgrade_0_3: ALTER EXTENSION gpudl UPDATE from 0.3 keeps every program,
# rule, binding, owner, grant, learn run and mined rule of several roles, and
# the programs answer and predict the same after.  A 0.3 catalog is filled
# through the current library (which must keep working on it until the
# update), then updated in place.  Sections below the "0.4 features" line
# check that what 0.4 adds works on the updated catalog.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_upgrade03
dropdb --if-exists $db; createdb $db
psql -X -q -d postgres -c "DROP ROLE IF EXISTS upg3_ann" -c "DROP ROLE IF EXISTS upg3_bob" \
  -c "CREATE ROLE upg3_ann" -c "CREATE ROLE upg3_bob"
run() { psql -X -q -v ON_ERROR_STOP=1 -d $db "$@"; }
run >/dev/null <<'SQL'
CREATE EXTENSION gpudl VERSION '0.3';
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES ('abe', 'homer'), ('homer', 'bart'), ('homer', 'lisa'), ('bart', 'bo'),
  ('clancy', 'marge'), ('marge', 'bart'), ('marge', 'lisa'), ('homer', 'maggie'), ('marge', 'maggie');
CREATE TABLE gp_pos AS SELECT DISTINCT x.p, y.c FROM parent x JOIN parent y ON x.c = y.p;
CREATE TABLE sib(a text, b text);
INSERT INTO sib SELECT DISTINCT x.c, y.c FROM parent x JOIN parent y ON x.p = y.p AND x.c <> y.c;
GRANT SELECT ON parent, gp_pos, sib TO upg3_ann, upg3_bob;
SELECT gpudl_create_program('family', 'anc(X, Y) :- parent(X, Y). anc(X, Z) :- anc(X, Y), parent(Y, Z).', 'ancestors');
SELECT gpudl_bind('family', 'sib', 'sib');
SELECT count(*) FROM gpudl_learn('family', 'gp', 'gp_pos', max_rules => 2, commit => true);
SELECT count(*) FROM gpudl_mine('family', 'sib', max_body => 2, commit => true);
SELECT gpudl_grant('family', 'upg3_bob', 'use');
SET ROLE upg3_ann;
SELECT gpudl_create_program('anns', 'sib2(X, Y) :- parent(P, X), parent(P, Y), X != Y.');
SELECT gpudl_grant('anns', 'upg3_bob', 'modify');
SELECT count(*) FROM gpudl_learn('anns', 'gp2', 'gp_pos', max_rules => 1, method => 'refine', max_seconds => 20);
SELECT count(*) FROM gpudl_mine('anns', NULL, max_body => 2, commit => true);
RESET ROLE;
SET ROLE upg3_bob;
SELECT gpudl_add_rules('anns', 'cousin(X, Y) :- parent(A, X), parent(B, Y), sib2(A, B).');
RESET ROLE;
SELECT gpudl_create_program('facts', 'e(1, 2). e(2, 3). tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z).');
SQL
[ "$(run -At -c "SELECT extversion FROM pg_extension WHERE extname = 'gpudl'")" = 0.3 ] \
  || { echo "not a 0.3 install"; exit 1; }

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
   SELECT answer, score, rank FROM gpudl_predict('family', 'sib', 'sib(\"bart\", Y)', exclude_known => false, \"limit\" => 0) ORDER BY rank, answer;
   SELECT gpudl_count('facts', 'tc(X, Y)');"
before=$(run -At -c "$state")
[ "$(echo "$before" | grep -c .)" -gt 40 ] || { echo "too little data before the update?"; echo "$before"; exit 1; }
[ "$(run -At -c "SELECT count(*) FROM gpudl.mined_rules")" -gt 0 ] || { echo "no mined rules before the update"; exit 1; }

run -c "ALTER EXTENSION gpudl UPDATE"
latest=$(run -At -c "SELECT default_version FROM pg_available_extensions WHERE name = 'gpudl'")
[ "$(run -At -c "SELECT extversion FROM pg_extension WHERE extname = 'gpudl'")" = "$latest" ] \
  || { echo "not updated to $latest"; exit 1; }
after=$(run -At -c "$state")
if [ "$before" != "$after" ]; then
  echo "the catalog or the answers differ after the update"; diff <(echo "$before") <(echo "$after"); exit 1
fi
# owners still hold: bob may use family but not change it, nor ann's mined rules
out=$(run -At 2>&1 <<'SQL'
SET client_min_messages = notice;
SET ROLE upg3_bob;
DO $$ BEGIN PERFORM gpudl_add_rules('family', 'x(X) :- parent(X, _).'); RAISE NOTICE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'refused'; END $$;
DO $$ BEGIN PERFORM gpudl_mine('family', 'sib', commit => true); RAISE NOTICE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'refused'; END $$;
SELECT 'bob counts ' || gpudl_count('family', 'anc(X, Y)');
RESET ROLE;
SQL
)
{ echo "$out" | grep -q "^bob counts $(run -At -c "SELECT gpudl_count('family', 'anc(X, Y)')")" \
  && [ "$(echo "$out" | grep -c "NOTICE:  refused")" = 2 ]; } \
  || { echo "bob's use after the update: $out"; exit 1; }

# ---------------------------------------------------------------- 0.4 features
# (each 0.4 addition appends a check here that it works on the updated catalog)

# mining with constants (gpudl_mine's new argument), committed, and
# gpudl_predict scoring with the stored constant rules
nconst=$(run -At -c "SELECT count(*) FROM gpudl_mine('family', 'sib', max_body => 2, commit => true, constants => true) WHERE rule LIKE '%\"%'")
[ "$nconst" -gt 0 ] || { echo "0.4: no rules with constants mined"; exit 1; }
[ "$(run -At -c "SELECT count(*) FROM gpudl.mined_rules WHERE program = 'family' AND target = 'sib' AND rule LIKE '%\"%' AND (params->>'constants')::boolean")" = "$nconst" ] \
  || { echo "0.4: the constant rules were not stored"; exit 1; }
used=$(PGOPTIONS="-c client_min_messages=notice" run -At -c "SELECT count(*) FROM gpudl_predict('family', 'sib', 'sib(\"bart\", Y)', exclude_known => false, \"limit\" => 0), unnest(rules) r WHERE r LIKE '%\"%'" 2>&1)
[ "$used" -gt 0 ] 2>/dev/null || { echo "0.4: gpudl_predict did not use the stored constant rules: $used"; exit 1; }
# several GPUs (issue 14): a partitioned run of a 0.3 program gives its 0.3 answer
# (3 partitions on the CPU backend; the settings are GUCs, no catalog change)
parts=$(run -At -c "SET gpudl.device = cpu; SET gpudl.partitions = 3;
  SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) ORDER BY 1, 2;")
[ "$parts" = "$(run -At -c "SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) ORDER BY 1, 2;")" ] \
  || { echo "a partitioned run differs after the update: $parts"; exit 1; }
[ "$(run -At -c "SET gpudl.device = cpu; SET gpudl.partitions = 3; SELECT gpudl_count('facts', 'tc(X, Y)');
  SELECT count(*) FROM gpudl_device_info() WHERE backend = 'partition'" | tail -1)" = 3 ] \
  || { echo "no partition rows in gpudl_device_info after a partitioned run"; exit 1; }

dropdb $db
psql -X -q -d postgres -c "DROP ROLE upg3_ann" -c "DROP ROLE upg3_bob"
echo "update 0.3 -> $latest: catalog, owners, grants, mined rules and answers identical"

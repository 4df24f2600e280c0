#!/usr/bin/env bash
# 21_upgrade_0_5: ALTER EXTENSION gpudl UPDATE from 0.5 keeps every program,
# rule, binding, owner, grant, learn run and mined rule (with constants, and
# anytime runs' parameters) of several roles, and the programs answer and
# predict the same after.  A 0.5 catalog is filled through the current
# library, then updated in place; the sections below the "0.6 features" line
# check what 0.6 adds on the updated catalog (the knowledge graph and its
# parsed rules kept between calls, never stale).
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_upgrade05
dropdb --if-exists $db; createdb $db
psql -X -q -d postgres -c "DROP ROLE IF EXISTS upg5_ann" -c "DROP ROLE IF EXISTS upg5_bob" \
  -c "CREATE ROLE upg5_ann" -c "CREATE ROLE upg5_bob"
run() { psql -X -q -v ON_ERROR_STOP=1 -d $db "$@"; }
run >/dev/null <<'SQL'
CREATE EXTENSION gpudl VERSION '0.5';
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
GRANT SELECT ON parent, gp_pos, sib, "/people/person/gender" TO upg5_ann, upg5_bob;
SELECT gpudl_create_program('family', 'anc(X, Y) :- parent(X, Y). anc(X, Z) :- anc(X, Y), parent(Y, Z).', 'ancestors');
SELECT gpudl_bind('family', 'sib', 'sib');
SELECT gpudl_bind('family', '/people/person/gender', '"/people/person/gender"');
SELECT count(*) FROM gpudl_learn('family', 'gp', 'gp_pos', max_rules => 2, commit => true);
SELECT count(*) FROM gpudl_mine('family', 'sib', max_body => 3, commit => true, constants => true,
  max_body_constants => 1, constants_min_head_coverage => 0, max_seconds => 60);
SELECT gpudl_grant('family', 'upg5_bob', 'use');
SET ROLE upg5_ann;
SELECT gpudl_create_program('anns', 'sib2(X, Y) :- parent(P, X), parent(P, Y), X != Y.');
SELECT gpudl_grant('anns', 'upg5_bob', 'modify');
SELECT count(*) FROM gpudl_learn('anns', 'gp2', 'gp_pos', max_rules => 1, method => 'refine', max_seconds => 20);
SELECT count(*) FROM gpudl_mine('anns', NULL, max_body => 2, commit => true);
RESET ROLE;
SET ROLE upg5_bob;
SELECT gpudl_add_rules('anns', 'cousin(X, Y) :- parent(A, X), parent(B, Y), sib2(A, B).');
RESET ROLE;
SELECT gpudl_create_program('facts', 'e(1, 2). e(2, 3). tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z).');
SQL
[ "$(run -At -c "SELECT extversion FROM pg_extension WHERE extname = 'gpudl'")" = 0.5 ] \
  || { echo "not a 0.5 install"; exit 1; }

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
# one gpudl_mine and one gpudl_predict
[ "$(run -At -c "SELECT count(*) FROM pg_proc WHERE proname IN ('gpudl_mine', 'gpudl_predict')")" = 2 ] \
  || { echo "more than one gpudl_mine or gpudl_predict after the update"; exit 1; }
# owners still hold: bob may use family but not change it
out=$(run -At 2>&1 <<'SQL'
SET client_min_messages = notice;
SET ROLE upg5_bob;
DO $$ BEGIN PERFORM gpudl_mine('family', 'sib', commit => true, max_seconds => 10); RAISE NOTICE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'refused'; END $$;
SELECT 'bob counts ' || gpudl_count('family', 'anc(X, Y)');
RESET ROLE;
SQL
)
{ echo "$out" | grep -q "^bob counts $(run -At -c "SELECT gpudl_count('family', 'anc(X, Y)')")" \
  && [ "$(echo "$out" | grep -c "NOTICE:  refused")" = 1 ]; } \
  || { echo "bob's use after the update: $out"; exit 1; }

# ---------------------------------------------------------------- 0.6 features
# (each 0.6 addition appends a check here that it works on the updated catalog)

# the graph kept between calls once its tables' changes are counted
run -At >/dev/null -c "SELECT gpudl_load('parent'), gpudl_load('sib'), gpudl_load('\"/people/person/gender\"')"
q1="SELECT answer, score, rank FROM gpudl_predict('family', 'sib', 'sib(\"bart\", Y)', exclude_known => false, \"limit\" => 0) ORDER BY rank, answer"
out=$(run -At <<SQL
$q1;
$q1;
SELECT 'hits ' || hits || ' rules ' || (rules > 0)::text FROM gpudl_kg_cache_status();
SQL
)
echo "$out" | grep -q "^hits 1 rules true$" || { echo "0.6: the second call did not reuse the graph: $out"; exit 1; }
[ -n "$(run -At -c "$q1")" ] || { echo "0.6: no answers"; exit 1; }
# the stored rules' changes are counted: after a DELETE the same session
# parses what is left, and answers as a session that keeps nothing
out=$(run -At <<SQL
$q1;
DELETE FROM gpudl.mined_rules WHERE program = 'family' AND target = 'sib' AND rule LIKE '%"%';
SELECT '--';
$q1;
SELECT 'rules ' || rules FROM gpudl_kg_cache_status();
SQL
)
left=$(run -At -c "SELECT count(*) FROM gpudl.mined_rules WHERE program = 'family' AND target = 'sib'")
echo "$out" | grep -q "^rules $left$" || { echo "0.6: the rules kept are not the $left stored: $out"; exit 1; }
fresh=$(PGOPTIONS="$PGOPTIONS -c gpudl.kg_cache=off" run -At -c "$q1")
[ "$(echo "$out" | sed -n '/^--$/,$p' | sed '1d;$d')" = "$fresh" ] \
  || { echo "0.6: the session kept answers of deleted rules"; exit 1; }
[ "$(run -At -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'gpudl.mined_rules'::regclass AND tgname = 'gpudl_cache_invalidate'")" = 1 ] \
  || { echo "0.6: no change trigger on gpudl.mined_rules"; exit 1; }

dropdb $db
psql -X -q -d postgres -c "DROP ROLE upg5_ann" -c "DROP ROLE upg5_bob"
echo "update 0.5 -> $latest: catalog, owners, grants, mined rules and answers identical; graphs kept between calls"

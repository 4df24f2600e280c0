#!/usr/bin/env bash
# 11_upgrade_0_2: ALTER EXTENSION gpudl UPDATE from 0.2 keeps every program,
# rule, binding, owner, grant and learn run of several roles, and the
# programs answer the same after.  A 0.2 catalog is filled through the
# current library (which must keep working on it until the update), then
# updated in place.  Sections below the "0.3 features" line check that what
# 0.3 adds works on the updated catalog.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_upgrade02
source "$(dirname "$0")/lib/upgrade.sh"
upgrade_setup upg2_ann upg2_bob
run >/dev/null <<'SQL'
CREATE EXTENSION gpudl VERSION '0.2';
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES ('abe', 'homer'), ('homer', 'bart'), ('homer', 'lisa'), ('bart', 'bo'),
  ('clancy', 'marge'), ('marge', 'bart'), ('marge', 'lisa');
CREATE TABLE gp_pos AS SELECT DISTINCT x.p, y.c FROM parent x JOIN parent y ON x.c = y.p;
GRANT SELECT ON parent, gp_pos TO upg2_ann, upg2_bob;
SELECT gpudl_create_program('family', 'anc(X, Y) :- parent(X, Y). anc(X, Z) :- anc(X, Y), parent(Y, Z).', 'ancestors');
SELECT count(*) FROM gpudl_learn('family', 'gp', 'gp_pos', max_rules => 2, commit => true);
SELECT gpudl_grant('family', 'upg2_bob', 'use');
SET ROLE upg2_ann;
SELECT gpudl_create_program('anns', 'sib(X, Y) :- parent(P, X), parent(P, Y), X != Y.');
SELECT gpudl_grant('anns', 'upg2_bob', 'modify');
SELECT count(*) FROM gpudl_learn('anns', 'gp2', 'gp_pos', max_rules => 1);
RESET ROLE;
SET ROLE upg2_bob;
SELECT gpudl_add_rules('anns', 'cousin(X, Y) :- parent(A, X), parent(B, Y), sib(A, B).');
RESET ROLE;
SELECT gpudl_create_program('facts', 'e(1, 2). e(2, 3). tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z).');
SQL
upgrade_check_installed 0.2

state="SELECT name, description, version, owner, acl, created_at, updated_at FROM gpudl.programs ORDER BY name;
   SELECT id, program, rule, head, learned, enabled, weight, created_at FROM gpudl.rules ORDER BY id;
   SELECT program, predicate, relation::text, columns FROM gpudl.bindings ORDER BY 1, 2;
   SELECT id, program, target, status, device, params, run_by, started_at, finished_at, epochs, final_loss, message FROM gpudl.learn_runs ORDER BY id;
   SELECT run_id, rank, rule, probability, loss, committed FROM gpudl.learned_rules ORDER BY 1, 2;
   SELECT * FROM gpudl.program_privileges ORDER BY 1, 2, 3;
   SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT * FROM gpudl_query('family', 'gp(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT * FROM gpudl_query('anns', 'cousin(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT gpudl_count('facts', 'tc(X, Y)');"
upgrade_snapshot 30

upgrade_update
# owners still hold: bob may use family but not change it
out=$(run -At <<'SQL'
SET ROLE upg2_bob;
DO $$ BEGIN PERFORM gpudl_add_rules('family', 'x(X) :- parent(X, _).'); RAISE NOTICE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'refused'; END $$;
SELECT 'bob counts ' || gpudl_count('family', 'anc(X, Y)');
RESET ROLE;
SQL
)
grep -q <<<"$out" "^bob counts $(run -At -c "SELECT gpudl_count('family', 'anc(X, Y)')")" \
  || { echo "bob's use after the update: $out"; exit 1; }

# ---------------------------------------------------------------- 0.3 features
# (each 0.3 addition appends a check here that it works on the updated catalog)

# mining and prediction (issue 12): the owner mines family's graph and
# commits the rules into gpudl.mined_rules; bob (use) predicts with them but
# may not commit; ann (no grant on family) may not mine it
out=$(run -At <<'SQL'
SELECT 'mined ' || count(*) FROM gpudl_mine('family', 'anc', max_body => 2, commit => true);
SELECT 'stored ' || count(*) FROM gpudl.mined_rules WHERE program = 'family' AND target = 'anc';
SET ROLE upg2_bob;
SELECT 'bob sees ' || count(*) FROM gpudl.mined_rules WHERE program = 'family';
SELECT 'bob predicts ' || string_agg(answer, ',' ORDER BY rank, answer)
  FROM gpudl_predict('family', 'anc', 'anc("abe", Y)', exclude_known => false, "limit" => 0);
RESET ROLE;
SQL
)
stored=$(echo "$out" | sed -n 's/^stored //p')
{ [ -n "$stored" ] && [ "$stored" -gt 0 ] && grep -q <<<"$out" "^mined $stored$" \
  && grep -q <<<"$out" "^bob sees $stored$" && grep -q <<<"$out" "^bob predicts .*bart" \
  && [ "$(run -At -c "SELECT count(*) FROM gpudl.mined_rules")" = "$stored" ]; } \
  || { echo "gpudl_mine / gpudl_predict after the update: $out"; exit 1; }
notices=$(run -At 2>&1 <<'SQL'
SET client_min_messages = notice;
SET ROLE upg2_bob;
DO $$ BEGIN PERFORM gpudl_mine('family', 'anc', commit => true); RAISE NOTICE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'bob commit refused'; END $$;
RESET ROLE;
SET ROLE upg2_ann;
DO $$ BEGIN PERFORM gpudl_predict('family', 'anc', 'anc("abe", Y)'); RAISE NOTICE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'ann predict refused'; END $$;
RESET ROLE;
SQL
)
{ grep -q <<<"$notices" "bob commit refused" && grep -q <<<"$notices" "ann predict refused"; } \
  || { echo "privileges of gpudl_mine / gpudl_predict after the update: $notices"; exit 1; }
# rule learning (issue 15): the new arguments after the update — a ternary
# target, types, the time budget, noise, the method — and the timed_out flag
out=$(run -At <<'SQL'
SET client_min_messages = warning;
CREATE TABLE trip(p text, a text, b text);
INSERT INTO trip SELECT x.p, x.c, y.c FROM parent x JOIN parent y ON x.p = y.p AND x.c <> y.c;
SELECT gpudl_bind('family', 'trip', 'trip');
SELECT 'rule ' || rule FROM gpudl_learn('family', 'sib3', 'SELECT p, a, b FROM trip', 'SELECT p, a, a FROM trip',
  max_body => 4, max_seconds => 30, noise => 0, types => 'sib3(person, person, person); parent(person, person)',
  max_vars => 5, method => 'refine') ORDER BY rank;
SELECT 'flag ' || timed_out || ' ' || (params->>'method') FROM gpudl.learn_runs ORDER BY id DESC LIMIT 1;
SELECT 'default ' || (pg_get_function_arguments('gpudl_learn(text,text,text,text,int,int,int,float8,boolean,int,int,boolean,text,float8,float8,text,int,text)'::regprocedure) LIKE '%negative_sampling text DEFAULT ''closed_world''%');
SQL
)
grep -q <<<"$out" "^rule sib3(X, Y, Z) :- " || { echo "0.3 learning after the update: $out"; exit 1; }
grep -q <<<"$out" "^flag false refine$" || { echo "0.3 learn_runs after the update: $out"; exit 1; }
grep -q <<<"$out" "^default true$" || { echo "0.3 gpudl_learn defaults after the update: $out"; exit 1; }

upgrade_cleanup upg2_ann upg2_bob
echo "update 0.2 -> $latest: catalog, owners, grants and answers identical"

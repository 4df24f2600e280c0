#!/usr/bin/env bash
# 07_upgrade: ALTER EXTENSION gpudl UPDATE from 0.1 (to the latest version) keeps every program,
# rule (learned ones too), binding and learn run, gives them owners, and the
# 0.2 functions work on them.  A 0.1 catalog is filled through the current
# library (which must keep working on it until the update), then updated in
# place; catalog rows, counts and query answers must be the same after.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_upgrade
source "$(dirname "$0")/lib/upgrade.sh"
upgrade_setup upg_bob
run >/dev/null <<'SQL'
CREATE EXTENSION gpudl VERSION '0.1';
CREATE TABLE parent(p text, c text);
CREATE TABLE people(name text, mother text);
INSERT INTO parent VALUES ('abe', 'homer'), ('homer', 'bart'), ('homer', 'lisa'), ('bart', 'bo'),
  ('clancy', 'marge'), ('marge', 'bart'), ('marge', 'lisa');
INSERT INTO people VALUES ('homer', 'mona'), ('bart', 'marge'), ('lisa', 'marge');
CREATE TABLE gp_pos AS SELECT DISTINCT x.p, y.c FROM parent x JOIN parent y ON x.c = y.p;
SELECT gpudl_create_program('family', 'anc(X, Y) :- parent(X, Y). anc(X, Z) :- anc(X, Y), parent(Y, Z).', 'ancestors');
SELECT gpudl_create_program('moms');
SELECT gpudl_bind('moms', 'mom', 'people', ARRAY['mother', 'name']);
SELECT gpudl_add_rules('moms', 'm(X, Y) :- mom(X, Y).  gm(X, Z) :- mom(X, Y), mom(Y, Z).');
SELECT gpudl_create_program('facts', 'e(1, 2). e(2, 3). tc(X, Y) :- e(X, Y). tc(X, Z) :- tc(X, Y), e(Y, Z).');
INSERT INTO gpudl.rules(program, rule, enabled) VALUES ('facts', 'e(3, 4).', false);
-- learning history: a committed run, a plain run, a failed run
SELECT count(*) FROM gpudl_learn('family', 'gp', 'gp_pos', max_rules => 2, commit => true);
SELECT count(*) FROM gpudl_learn('family', 'gp', 'SELECT * FROM gp_pos LIMIT 3', max_rules => 1, seed => 7);
DO $$ BEGIN PERFORM * FROM gpudl_learn('family', 'gp', 'SELECT 1, 2, 3'); EXCEPTION WHEN others THEN NULL; END $$;
SELECT gpudl_commit_rule('moms', 'gmm(X, Y) :- m(X, Y).');
SQL
upgrade_check_installed 0.1
[ "$(run -At -c "SELECT count(*) FROM gpudl.learn_runs WHERE status = 'failed'")" = 1 ] \
  || { echo "the failed run was not recorded on 0.1"; exit 1; }

# everything a user had, and what the programs answer
state="SELECT name, description, version, created_at, updated_at FROM gpudl.programs ORDER BY name;
   SELECT id, program, rule, head, learned, enabled, weight, created_at FROM gpudl.rules ORDER BY id;
   SELECT program, predicate, relation::text, columns FROM gpudl.bindings ORDER BY 1, 2;
   SELECT id, program, target, status, device, params, started_at, finished_at, epochs, final_loss, message FROM gpudl.learn_runs ORDER BY id;
   SELECT run_id, rank, rule, probability, loss, committed FROM gpudl.learned_rules ORDER BY 1, 2;
   SELECT (SELECT count(*) FROM gpudl.programs), (SELECT count(*) FROM gpudl.rules),
          (SELECT count(*) FROM gpudl.rules WHERE learned), (SELECT count(*) FROM gpudl.bindings),
          (SELECT count(*) FROM gpudl.learn_runs), (SELECT count(*) FROM gpudl.learned_rules);
   SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT * FROM gpudl_query('family', 'gp(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT * FROM gpudl_query('moms', 'gm(X, Y)') AS t(a text, b text) ORDER BY 1, 2;
   SELECT gpudl_count('facts', 'tc(X, Y)'), gpudl_count('moms', 'gmm(X, Y)');
   SELECT * FROM gpudl_explain('family');"
upgrade_snapshot 40

upgrade_update

# owners: the extension's owner owns what 0.1 made and ran
owners=$(run -At -c "SELECT (SELECT count(*) FROM gpudl.programs WHERE owner::oid = e.extowner),
                            (SELECT count(*) FROM gpudl.learn_runs WHERE run_by::oid = e.extowner),
                            (SELECT count(*) FROM gpudl.programs WHERE acl IS NOT NULL)
                     FROM pg_extension e WHERE e.extname = 'gpudl'")
[ "$owners" = "3|3|0" ] || { echo "owners after the update: $owners (want 3|3|0)"; exit 1; }

# the 0.2 functions work on the updated catalog
out=$(run -At <<'SQL'
SET ROLE upg_bob;
DO $$ BEGIN PERFORM gpudl_count('family', 'anc(X, Y)'); RAISE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'refused'; END $$;
RESET ROLE;
SELECT gpudl_grant('family', 'upg_bob', 'use');
GRANT SELECT ON parent TO upg_bob;
SET ROLE upg_bob;
SELECT 'bob counts ' || gpudl_count('family', 'anc(X, Y)');
SELECT 'bob sees rules ' || count(*) FROM gpudl.rules WHERE program = 'family';
SELECT 'bob sees runs ' || count(*) FROM gpudl.learn_runs;
RESET ROLE;
SELECT gpudl_revoke('family', 'upg_bob', 'use');
SELECT 'privileges ' || count(*) FROM gpudl.program_privileges;
SELECT 'new rule ids follow ' || bool_and(id > (SELECT max(id) FROM gpudl.rules WHERE program <> 'family' OR NOT learned))
FROM gpudl_add_rules('family', 'root(X) :- parent(X, _), !haschild(X). haschild(Y) :- parent(_, Y).') AS id;
SELECT 'version bumped ' || (version > 1) FROM gpudl.programs WHERE name = 'family';
SELECT 'new program owner ' || owner FROM gpudl.programs WHERE name = 'family';
SQL
)
want_count=$(run -At -c "SELECT gpudl_count('family', 'anc(X, Y)')")
want_rules=$(echo "$before" | awk -F'|' 'NF == 8 && $2 == "family"' | wc -l)
for line in "bob counts $want_count" "bob sees rules $want_rules" "bob sees runs 0" "privileges 0" \
            "new rule ids follow true" "version bumped true" "new program owner"; do
  grep -q <<<"$out" "^$line" || { echo "missing after the update: '$line'"; echo "$out"; exit 1; }
done
upgrade_cleanup upg_bob
echo "update 0.1 -> $latest: catalog and answers identical, owners set, grants work"

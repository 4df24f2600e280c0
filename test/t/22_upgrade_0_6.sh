#!/usr/bin/env bash
# 22_upgrade_0_6: ALTER EXTENSION gpudl UPDATE from 0.6 keeps every program,
# rule, binding, owner, grant, learn run and mined rule of several roles, and
# the programs answer and predict the same after.  Before the update, the
# current library on a 0.6 catalog refuses mode 'maintain' with a hint and
# writes nothing; after it, the sections below the "0.7 features" line check
# that maintained tables work on the updated catalog.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"

# a 0.6 catalog under the 0.7 library: 'maintain' is refused, nothing is written
dropdb --if-exists gpudl_upgrade06_old; createdb gpudl_upgrade06_old
out=$(psql -X -q -d gpudl_upgrade06_old 2>&1 <<'SQL'
CREATE EXTENSION gpudl VERSION '0.6';
CREATE TABLE e(a int, b int);
INSERT INTO e VALUES (1, 2);
SELECT gpudl_create_program('p', 'tc(X, Y) :- e(X, Y).');
SELECT gpudl_materialize('p', 'tc', 'kept', mode => 'maintain');
SELECT 'kept exists: ' || (to_regclass('kept') IS NOT NULL)::text;
SELECT 'triggers: ' || count(*) FROM pg_trigger WHERE tgrelid = 'e'::regclass;
SQL
)
grep -q <<<"$out" "maintained tables need gpudl 0.7's catalog" \
  && grep -q <<<"$out" "HINT:  Run ALTER EXTENSION gpudl UPDATE." \
  && grep -q <<<"$out" "kept exists: false" && grep -q <<<"$out" "triggers: 0" \
  || { echo "0.6 catalog: 'maintain' was not refused cleanly: $out"; exit 1; }
dropdb gpudl_upgrade06_old

db=gpudl_upgrade06
source "$(dirname "$0")/lib/upgrade.sh"
upgrade_fill_and_update 0.6 upg6 'max_body => 3, commit => true, constants => true,
  max_body_constants => 1, constants_min_head_coverage => 0, max_seconds => 60'

# ---------------------------------------------------------------- 0.7 features
# (each 0.7 addition appends a check here that it works on the updated catalog)

# a table kept equal to a program's relation while its base table changes
diff_sql="SELECT (SELECT count(*) FROM (TABLE anc_kept EXCEPT SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text)) d)
           + (SELECT count(*) FROM (SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) EXCEPT TABLE anc_kept) d)"
run -At >/dev/null -c "SELECT gpudl_materialize('family', 'anc', 'anc_kept', mode => 'maintain')"
run -At >/dev/null -c "INSERT INTO parent VALUES ('bo', 'newborn')" -c "DELETE FROM parent WHERE p = 'clancy'"
[ "$(run -At -c "$diff_sql")" = 0 ] || { echo "0.7: the maintained table differs from the relation"; exit 1; }
[ "$(run -At -c "SELECT mode || ' ' || changes FROM gpudl.maintained WHERE target = 'anc_kept'::regclass")" = "incremental 2" ] \
  || { echo "0.7: gpudl.maintained: $(run -At -c "TABLE gpudl.maintained")"; exit 1; }
# a rule edit of the updated program recomputes it
run -At >/dev/null -c "SELECT gpudl_add_rules('family', 'anc(X, X) :- parent(X, _).')"
[ "$(run -At -c "$diff_sql")" = 0 ] || { echo "0.7: the table is stale after a rule edit"; exit 1; }
run -At >/dev/null -c "DROP TABLE anc_kept"
[ "$(run -At -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'parent'::regclass")" = 0 ] \
  || { echo "0.7: triggers left on parent after the target was dropped"; exit 1; }

upgrade_cleanup upg6_ann upg6_bob
echo "update 0.6 -> $latest: catalog, owners, grants, mined rules and answers identical; maintained tables work"

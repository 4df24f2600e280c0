#!/usr/bin/env bash
# 25_upgrade_0_7: ALTER EXTENSION gpudl UPDATE from 0.7 keeps every program,
# rule, binding, owner, grant, learn run, mined rule and maintained table of
# several roles, and the programs answer and predict the same after.  Below
# the "0.8 features" line: the ids of mined rules are cached per session,
# the index by program no longer deduplicates, and a committing mining run
# on the updated catalog stores its rules after
# the old ones, in the run's order.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"

db=gpudl_upgrade07
source "$(dirname "$0")/lib/upgrade.sh"
upgrade_fill_and_update 0.7 upg7 'max_body => 3, commit => true, constants => true,
  max_body_constants => 1, constants_min_head_coverage => 0, max_seconds => 60' \
  "SELECT gpudl_materialize('family', 'anc', 'anc_kept', mode => 'maintain');"

# the 0.7 catalog's maintained table is still kept: equal to its relation
# after the update, and after changes of its base table on the new catalog
diff_sql="SELECT (SELECT count(*) FROM (TABLE anc_kept EXCEPT SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text)) d)
           + (SELECT count(*) FROM (SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) EXCEPT TABLE anc_kept) d)"
[ "$(run -At -c "SELECT count(*) FROM anc_kept")" -gt 10 ] || { echo "0.7: the maintained table is empty"; exit 1; }
[ "$(run -At -c "$diff_sql")" = 0 ] || { echo "0.7 -> 0.8: the maintained table differs after the update"; exit 1; }
run -At >/dev/null -c "INSERT INTO parent VALUES ('bo', 'newborn')" -c "DELETE FROM parent WHERE p = 'clancy'"
[ "$(run -At -c "$diff_sql")" = 0 ] || { echo "0.7 -> 0.8: the maintained table is stale after changes"; exit 1; }
[ "$(run -At -c "SELECT changes FROM gpudl.maintained WHERE target = 'anc_kept'::regclass")" = 2 ] \
  || { echo "0.7 -> 0.8: gpudl.maintained: $(run -At -c "TABLE gpudl.maintained")"; exit 1; }

# ---------------------------------------------------------------- 0.8 features
# (each 0.8 addition appends a check here that it works on the updated catalog)

# the sequence of mined rule ids takes 1,000 at a time
[ "$(run -At -c "SELECT cache_size FROM pg_sequences WHERE schemaname = 'gpudl' AND sequencename = 'mined_rules_id_seq'")" = 1000 ] \
  || { echo "0.8: the id sequence is not cached"; exit 1; }
[ "$(run -At -c "SELECT reloptions FROM pg_class WHERE oid = 'gpudl.mined_rules_program_idx'::regclass")" = "{deduplicate_items=off}" ] \
  || { echo "0.8: the index by program still deduplicates"; exit 1; }
# a run committed on the updated catalog: its rules after the 0.7 ones, in
# the run's order (the rules gpudl_mine returns, in the same order)
out=$(run -At <<'SQL'
SELECT max(id) AS old_max FROM gpudl.mined_rules \gset
CREATE TEMP TABLE mined AS SELECT row_number() OVER () AS n, * FROM gpudl_mine('family', 'sib', max_body => 2, commit => true);
SELECT 'ids after: ' || (min(id) > :old_max) FROM gpudl.mined_rules WHERE program = 'family' AND target = 'sib';
SELECT 'same order: ' || (array_agg(rule ORDER BY id) = (SELECT array_agg(rule ORDER BY n) FROM mined))
  FROM gpudl.mined_rules WHERE program = 'family' AND target = 'sib';
SELECT 'rows: ' || count(*) FROM mined;
SQL
)
grep -q <<<"$out" "ids after: true" && grep -q <<<"$out" "same order: true" \
  && ! grep -q <<<"$out" "rows: 0$" || { echo "0.8: mined rules stored wrongly: $out"; exit 1; }

upgrade_cleanup upg7_ann upg7_bob
echo "update 0.7 -> $latest: catalog, owners, grants, mined rules, maintained tables and answers identical; mined rule ids cached"

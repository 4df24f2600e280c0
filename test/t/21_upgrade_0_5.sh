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
source "$(dirname "$0")/lib/upgrade.sh"
upgrade_fill_and_update 0.5 upg5 'max_body => 3, commit => true, constants => true,
  max_body_constants => 1, constants_min_head_coverage => 0, max_seconds => 60'

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
grep -q <<<"$out" "^hits 1 rules true$" || { echo "0.6: the second call did not reuse the graph: $out"; exit 1; }
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
grep -q <<<"$out" "^rules $left$" || { echo "0.6: the rules kept are not the $left stored: $out"; exit 1; }
fresh=$(PGOPTIONS="$PGOPTIONS -c gpudl.kg_cache=off" run -At -c "$q1")
[ "$(echo "$out" | sed -n '/^--$/,$p' | sed '1d;$d')" = "$fresh" ] \
  || { echo "0.6: the session kept answers of deleted rules"; exit 1; }
[ "$(run -At -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'gpudl.mined_rules'::regclass AND tgname = 'gpudl_cache_invalidate'")" = 1 ] \
  || { echo "0.6: no change trigger on gpudl.mined_rules"; exit 1; }

upgrade_cleanup upg5_ann upg5_bob
echo "update 0.5 -> $latest: catalog, owners, grants, mined rules and answers identical; graphs kept between calls"

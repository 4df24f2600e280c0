#!/usr/bin/env bash
# 20_upgrade_0_4: ALTER EXTENSION gpudl UPDATE from 0.4 keeps every program,
# rule, binding, owner, grant, learn run and mined rule (with constants) of
# several roles, and the programs answer and predict the same after.  A 0.4
# catalog is filled through the current library, then updated in place; the
# sections below the "0.5 features" line check what 0.5 adds on the updated
# catalog (the new arguments of gpudl_mine and gpudl_predict).
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_upgrade04
source "$(dirname "$0")/lib/upgrade.sh"
upgrade_fill_and_update 0.4 upg4 'max_body => 2, commit => true, constants => true'

# ---------------------------------------------------------------- 0.5 features
# (each 0.5 addition appends a check here that it works on the updated catalog)

# mining with the constants' own bounds and a budget, committed; the
# parameters record the levels completed
n=$(run -At -c "SELECT count(*) FROM gpudl_mine('family', 'sib', max_body => 3, commit => true, constants => true,
                  max_body_constants => 1, constants_min_head_coverage => 0, max_seconds => 60)")
[ "$n" -gt 0 ] || { echo "0.5: nothing mined with the new arguments"; exit 1; }
[ "$(run -At -c "SELECT DISTINCT params->>'timed_out' || ' ' || (params->>'complete_body') || ' ' || (params->>'max_body_constants')
                   FROM gpudl.mined_rules WHERE program = 'family' AND target = 'sib'")" = "false 3 1" ] \
  || { echo "0.5: the stored parameters do not record the run"; exit 1; }
# prediction with rules_shown: the same ranks, at most one rule text per answer
full=$(run -At -c "SELECT answer, score, rank FROM gpudl_predict('family', 'sib', 'sib(\"bart\", Y)', exclude_known => false, \"limit\" => 0) ORDER BY rank, answer")
one=$(run -At -c "SELECT answer, score, rank FROM gpudl_predict('family', 'sib', 'sib(\"bart\", Y)', exclude_known => false, \"limit\" => 0, rules_shown => 1) ORDER BY rank, answer")
[ -n "$full" ] && [ "$full" = "$one" ] || { echo "0.5: rules_shown changed the ranking: $full / $one"; exit 1; }
[ "$(run -At -c "SELECT max(cardinality(rules)) FROM gpudl_predict('family', 'sib', 'sib(\"bart\", Y)', exclude_known => false, \"limit\" => 0, rules_shown => 1)")" = 1 ] \
  || { echo "0.5: rules_shown => 1 showed more than one rule"; exit 1; }
# ann's mined rules are untouched by family's new run
[ "$(run -At -c "SELECT count(*) FROM gpudl.mined_rules WHERE program = 'anns'")" = "$anns_mined" ] \
  || { echo "0.5: family's mining changed ann's mined rules"; exit 1; }

upgrade_cleanup upg4_ann upg4_bob
echo "update 0.4 -> $latest: catalog, owners, grants, mined rules and answers identical"

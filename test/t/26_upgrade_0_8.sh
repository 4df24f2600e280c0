#!/usr/bin/env bash
# 26_upgrade_0_8: ALTER EXTENSION gpudl UPDATE from 0.8 keeps every program,
# rule, binding, owner, grant, learn run, mined rule and maintained table of
# several roles, and the programs answer and predict the same after.  Below
# the "0.9 features" line: gpudl_fit_weights learns weights from the 0.8
# catalog's stored rules, gpudl_predict ranks with them ('weighted'), and a
# grantee of the program (not its owner) may fit and predict.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"

db=gpudl_upgrade08
source "$(dirname "$0")/lib/upgrade.sh"
upgrade_fill_and_update 0.8 upg8 'max_body => 2, commit => true, constants => true,
  max_body_constants => 1, constants_min_head_coverage => 0' \
  "SELECT gpudl_materialize('family', 'anc', 'anc_kept', mode => 'maintain');
   CREATE TABLE sib_held(rel text, s text, o text);
   INSERT INTO sib_held VALUES ('sib', 'bart', 'lisa'), ('sib', 'maggie', 'bart'), ('sib', 'lisa', 'maggie');
   GRANT SELECT ON sib_held TO upg8_bob;"

# the 0.8 catalog's maintained table is still kept after the update
diff_sql="SELECT (SELECT count(*) FROM (TABLE anc_kept EXCEPT SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text)) d)
           + (SELECT count(*) FROM (SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) EXCEPT TABLE anc_kept) d)"
run -At >/dev/null -c "INSERT INTO parent VALUES ('lisa', 'zia')"
[ "$(run -At -c "$diff_sql")" = 0 ] || { echo "0.8 -> 0.9: the maintained table is stale after a change"; exit 1; }

# ---------------------------------------------------------------- 0.9 features
# (each 0.9 addition appends a check here that it works on the updated catalog)

# weights fitted on held-out sibling pairs from the stored (0.8) rules, then
# a prediction with them: the same answers as kind_noisy_or's, ranked by
# the weights; as the program's grantee too
out=$(run -At <<'SQL'
SELECT gpudl_fit_weights('family', 'sib_held', smoothing => 1) AS w \gset
SELECT 'weights: ' || array_length(:'w'::float8[], 1);
SELECT 'same answers: ' || (
  (SELECT array_agg(answer ORDER BY answer) FROM gpudl_predict('family', 'sib', 'sib("bart", Y)', aggregation => 'weighted',
     weights => :'w'::float8[], smoothing => 1, "limit" => 0, exclude_known => false))
  = (SELECT array_agg(answer ORDER BY answer) FROM gpudl_predict('family', 'sib', 'sib("bart", Y)', aggregation => 'kind_noisy_or',
     smoothing => 1, "limit" => 0, exclude_known => false)));
SET ROLE upg8_bob;
SELECT 'grantee: ' || (gpudl_fit_weights('family', 'sib_held', smoothing => 1) = :'w'::float8[]);
RESET ROLE;
SQL
)
grep -q <<<"$out" "weights: 24" && grep -q <<<"$out" "same answers: true" && grep -q <<<"$out" "grantee: true" \
  || { echo "0.9: fitting or predicting with weights on the updated catalog: $out"; exit 1; }

upgrade_cleanup upg8_ann upg8_bob
echo "update 0.8 -> $latest: catalog, owners, grants, mined rules, maintained tables and answers identical; weights fitted on the stored rules"

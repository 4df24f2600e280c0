#!/usr/bin/env bash
# bench/kg/auto.sh — link prediction on any knowledge graph with settings
# chosen on its VALID split only, never on test: so a graph gpudl has not
# seen is scored by the same procedure that chose Family's and Kinship's
# settings (bench/kg/RESULTS.md).
#
#   bash bench/kg/auto.sh NAME [NAME ...]     # DATA_ROOT/NAME/{facts,train,valid,test}.txt
#
# 1. the rule language: each mining candidate is mined and scored on the
#    valid split (eval.sh, aggregation max); the best valid MRR wins (the
#    earlier candidate on a tie: they are listed shortest rules first);
# 2. the scoring: the winner's rules are mined again and scored on valid
#    with each aggregation of AGGS and each smoothing of SMOOTHS (stored
#    rules, eval.sh PREDICT_ONLY=1);
# 3. the test split is scored once, with the chosen language and scoring.
#
# Mining candidates (CANDIDATES, space-separated; each a comma-separated
# list of eval.sh settings):
#   MAX_BODY=2,MIN_CONF=0.1                      won Family's valid split
#   MAX_BODY=3,MIN_CONF=0.4                      won Kinship's
#   MAX_BODY=3,MIN_CONF=0.1,CONSTANTS=true,MAX_BODY_CONST=1,CONST_HC=0,MIN_SUPPORT=5
#       AnyBURL's language: cyclic rules of up to three atoms beside rules
#       with constants of one atom, those bounded by support and confidence
# all with standard confidence (smoothing 20 while the language is chosen).
# AGGS: "max cluster_noisy_or kind_noisy_or weighted" (weighted: its weights fitted
# on valid, scored there in two folds by relation, eval.sh); SMOOTHS: "20 5 1".
# Connection as for eval.sh; the graph is loaded once per name (KEEP/REUSE).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
read -r -a cands <<<"${CANDIDATES:-MAX_BODY=2,MIN_CONF=0.1 MAX_BODY=3,MIN_CONF=0.4 MAX_BODY=3,MIN_CONF=0.1,CONSTANTS=true,MAX_BODY_CONST=1,CONST_HC=0,MIN_SUPPORT=5}"
read -r -a aggs <<<"${AGGS:-max cluster_noisy_or kind_noisy_or weighted}"
read -r -a smooths <<<"${SMOOTHS:-20 5 1}"
[ $# -gt 0 ] || { echo "usage: auto.sh NAME [NAME ...]" >&2; exit 2; }

# the "overall:" table's data row of eval.sh's output: queries | mrr | hits1 | hits10 | derived
valid_mrr() { awk '/^overall:/ {o = 1; next} o && $1 ~ /^[0-9]+$/ && $2 == "|" {print $3; exit}'; }
# eval.sh with a candidate's settings (commas to spaces) and more settings
run_eval() { local c=$1; shift; env ${c//,/ } CONF=std "$@" bash "$here/eval.sh" "$name"; }

for name in "$@"; do
  best_mrr=-1 best="" reuse=0
  for c in "${cands[@]}"; do
    out=$(run_eval "$c" SPLIT=valid AGG=max SMOOTH=20 KEEP=1 REUSE=$reuse)
    reuse=1
    mrr=$(echo "$out" | valid_mrr)
    [ -n "$mrr" ] || { echo "$out"; echo "auto.sh: no valid MRR for $name ($c)" >&2; exit 1; }
    echo "== $name valid: $c, aggregation max: MRR $mrr ($(echo "$out" | grep -E '^(mining|prediction):' | tr '\n' ' '))"
    if awk -v a="$mrr" -v b="$best_mrr" 'BEGIN {exit !(a > b)}'; then best_mrr=$mrr best=$c; fi
  done
  best_agg=max best_smooth=20
  if [ ${#aggs[@]} -gt 1 ] || [ ${#smooths[@]} -gt 1 ] || [ "${aggs[0]}" != max ] || [ "${smooths[0]}" != 20 ]; then
    # the winner's rules stored again, then each scoring on them
    run_eval "$best" SPLIT=valid AGG=max SMOOTH=20 KEEP=1 REUSE=1 >/dev/null
    best_mrr=-1
    for a in "${aggs[@]}"; do
      for sm in "${smooths[@]}"; do
        mrr=$(run_eval "$best" SPLIT=valid AGG="$a" SMOOTH="$sm" KEEP=1 REUSE=1 PREDICT_ONLY=1 | valid_mrr)
        [ -n "$mrr" ] || { echo "auto.sh: no valid MRR for $name ($best, $a, smoothing $sm)" >&2; exit 1; }
        echo "== $name valid: $best, aggregation $a, smoothing $sm: MRR $mrr"
        if awk -v a="$mrr" -v b="$best_mrr" 'BEGIN {exit !(a > b)}'; then best_mrr=$mrr best_agg=$a best_smooth=$sm; fi
      done
    done
  fi
  echo "== $name: chosen on valid: $best, aggregation $best_agg, smoothing $best_smooth (valid MRR $best_mrr); test split:"
  run_eval "$best" SPLIT=test AGG="$best_agg" SMOOTH="$best_smooth" REUSE=1 KEEP="${KEEP:-0}"
done

#!/usr/bin/env bash
# bench/kg/auto.sh — link prediction on any knowledge graph with settings
# chosen on its VALID split only, never on test: so a graph gpudl has not
# seen is scored by the same procedure that chose Family's and Kinship's
# settings (bench/kg/RESULTS.md).  For each candidate setting it runs
# eval.sh with SPLIT=valid, keeps the one with the best valid MRR (the
# shorter rules on a tie), then runs eval.sh once on the test split with it.
#
#   bash bench/kg/auto.sh NAME [NAME ...]     # DATA_ROOT/NAME/{facts,train,valid,test}.txt
#
# Candidates (the two that won on Family and Kinship's valid splits):
#   max_body 2, min_confidence 0.1   and   max_body 3, min_confidence 0.4
# both with standard confidence, smoothing 20, aggregation max.  Override
# with CANDIDATES="2:0.1 3:0.4 3:0.3".  Connection as for eval.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
read -r -a cands <<<"${CANDIDATES:-2:0.1 3:0.4}"
[ $# -gt 0 ] || { echo "usage: auto.sh NAME [NAME ...]" >&2; exit 2; }
for name in "$@"; do
  best_mrr=-1 best=""
  for c in "${cands[@]}"; do
    b=${c%%:*} conf=${c#*:}
    out=$(SPLIT=valid MAX_BODY=$b MIN_CONF=$conf CONF=std SMOOTH=20 AGG=max bash "$here/eval.sh" "$name")
    # the "overall:" table's data row: queries | mrr | hits1 | hits10 | derived
    mrr=$(echo "$out" | awk '/^overall:/ {o = 1; next} o && $1 ~ /^[0-9]+$/ && $2 == "|" {print $3; exit}')
    [ -n "$mrr" ] || { echo "$out"; echo "auto.sh: no valid MRR for $name ($c)" >&2; exit 1; }
    echo "== $name valid: max_body $b, min_confidence $conf: MRR $mrr"
    if awk -v a="$mrr" -v b="$best_mrr" 'BEGIN {exit !(a > b)}'; then best_mrr=$mrr best=$c; fi
  done
  b=${best%%:*} conf=${best#*:}
  echo "== $name: chosen on valid: max_body $b, min_confidence $conf (valid MRR $best_mrr); test split:"
  SPLIT=test MAX_BODY=$b MIN_CONF=$conf CONF=std SMOOTH=20 AGG=max bash "$here/eval.sh" "$name"
done

#!/usr/bin/env bash
# bench/kg/cache.sh — what keeping the graph between calls is worth (0.6):
# a split predicted relation by relation (one gpudl_predict call per
# relation, PER_RELATION=1), every call reading the graph and parsing its
# stored rules (gpudl.kg_cache off) against one session keeping them
# (KG_CACHE=1), RUNS times each in turn on the rules one mining run stored;
# medians of eval.sh's prediction seconds, and both configurations' scores,
# which must be equal.
#
#   bash bench/kg/cache.sh fb15k-237           # SPLIT=valid MAX_BODY=2 RUNS=3
# Other settings as eval.sh's (MAX_BODY, CONSTANTS, ...).  Needs the running
# cluster eval.sh needs; leaves the database (KEEP=1) for REUSE=1 runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
name="${1:-fb15k-237}"
export SPLIT="${SPLIT:-valid}" MAX_BODY="${MAX_BODY:-2}" KEEP=1 PER_RELATION=1
runs="${RUNS:-3}"
out=$(mktemp -d)
# mine once and store the rules (this first run is not timed for the comparison)
bash "$here/eval.sh" "$name" >"$out/mine.log"
grep -E "^(graph|mining)" "$out/mine.log"
for i in $(seq 1 "$runs"); do
  for mode in off on; do
    kc=0; [ "$mode" = on ] && kc=1
    REUSE=1 PREDICT_ONLY=1 KG_CACHE=$kc bash "$here/eval.sh" "$name" >"$out/$mode.$i.log"
    sed -n 's/^prediction: .* in \([0-9.]*\) s.*/\1/p' "$out/$mode.$i.log" >>"$out/$mode.times"
    grep -A3 '^overall:' "$out/$mode.$i.log" | tail -1 >>"$out/$mode.scores"
  done
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
off=$(median "$out/off.times"); on=$(median "$out/on.times")
echo "per-relation prediction, median of $runs: kg_cache off $off s ($(paste -sd' ' "$out/off.times")), on $on s ($(paste -sd' ' "$out/on.times")): $(awk -v a="$off" -v b="$on" 'BEGIN { printf "%.1fx", a / b }')"
grep -h "reused" "$out"/on.1.log | sed 's/^/  /'
if [ "$(sort -u "$out/off.scores" "$out/on.scores" | wc -l)" = 1 ]; then
  echo "scores equal: $(head -1 "$out/on.scores")"
else
  echo "FAIL: the scores differ"; cat "$out/off.scores" "$out/on.scores"; exit 1
fi
rm -rf "$out"

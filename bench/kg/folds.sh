#!/usr/bin/env bash
# bench/kg/folds.sh — what a mining setting is worth under the weighted
# aggregation, out of sample, without a database: kg_eval (the core) mines
# the train split once, then the valid split's relations are cut in two
# halves (kg_eval -f, by a hash of the name); the weights fitted on one
# half's triples score the other half, and the two halves' reciprocal
# ranks are pooled.  The same procedure as eval.sh AGG=weighted SPLIT=valid
# (which halves by PostgreSQL's hashtext), minutes faster, for choosing
# what to build; never the test split.
#   bash bench/kg/folds.sh ../shared/data/kg/fb15k-237 -b 3 -K -B 1 -h 0 -s 5 -C 0.1
# Settings: THREADS (default: every CPU), SMOOTH (default 2), RULES (where
# the mined rules are kept between the runs, default a temporary file;
# REUSE=1 with RULES: score the rules an earlier run kept there, no mining),
# KG_EVAL (a kg_eval binary to use instead of building bench/mine's).
set -euo pipefail
dir=$1; shift
here=$(cd "$(dirname "$0")/../.." && pwd)
kg="${KG_EVAL:-$here/bench/mine/bin/kg_eval}"
[ -n "${KG_EVAL:-}" ] || make -s -C "$here/bench/mine" bin/kg_eval
T="${THREADS:-$(nproc)}"; S="${SMOOTH:-2}"
rules="${RULES:-$(mktemp /tmp/folds.XXXXXX.rules)}"
trap '[ -n "${RULES:-}" ] || rm -f "$rules"' EXIT

# the whole valid split with kind_noisy_or (and the rules saved)
if [ "${REUSE:-0}" = 1 ] && [ -s "$rules" ]; then
  echo "rules: $rules (kept by an earlier run)"
else
  "$kg" "$dir" -x valid "$@" -T "$T" -a kind -S "$S" -w "$rules" | grep -E "^(mining|kind) "
fi
declare -a w
for f in 0 1; do
  w[$f]=$("$kg" "$dir" -x valid -l "$rules" -T "$T" -a kind -S "$S" -W -f "$f" | sed -n 's/^fit: .* -V //p')
  [ -n "${w[$f]}" ] || { echo "folds.sh: no weights fitted on half $f" >&2; exit 1; }
done
# each half scored with the other half's weights; pooled by query count
for f in 0 1; do
  "$kg" "$dir" -x valid -l "$rules" -T "$T" -a weighted -S "$S" -V "${w[$((1 - f))]}" -f "$f" | grep -E "^weighted"
done | awk '{ for (i = 1; i <= NF; i++) { if ($i == "MRR") m = $(i + 1); if ($i == "Hits@1") h1 = $(i + 1);
              if ($i == "Hits@10") h10 = $(i + 1); if ($i ~ /^\(/) n = substr($i, 2) }
              N += n; M += m * n; H1 += h1 * n; H10 += h10 * n; print "half: " $0 }
             END { printf "weighted, two halves out of sample: MRR %.4f  Hits@1 %.4f  Hits@10 %.4f  (%d queries)\n",
                   M / N, H1 / N, H10 / N, N }'

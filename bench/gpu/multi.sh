#!/usr/bin/env bash
# bench/gpu/multi.sh — the partitioned fixpoint (issue 14): TC and SG of
# p2p-Gnutella31 and SF.cedge through bench/engine/bench_engine, on 1, 2
# and 4 GPUs of the host (those the machine has; one partition per GPU) and
# with 2 and 4 partitions on GPU 0 alone.  One markdown row per run:
# GPUs, partitions, tuples, rounds, seconds, peak MB per GPU (the most any
# GPU held: the sum of its partitions' peaks), MB exchanged between
# partitions, the slowest partition's exchange time.  A run that fails or
# passes TIMEOUT seconds says so.
#
#   make -C bench/engine && make cuda/gpudl_cuda.so
#   BENCH=bench/engine/bench_engine CUDA_LIB=cuda/gpudl_cuda.so \
#   GRAPH_DIR=../shared/data/graphs bash bench/gpu/multi.sh
#
# Settings: GRAPHS ("p2p-Gnutella31 SF.cedge"), PROGRAMS ("tc sg"),
# GPU_COUNTS ("1 2 4": counts above the machine's are skipped), ONE_GPU_PARTS
# ("2 4": partitions on GPU 0), MIN_ROWS (--part-min-rows: edges below it
# are replicated; default the engine's 100000), TIMEOUT (300), DEVICE (gpu;
# cpu runs the same rows on CPU contexts, GPU_COUNTS then ignored), EXTRA.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../common/lib.sh"
bench_defaults BENCH="$here/../engine/bench_engine" CUDA_LIB="$here/../../cuda/gpudl_cuda.so" \
  GRAPH_DIR="$here/../../../shared/data/graphs" TIMEOUT=300 DEVICE=gpu
# these four may be set empty (none of them)
GRAPHS="${GRAPHS-p2p-Gnutella31 SF.cedge}"
PROGRAMS="${PROGRAMS-tc sg}"
GPU_COUNTS="${GPU_COUNTS-1 2 4}"
ONE_GPU_PARTS="${ONE_GPU_PARTS-2 4}"
args=(--device "$DEVICE")
[ "$DEVICE" = gpu ] && args+=(--cuda-lib "$CUDA_LIB")
[ -n "${MIN_ROWS:-}" ] && args+=(--part-min-rows "$MIN_ROWS")
ngpu=0
if [ "$DEVICE" = gpu ]; then
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }
echo "| graph | program | GPUs | partitions | tuples | rounds | seconds | peak MB per GPU | MB exchanged | exchange ms |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
# one GRAPH PROGRAM GPUS PARTS DEVICES
one() {
  local g=$1 p=$2 ngpus=$3 parts=$4 devs=$5 out line rc peak
  out=$(timeout "$TIMEOUT" "$BENCH" --program "$p" "${args[@]}" --partitions "$parts" \
        --devices "$devs" ${EXTRA:-} "$GRAPH_DIR/$g.txt" 2>&1)
  rc=$?
  line=$(grep '^graph=' <<<"$out" | tail -1)
  if [ -z "$line" ]; then
    [ "$rc" = 124 ] && out="timeout after ${TIMEOUT} s"
    echo "| $g | $p | $ngpus | $parts | — | — | — | — | — | $(tail -1 <<<"$out" | tr '|' ' ') |"
    return
  fi
  # the most any device held: its partitions' peaks summed (unpartitioned: the run's)
  peak=$(grep '^part=' <<<"$out" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
           s[v["device"]] += v["peak_mb"] } END { m = 0; for (d in s) if (s[d] > m) m = s[d]; print m }')
  [ -z "$peak" ] || [ "$peak" = 0 ] && peak=$(field backend_peak_mb "$line")
  echo "| $g | $p | $ngpus | $parts | $(field tuples "$line") | $(field iterations "$line") |" \
       "$(field seconds "$line") | $peak | $(field xchg_mb "$line") | $(field xchg_ms "$line") |"
}
for g in $GRAPHS; do
  [ -r "$GRAPH_DIR/$g.txt" ] || { echo "| $g | — | — | — | — | — | — | — | — | no $GRAPH_DIR/$g.txt |"; continue; }
  for p in $PROGRAMS; do
    if [ "$DEVICE" = gpu ]; then
      for n in $GPU_COUNTS; do
        if [ "$n" -gt "$ngpu" ]; then
          echo "| $g | $p | $n | $n | — | — | — | — | — | skipped: $ngpu GPU(s) here |"
          continue
        fi
        devs=$(seq -s, 0 $((n - 1)))
        # one GPU: the unpartitioned path (partitions 1); n GPUs: one partition each
        one "$g" "$p" "$n" "$([ "$n" = 1 ] && echo 1 || echo "$n")" "$devs"
      done
    else
      one "$g" "$p" 0 1 all
    fi
    for k in $ONE_GPU_PARTS; do
      one "$g" "$p" "$([ "$DEVICE" = gpu ] && echo 1 || echo 0)" "$k" 0
    done
  done
done

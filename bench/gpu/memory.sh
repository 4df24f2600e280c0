#!/usr/bin/env bash
# bench/gpu/memory.sh — peak device bytes per result tuple (issue 13): TC and
# SG of every graph in GRAPH_DIR and non-linear TC of the smaller ones,
# through bench/engine/bench_engine on the GPU (no database).  One markdown
# row per run: tuples, rounds, seconds, peak device MB, peak bytes per
# tuple, join slices.  A run that fails or passes TIMEOUT seconds says so.
#
#   BENCH=bench/engine/bench_engine CUDA_LIB=cuda/gpudl_cuda.so \
#   GRAPH_DIR=../shared/data/graphs bash bench/gpu/memory.sh
#
# Settings: PROGRAMS ("tc sg"), NL_GRAPHS (graphs for tc-nl: "CA-HepTh
# p2p-Gnutella04"), GRAPHS (default: every *.txt of GRAPH_DIR), TIMEOUT (120),
# LIMIT_MB (passed as --memory-limit: gpudl.device_memory_limit's meaning),
# DEVICE (gpu | cpu), EXTRA (more bench_engine arguments).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
BENCH="${BENCH:-$here/../engine/bench_engine}"
CUDA_LIB="${CUDA_LIB:-$here/../../cuda/gpudl_cuda.so}"
GRAPH_DIR="${GRAPH_DIR:-$here/../../../shared/data/graphs}"
PROGRAMS="${PROGRAMS-tc sg}"
NL_GRAPHS="${NL_GRAPHS-CA-HepTh p2p-Gnutella04}"
TIMEOUT="${TIMEOUT:-120}"
DEVICE="${DEVICE:-gpu}"
if [ -z "${GRAPHS:-}" ]; then
  GRAPHS=$(for f in "$GRAPH_DIR"/*.txt; do basename "$f" .txt; done)
fi
args=(--device "$DEVICE")
[ "$DEVICE" = gpu ] && args+=(--cuda-lib "$CUDA_LIB")
[ -n "${LIMIT_MB:-}" ] && args+=(--memory-limit "$LIMIT_MB")
# field NAME LINE: the value of NAME=... in a bench_engine line
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }
echo "| graph | program | tuples | rounds | seconds | peak device MB | bytes/tuple | slices |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
one() {
  local g=$1 p=$2 line rc
  line=$(timeout "$TIMEOUT" "$BENCH" --program "$p" "${args[@]}" ${EXTRA:-} "$GRAPH_DIR/$g.txt" 2>&1 | tail -1)
  rc=${PIPESTATUS[0]}
  if [[ "$line" != graph=* ]]; then
    [ "$rc" = 124 ] && line="timeout after ${TIMEOUT} s"
    echo "| $g | $p | — | — | — | — | — | ${line//|/ } |"
    return
  fi
  echo "| $g | $p | $(field tuples "$line") | $(field iterations "$line") | $(field seconds "$line") |" \
       "$(field backend_peak_mb "$line") | $(field bytes_per_tuple "$line") | $(field batches "$line") |"
}
for g in $GRAPHS; do
  for p in $PROGRAMS; do one "$g" "$p"; done
done
for g in $NL_GRAPHS; do
  [ -r "$GRAPH_DIR/$g.txt" ] && one "$g" tc-nl
done

#!/usr/bin/env bash
# bench/gpu/memory_device.sh — issue 13's checks on the GPU machine in one
# call (device time is scarce), from a folder D holding test_engine,
# test_cuda_backend, bench_engine, gpudl_cuda.so, memory.sh and graphs/ (the
# graphs of shared/data/graphs), all built on the development machine (the
# module for sm_90; bench_engine without -march=native), and optionally
# repo/ plus a staged PostgreSQL (shared/tools/device/stage.sh) for
# test/t/13_memory.sh:
#   cd D && bash memory_device.sh            (or: bash run.sh 'bash memory_device.sh')
# 1. test_cuda_backend (sorted-runs `full`, the default);
# 2. the differential programs on the GPU with the device memory limit at a
#    third of each run's peak (test_engine, GDL_TEST_DEVICE=gpu);
# 3. peak device bytes per tuple of TC and SG of every graph (memory.sh);
# 4. TC of p2p-Gnutella31 (TIME_PROGRAMS) three times each, sorted runs and
#    the old hash log (GDL_CUDA_FULL=hash), for the times;
# 5. SG of p2p-Gnutella31 with GDL_TRACE=1 (rounds, sizes) when step 3
#    did not complete it;
# 6. TC and SG with --memory-limit at a half and a third of their peak;
# 7. test/t/13_memory.sh with its GPU part, when repo/ is there.
# Everything is written to $OUT (tests.txt, bench.md, trace.txt,
# summary.txt, 13_memory.txt); each step has its own timeout.
# Settings: NL_GRAPHS (non-linear TC, default none), SKIP (steps to skip,
# e.g. "4 5"), TIME_PROGRAMS (step 4: tc), LIMIT_TIMEOUT (step 6: 60 s),
# TRACE_LIMITED=1 (6b: TC CA-HepTh at half its peak with GDL_TRACE=1).
set -uo pipefail
D="$(pwd)"
OUT="${OUT:-$D/out}"; mkdir -p "$OUT"
export GDL_CUDA_LIB="$D/gpudl_cuda.so"
SKIP="${SKIP:-}"
s() { echo "== $(date +%T) $*" | tee -a "$OUT/summary.txt"; }
skip() { [[ " $SKIP " == *" $1 "* ]]; }
m() { BENCH="$D/bench_engine" CUDA_LIB="$D/gpudl_cuda.so" GRAPH_DIR="$D/graphs" bash "$D/memory.sh"; }
nvidia-smi -L >>"$OUT/summary.txt" 2>&1
if ! skip 1; then
  s "1 test_cuda_backend"
  timeout 100 "$D/test_cuda_backend" >"$OUT/t.txt" 2>&1; echo "rc=$?" >>"$OUT/t.txt"
  tail -3 "$OUT/t.txt" | tee -a "$OUT/summary.txt"; { echo "== test_cuda_backend"; cat "$OUT/t.txt"; } >>"$OUT/tests.txt"
fi
if ! skip 2; then
  s "2 test_engine on the GPU (limited runs)"
  GDL_TEST_DEVICE=gpu timeout 150 "$D/test_engine" >"$OUT/t.txt" 2>&1; echo "rc=$?" >>"$OUT/t.txt"
  grep -E "FAIL|out of device|memory-limited" "$OUT/t.txt" | head -8 >>"$OUT/summary.txt"
  tail -3 "$OUT/t.txt" | tee -a "$OUT/summary.txt"; { echo "== test_engine gpu"; cat "$OUT/t.txt"; } >>"$OUT/tests.txt"
fi
rm -f "$OUT/t.txt"
if ! skip 3; then
  s "3 peak bytes per tuple"
  NL_GRAPHS="${NL_GRAPHS-}" TIMEOUT=60 m >"$OUT/m.md" 2>&1
  { echo "sorted runs (default):"; cat "$OUT/m.md"; } >>"$OUT/bench.md"
  cat "$OUT/m.md" >>"$OUT/summary.txt"
fi
if ! skip 5 && ! grep -qE '^\| p2p-Gnutella31 \| sg \| [0-9]' "$OUT/m.md" 2>/dev/null; then
  s "5 SG p2p-Gnutella31 traced"
  GDL_TRACE=1 timeout 60 "$D/bench_engine" --program sg --device gpu --cuda-lib "$D/gpudl_cuda.so" \
    "$D/graphs/p2p-Gnutella31.txt" >"$OUT/trace.txt" 2>&1; echo "rc=$?" >>"$OUT/trace.txt"
  tail -4 "$OUT/trace.txt" >>"$OUT/summary.txt"
fi
if ! skip 4; then
  s "4 p2p-Gnutella31 times: sorted runs and hash log"
  for full in runs hash; do
    for p in ${TIME_PROGRAMS:-tc}; do
      [ $full = hash ] && [ $p = sg ] && continue   # does not fit (BENCHMARKS.md)
      echo "GDL_CUDA_FULL=$full $p --repeat 3:" >>"$OUT/bench.md"
      GDL_CUDA_FULL=$full GRAPHS=p2p-Gnutella31 PROGRAMS=$p NL_GRAPHS= EXTRA="--repeat 3" TIMEOUT=60 m 2>&1 \
        | tail -1 | tee -a "$OUT/summary.txt" >>"$OUT/bench.md"
    done
  done
fi
if ! skip 6; then
  s "6 a half and a third of the peak"
  for gp in "CA-HepTh tc" "p2p-Gnutella31 tc" "CA-HepTh sg" "p2p-Gnutella04 sg"; do
    set -- $gp
    peak=$(awk -F'|' -v g="$1" -v p=" $2 " '$2 ~ g && $3 == p {gsub(/ /, "", $7); print $7}' "$OUT/m.md")
    [ -n "$peak" ] && [ "$peak" != "—" ] || continue
    for div in 2 3; do
      echo "$1 $2, --memory-limit $((peak / div)) MB (peak $peak / $div):" >>"$OUT/bench.md"
      GRAPHS=$1 PROGRAMS=$2 NL_GRAPHS= LIMIT_MB=$((peak / div)) TIMEOUT=${LIMIT_TIMEOUT:-60} m 2>&1 | tail -1 \
        | tee -a "$OUT/summary.txt" >>"$OUT/bench.md"
    done
  done
fi
if [ -n "${TRACE_LIMITED:-}" ]; then
  s "6b TC CA-HepTh at a half of its peak, traced"
  peak=$(awk -F'|' '$2 ~ /CA-HepTh/ && $3 == " tc " {gsub(/ /, "", $7); print $7}' "$OUT/m.md")
  GDL_TRACE=1 timeout 30 "$D/bench_engine" --program tc --device gpu --cuda-lib "$D/gpudl_cuda.so" \
    --memory-limit $((peak / 2)) "$D/graphs/CA-HepTh.txt" >"$OUT/trace.txt" 2>&1; echo "rc=$?" >>"$OUT/trace.txt"
  tail -6 "$OUT/trace.txt" >>"$OUT/summary.txt"
fi
rm -f "$OUT/m.md"
if ! skip 7 && [ -d "$D/repo" ]; then
  s "7 13_memory.sh (CPU host limit, GPU device limit)"
  (cd "$D/repo" && GPUDL_PGHOST=/tmp GPUDL_PGPORT=5432 GPUDL_PGUSER=pg GPUDL_GRAPH_DIR="$D/graphs" \
    GPUDL_TEST_GPU=1 timeout 180 bash test/t/13_memory.sh) >"$OUT/13_memory.txt" 2>&1; echo "rc=$?" >>"$OUT/13_memory.txt"
  tail -25 "$OUT/13_memory.txt" >>"$OUT/summary.txt"
fi
s "done"

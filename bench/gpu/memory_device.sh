#!/usr/bin/env bash
# bench/gpu/memory_device.sh — issue 13's checks on the GPU machine in one
# call (device time is scarce), from a staged folder D holding the staged
# PostgreSQL (shared/tools/device/stage.sh), test_engine, test_cuda_backend,
# bench_engine, gpudl_cuda.so, memory.sh, graphs/ and repo/ (test/t/13_memory.sh,
# tools/pgenv.sh), all built on the development machine:
#   cd D && bash run.sh 'bash memory_device.sh'
# 1. the differential programs on the GPU with the device memory limit at a
#    third of each run's peak (test_engine, GDL_TEST_DEVICE=gpu);
# 2. peak device bytes per tuple of TC, SG and non-linear TC (memory.sh);
# 3. test/t/13_memory.sh with its GPU part (gpudl.device_memory_limit);
# 4. TC of the largest graphs with --memory-limit at a half and a third of
#    their peak;
# 5. the bytes per tuple with GDL_CUDA_LEAN=1, and test_cuda_backend both ways.
# Everything is written to $OUT (few files: tests.txt, bench.md,
# 13_memory.txt, summary.txt); each step has its own timeout.
set -uo pipefail
D="$(pwd)"
OUT="${OUT:-$D/out}"; mkdir -p "$OUT"
export GDL_CUDA_LIB="$D/gpudl_cuda.so"
s() { echo "== $(date +%T) $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi -L >>"$OUT/summary.txt" 2>&1
s "1 test_engine on the GPU (limited runs)"
GDL_TEST_DEVICE=gpu timeout 150 "$D/test_engine" >"$OUT/t.txt" 2>&1; echo "rc=$?" >>"$OUT/t.txt"
tail -3 "$OUT/t.txt" | tee -a "$OUT/summary.txt"; { echo "== test_engine gpu"; cat "$OUT/t.txt"; } >>"$OUT/tests.txt"
s "2 peak bytes per tuple"
BENCH="$D/bench_engine" CUDA_LIB="$D/gpudl_cuda.so" GRAPH_DIR="$D/graphs" TIMEOUT=45 \
  bash "$D/memory.sh" >"$OUT/m.md" 2>&1
{ echo "default sizing:"; cat "$OUT/m.md"; } >>"$OUT/bench.md"
s "3 13_memory.sh (CPU host limit, GPU device limit)"
(cd "$D/repo" && GPUDL_PGHOST=/tmp GPUDL_PGPORT=5432 GPUDL_PGUSER=pg GPUDL_GRAPH_DIR="$D/graphs" \
  GPUDL_TEST_GPU=1 timeout 180 bash test/t/13_memory.sh) >"$OUT/13_memory.txt" 2>&1; echo "rc=$?" >>"$OUT/13_memory.txt"
tail -25 "$OUT/13_memory.txt" >>"$OUT/summary.txt"
s "4 TC at a half and a third of its peak"
for g in p2p-Gnutella31 CA-HepTh; do
  peak=$(awk -F'|' -v g="$g" '$2 ~ g && $3 ~ / tc / {gsub(/ /, "", $7); print $7}' "$OUT/m.md")
  [ -n "$peak" ] && [ "$peak" != "—" ] || continue
  for div in 2 3; do
    echo "$g, --memory-limit $((peak / div)) MB (peak $peak / $div):" >>"$OUT/bench.md"
    GRAPHS=$g PROGRAMS=tc NL_GRAPHS= LIMIT_MB=$((peak / div)) BENCH="$D/bench_engine" CUDA_LIB="$D/gpudl_cuda.so" \
      GRAPH_DIR="$D/graphs" TIMEOUT=60 bash "$D/memory.sh" 2>&1 | tail -1 >>"$OUT/bench.md"
  done
done
s "5 lean sizing"
GDL_CUDA_LEAN=1 BENCH="$D/bench_engine" CUDA_LIB="$D/gpudl_cuda.so" GRAPH_DIR="$D/graphs" TIMEOUT=45 \
  bash "$D/memory.sh" >"$OUT/m.md" 2>&1
{ echo "GDL_CUDA_LEAN=1:"; cat "$OUT/m.md"; } >>"$OUT/bench.md"; rm -f "$OUT/m.md"
s "6 test_cuda_backend"
for lean in 0 1; do
  GDL_CUDA_LEAN=$lean timeout 90 "$D/test_cuda_backend" >"$OUT/t.txt" 2>&1; echo "rc=$?" >>"$OUT/t.txt"
  tail -2 "$OUT/t.txt" | tee -a "$OUT/summary.txt"; { echo "== test_cuda_backend lean=$lean"; cat "$OUT/t.txt"; } >>"$OUT/tests.txt"
done
rm -f "$OUT/t.txt"
s "done"

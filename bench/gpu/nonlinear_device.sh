#!/usr/bin/env bash
# bench/gpu/nonlinear_device.sh — issue 23's non-linear recursion on the GPU
# machine, in one call: builds the CUDA module and bench_engine there, then
#   1. test_cuda_backend and test_engine on the GPU (the differential
#      programs, non-linear closures made linear and as written);
#   2. bench_engine, RUNS (3) runs each on the GPU: linear TC, non-linear TC
#      (made linear by the analysis) and, once with a timeout, non-linear TC
#      as written (the engine's non-linear rounds), on NL_GRAPHS;
#   3. the same linear / non-linear pair on 16 CPU threads;
#   4. through SQL (the staged PostgreSQL): bench/sql/graphs.sh with
#      WORKLOADS="tc tcnl" on the GPU.
# Run inside the staged PostgreSQL:
#   bash .device/run.sh 'bash bench/gpu/nonlinear_device.sh'
# Results in $OUT: summary.txt (everything), engine.txt (raw lines).
set -uo pipefail
OUT="${OUT:-out}"; mkdir -p "$OUT"
GRAPH_DIR="${GRAPH_DIR:-$PWD/.device/graphs}"
NL_GRAPHS="${NL_GRAPHS:-CA-HepTh p2p-Gnutella04 p2p-Gnutella31}"
RUNS="${RUNS:-3}"
AS_WRITTEN_TIMEOUT="${AS_WRITTEN_TIMEOUT:-60}"
log() { echo "== $(date +%T) $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi -L >>"$OUT/summary.txt" 2>&1
log "build"
make -s cuda/gpudl_cuda.so >"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
make -s -C bench/engine CFLAGS="-O3 -g" >>"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
make -s -C test/unit bin/test_cuda_backend bin/test_engine >>"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
export GDL_CUDA_LIB="$PWD/cuda/gpudl_cuda.so"
log "1 tests on the GPU"
timeout 200 test/unit/bin/test_cuda_backend >"$OUT/t1.txt" 2>&1; echo "rc=$?" >>"$OUT/t1.txt"
tail -2 "$OUT/t1.txt" | tee -a "$OUT/summary.txt"
GDL_TEST_DEVICE=gpu timeout 200 test/unit/bin/test_engine >"$OUT/t2.txt" 2>&1; echo "rc=$?" >>"$OUT/t2.txt"
tail -2 "$OUT/t2.txt" | tee -a "$OUT/summary.txt"
b() { bench/engine/bench_engine "$@" 2>&1 | tee -a "$OUT/engine.txt" | grep -o 'graph=[^ ]* program=[^ ]* device=[^ ]* threads=[^ ]* .*tuples=[0-9]* iterations=[0-9]* seconds=[0-9.]*\|error.*'; }
log "2 GPU: linear TC, non-linear TC (made linear), non-linear TC as written"
for g in $NL_GRAPHS; do
  b --program tc --device gpu --cuda-lib "$GDL_CUDA_LIB" --repeat "$RUNS" "$GRAPH_DIR/$g.txt" | tee -a "$OUT/summary.txt"
  b --program tc-nl --device gpu --cuda-lib "$GDL_CUDA_LIB" --repeat "$RUNS" "$GRAPH_DIR/$g.txt" | tee -a "$OUT/summary.txt"
  [ "$g" = p2p-Gnutella31 ] && continue
  timeout "$AS_WRITTEN_TIMEOUT" bench/engine/bench_engine --program tc-nl-as-written --device gpu \
    --cuda-lib "$GDL_CUDA_LIB" "$GRAPH_DIR/$g.txt" >>"$OUT/engine.txt" 2>&1 \
    && tail -1 "$OUT/engine.txt" | grep -o 'graph=.*seconds=[0-9.]*' | tee -a "$OUT/summary.txt" \
    || echo "$g tc-nl-as-written: > ${AS_WRITTEN_TIMEOUT} s" | tee -a "$OUT/summary.txt"
done
log "3 CPU, 16 threads: linear and non-linear TC"
for g in CA-HepTh p2p-Gnutella04; do
  b --program tc --threads 16 --repeat "$RUNS" "$GRAPH_DIR/$g.txt" | tee -a "$OUT/summary.txt"
  b --program tc-nl --threads 16 --repeat "$RUNS" "$GRAPH_DIR/$g.txt" | tee -a "$OUT/summary.txt"
done
log "4 through SQL on the GPU"
export GPUDL_PGHOST=/tmp GPUDL_PGPORT=5432 GPUDL_PGUSER=pg
PGHOST=/tmp PGPORT=5432 PGUSER=pg DEVICE=gpu RUNS="$RUNS" WORKLOADS="tc tcnl" RECURSIVE_TIMEOUT_S=0 \
  MATERIALIZE=0 GRAPH_DIR="$GRAPH_DIR" GRAPHS="CA-HepTh p2p-Gnutella04 p2p-Gnutella31" \
  timeout 300 bash bench/sql/graphs.sh 2>&1 | tee -a "$OUT/summary.txt"
log "done"

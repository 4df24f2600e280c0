#!/usr/bin/env bash
# bench/gpu/device_run.sh — everything gpudl checks on the GPU machine, in one
# go (device time is scarce): build the CUDA module there, the standalone
# GPU-vs-CPU differential test, the whole pg_regress suite with
# gpudl.device = gpu, the GPU shell tests, and the graph benchmarks on GPU and
# CPU.  Run inside the staged PostgreSQL:
#   bash .device/run.sh 'bash bench/gpu/device_run.sh tests bench-gpu'
#   bash .device/run.sh 'bash bench/gpu/device_run.sh bench-cpu'
# Phases: tests, shell, bench-gpu, bench-cpu, ilp, family, multi, maintain (data in .device/graphs and
# .device/family; stage them with shared/tools/device/stage.sh first).
# Logs and results go to $OUT (or out/ when unset).
set -uo pipefail
phases=" $* "
# the staged cluster of .device/run.sh, not a private one
export GPUDL_PGHOST=/tmp GPUDL_PGPORT=5432 GPUDL_PGUSER=pg
OUT="${OUT:-out}"; mkdir -p "$OUT"
export GRAPH_DIR="${GRAPH_DIR:-$PWD/.device/graphs}"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi -L 2>&1 | tee "$OUT/nvidia-smi.txt"
log "build the CUDA module here"
# renamed into place, never copied over: a running process has the old file mapped
make -s cuda/gpudl_cuda.so >"$OUT/build.txt" 2>&1 && cp cuda/gpudl_cuda.so "$(pg_config --pkglibdir)/gpudl_cuda.so.new" \
  && mv -f "$(pg_config --pkglibdir)/gpudl_cuda.so.new" "$(pg_config --pkglibdir)/gpudl_cuda.so" || { tail -20 "$OUT/build.txt"; }
if [[ "$phases" == *" tests "* ]]; then
log "standalone differential test (GPU backend vs CPU backend)"
make -s -C test/unit bin/test_cuda_backend >>"$OUT/build.txt" 2>&1
GDL_CUDA_LIB="$PWD/cuda/gpudl_cuda.so" timeout 300 test/unit/bin/test_cuda_backend >"$OUT/test_cuda_backend.txt" 2>&1; echo "rc=$?" >>"$OUT/test_cuda_backend.txt"
tail -3 "$OUT/test_cuda_backend.txt" | tee -a "$OUT/summary.txt"
log "device info"
psql -X -c "CREATE EXTENSION IF NOT EXISTS gpudl" -c "SELECT * FROM gpudl_device_info()" 2>&1 | tee -a "$OUT/summary.txt"
log "pg_regress with gpudl.device = gpu"
mkdir -p test/out
PGOPTIONS="-c gpudl.device=gpu" timeout 400 make -s installcheck with_llvm=no NVCC= >"$OUT/installcheck_gpu.txt" 2>&1; echo "rc=$?" >>"$OUT/installcheck_gpu.txt"
grep -E "^test|tests|rc=" "$OUT/installcheck_gpu.txt" | tee -a "$OUT/summary.txt"
cp test/out/regression.diffs "$OUT/regression_gpu.diffs" 2>/dev/null
fi
if [[ "$phases" == *" shell "* ]]; then
log "GPU shell tests"
for t in test/t/04_gpu.sh test/t/03_cancel.sh; do timeout 120 bash "$t" >>"$OUT/shell_tests.txt" 2>&1; echo "$t rc=$?" | tee -a "$OUT/summary.txt"; done
tail -8 "$OUT/shell_tests.txt" >>"$OUT/summary.txt"
fi
if [[ "$phases" == *" bench-gpu "* ]]; then
log "benchmarks: GPU (TC and SG on every graph; TC again with the edge table loaded on the device)"
DEVICE=gpu RUNS="${RUNS:-5}" WORKLOADS="tc" RECURSIVE_TIMEOUT_S=0 MATERIALIZE="${MATERIALIZE:-0}" timeout 240 bash bench/sql/graphs.sh >"$OUT/bench_gpu_tc.md" 2>&1
DEVICE=gpu RUNS="${RUNS:-5}" WORKLOADS="tc" RECURSIVE_TIMEOUT_S=0 MATERIALIZE=0 LOADED=1 timeout 240 bash bench/sql/graphs.sh >"$OUT/bench_gpu_tc_loaded.md" 2>&1
PGOPTIONS="-c statement_timeout=${SG_TIMEOUT_S:-60}s" DEVICE=gpu RUNS="${RUNS:-5}" WORKLOADS="sg" RECURSIVE_TIMEOUT_S=0 MATERIALIZE=0 timeout 400 bash bench/sql/graphs.sh >"$OUT/bench_gpu_sg.md" 2>&1
fi
if [[ "$phases" == *" bench-cpu "* ]]; then
log "benchmarks: CPU engine on this machine's cores, WITH RECURSIVE where it finishes"
PGOPTIONS="-c statement_timeout=${CPU_TIMEOUT_S:-90}s" DEVICE=cpu RUNS="${CPU_RUNS:-2}" WORKLOADS="${CPU_WORKLOADS:-tc sg}" RECURSIVE_TIMEOUT_S="${RECURSIVE_TIMEOUT_S:-30}" MATERIALIZE=0 timeout 540 bash bench/sql/graphs.sh >"$OUT/bench_cpu.md" 2>&1
fi
if [[ "$phases" == *" ilp "* ]]; then
log "rule learning at KG scale: every rule of up to two atoms for all 100 relations, CPU and GPU; ILP GPU tests"
make -s -C bench/ilp bin/kg_gpu >>"$OUT/build.txt" 2>&1
make -s -C test/unit bin/test_ilp_bulk bin/test_ilp_gpu >>"$OUT/build.txt" 2>&1
GDL_CUDA_LIB="$PWD/cuda/gpudl_cuda.so" timeout 120 test/unit/bin/test_ilp_bulk 2>&1 | tail -2 | tee -a "$OUT/summary.txt"
(cd test/unit && GDL_CUDA_LIB="$PWD/../../cuda/gpudl_cuda.so" timeout 120 ./bin/test_ilp_gpu 2>&1 | tail -1 | tee -a "$OUT/summary.txt")
timeout 200 bench/ilp/bin/kg_gpu -S -g "$PWD/cuda/gpudl_cuda.so" >"$OUT/bench_kg.txt" 2>&1
tail -12 "$OUT/bench_kg.txt" >>"$OUT/summary.txt"
fi
if [[ "$phases" == *" maintain "* ]]; then
log "maintained tables with gpudl.device = gpu: regression suites, sessions, benchmark"
mkdir -p test/out
PGOPTIONS="-c gpudl.device=gpu" timeout 200 make -s installcheck with_llvm=no NVCC= REGRESS="60_maintain 61_maintain_random" \
  >"$OUT/maintain_regress_gpu.txt" 2>&1; echo "rc=$?" >>"$OUT/maintain_regress_gpu.txt"
grep -E "^test|tests|rc=" "$OUT/maintain_regress_gpu.txt" | tee -a "$OUT/summary.txt"
PGOPTIONS="-c gpudl.device=gpu" timeout 120 bash test/t/23_maintain_sessions.sh >"$OUT/maintain_sessions_gpu.txt" 2>&1
echo "23_maintain_sessions (gpu) rc=$?" | tee -a "$OUT/summary.txt"; tail -4 "$OUT/maintain_sessions_gpu.txt" >>"$OUT/summary.txt"
for dev in ${MAINTAIN_DEVICES:-gpu cpu}; do
  DEVICE=$dev GRAPHS="${MAINTAIN_GRAPHS:-p2p-Gnutella04}" WORKLOADS="${MAINTAIN_WORKLOADS:-tc}" RUNS="${MAINTAIN_RUNS:-3}" SIZES="${MAINTAIN_SIZES:-1 100 10000}" \
    timeout "${MAINTAIN_TIMEOUT_S:-240}" bash bench/maintain/maintain.sh >"$OUT/maintain_$dev.md" 2>"$OUT/maintain_$dev.err"
  echo "bench/maintain $dev rc=$?" | tee -a "$OUT/summary.txt"; cat "$OUT/maintain_$dev.md" >>"$OUT/summary.txt"
done
fi
if [[ "$phases" == *" family "* ]]; then
log "rule learning: the family KG through SQL, on the GPU and on the CPU"
for dev in gpu cpu; do
  DEVICE=$dev RUNS="${FAMILY_RUNS:-3}" DATA_DIR="${FAMILY_DIR:-$PWD/.device/family}" timeout 240 bash bench/ilp/family_sql.sh >"$OUT/bench_family_$dev.md" 2>&1
done
fi
if [[ "$phases" == *" multi "* ]]; then
log "partitioned fixpoint (issue 14): test_engine's GPU mode (partitions on one GPU; all GPUs when several), NCCL self-test, bench/gpu/multi.sh"
make -s -C test/unit bin/test_engine bin/test_nccl >>"$OUT/build.txt" 2>&1
make -s -C bench/engine >>"$OUT/build.txt" 2>&1
(cd test/unit && GDL_TEST_DEVICE=gpu GDL_CUDA_LIB="$PWD/../../cuda/gpudl_cuda.so" timeout 400 ./bin/test_engine 2>&1 | tail -6 | tee -a "$OUT/summary.txt")
(cd test/unit && GDL_CUDA_LIB="$PWD/../../cuda/gpudl_cuda.so" timeout 120 ./bin/test_nccl 2>&1 | tail -2 | tee -a "$OUT/summary.txt")
CUDA_LIB="$PWD/cuda/gpudl_cuda.so" TIMEOUT="${MULTI_TIMEOUT_S:-120}" timeout 560 bash bench/gpu/multi.sh >"$OUT/bench_multi.md" 2>&1
fi
cat "$OUT"/bench_*.md >>"$OUT/summary.txt"

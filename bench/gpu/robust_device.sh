#!/usr/bin/env bash
# bench/gpu/robust_device.sh — issue 20's checks on the GPU machine in one call
# (device time is scarce): the CUDA module built there, GPU mining against
# the CPU with the new stop flag (test_mine_gpu) and its speed (bench_mine),
# the whole pg_regress suite with gpudl.device = gpu through the GPU
# service (quoted names and every column type included), every long call
# cancelled / timed out / terminated on the GPU (17_long_cancel.sh with the
# service on CUDA), the service's own tests on CUDA, the hostile-input fuzz
# run with gpudl.device = gpu, and a cluster without the preload.  Run
# inside the staged PostgreSQL with the service preloaded:
#   GPUDL_PG_CONF="shared_preload_libraries='gpudl'" bash .device/run.sh 'bash bench/gpu/robust_device.sh'
# Logs go to $OUT (or out/); the last lines are a summary.
set -uo pipefail
export GPUDL_PGHOST=/tmp GPUDL_PGPORT=5432 GPUDL_PGUSER=pg GPUDL_PGDATA=/tmp/pgdata GPUDL_SERVER_USER=pg
OUT="${OUT:-out}"; mkdir -p "$OUT"
sum="$OUT/summary.txt"
log() { echo "== $*" | tee -a "$sum"; }
nvidia-smi -L 2>&1 | tee -a "$sum"
log "build the CUDA module and the GPU unit tests here"
# a new file, renamed over the old: the running service keeps the pages it mapped
# (cp over a loaded library rewrites its code under it: SIGSEGV/SIGBUS)
lib="$(pg_config --pkglibdir)/gpudl_cuda.so"
make -s cuda/gpudl_cuda.so >"$OUT/build.txt" 2>&1 && cp cuda/gpudl_cuda.so "$lib.new" && mv -f "$lib.new" "$lib" \
  || tail -20 "$OUT/build.txt"
make -s -C test/unit bin/test_mine_gpu >>"$OUT/build.txt" 2>&1
make -s -C bench/mine >>"$OUT/build.txt" 2>&1
runuser -u pg -- env LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" pg_ctl -D /tmp/pgdata -l /tmp/pg.log -w restart >/dev/null
if [[ " ${PHASES:-unit regress cancel service fuzz nopreload} " == *" unit "* ]]; then
  log "GPU mining against the CPU (test_mine_gpu) and its speed (bench_mine, 1M facts, max_body 3)"
  (cd test/unit && GDL_CUDA_LIB="$PWD/../../cuda/gpudl_cuda.so" timeout 200 ./bin/test_mine_gpu 2>&1 | tail -2 | tee -a "$sum")
  (cd bench/mine && timeout 200 bin/bench_mine -b 3 -c -g ../../cuda/gpudl_cuda.so >"$OUT/bench_mine.txt" 2>&1; tail -6 "$OUT/bench_mine.txt" | tee -a "$sum")
fi
if [[ " ${PHASES:-unit regress cancel service fuzz nopreload} " == *" regress "* ]]; then
  log "pg_regress with gpudl.device = gpu through the service"
  psql -X -c "CREATE EXTENSION IF NOT EXISTS gpudl" -c "SELECT state, device FROM gpudl_service_status()" 2>&1 | tee -a "$sum"
  mkdir -p test/out; chmod -R a+rwX test/out
  PGOPTIONS="-c gpudl.device=gpu" timeout 400 make -s installcheck with_llvm=no NVCC= >"$OUT/installcheck_gpu.txt" 2>&1
  grep -E "^test|tests|failed" "$OUT/installcheck_gpu.txt" | grep -v " ok " | tee -a "$sum"
  cp test/out/regression.diffs "$OUT/regression_gpu.diffs" 2>/dev/null
fi
for phase in cancel nopreload service fuzz; do
  [[ " ${PHASES:-unit regress cancel service fuzz nopreload} " == *" $phase "* ]] || continue
  case $phase in
    cancel) tests="test/t/17_long_cancel.sh"; env="GPUDL_SERVICE_BACKEND=cuda GPUDL_TEST_GPU=1";;
    service) tests="test/t/10_service.sh test/t/04_gpu.sh"; env="GPUDL_SERVICE_BACKEND=cuda GPUDL_TEST_GPU=1";;
    fuzz) tests="test/t/16_fuzz.sh"; env="PGOPTIONS=-cgpudl.device=gpu";;
    nopreload) tests="test/t/18_no_preload.sh"; env="";;
  esac
  for t in $tests; do
    [ -f "$t" ] || continue
    log "$t ($env)"
    env $env timeout 300 bash "$t" >"$OUT/$(basename "$t" .sh).txt" 2>&1
    echo "$t rc=$?" | tee -a "$sum"
    tail -${TAIL:-24} "$OUT/$(basename "$t" .sh).txt" >>"$sum"
  done
done
log "server log: crashes"
cat /tmp/pg.log /tmp/pgdata/server.log 2>/dev/null >"$OUT/server_logs.txt"
grep -cE "terminated by signal|all server processes terminated" "$OUT/server_logs.txt" | sed 's/^/crash lines: /' | tee -a "$sum"
grep -E "terminated by signal|PANIC" "$OUT/server_logs.txt" | head -5 | tee -a "$sum"
log "the service's own lines (requests given up, stop waits)"
grep -E "gpudl GPU service: (request|waited|slot)" "$OUT/server_logs.txt" | tail -20 | tee -a "$sum"
tail -60 "$sum"

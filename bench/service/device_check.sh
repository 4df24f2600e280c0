#!/usr/bin/env bash
# bench/service/device_check.sh — what the GPU machine checks of the GPU
# service in one call (device time is scarce): the pg_regress suite with
# gpudl.device = gpu through the service, the GPU shell tests (service tests
# on CUDA, GPU results and leaks, cancel, the cache across sessions), then
# the mixed and resident benchmarks.  Run inside the staged PostgreSQL with
# the service preloaded:
#   GPUDL_PG_CONF="shared_preload_libraries='gpudl'" bash .device/run.sh 'bash bench/service/device_check.sh'
set -uo pipefail
export GPUDL_PGHOST=/tmp GPUDL_PGPORT=5432 GPUDL_PGUSER=pg GPUDL_PGDATA=/tmp/pgdata GPUDL_SERVER_USER=pg
OUT="${OUT:-out}"; mkdir -p "$OUT"
sum="$OUT/summary.txt"
log() { echo "== $*" | tee -a "$sum"; }
log "service"
psql -X -c "CREATE EXTENSION IF NOT EXISTS gpudl" -c "SELECT state, device, device_budget_bytes FROM gpudl_service_status()" 2>&1 | tee -a "$sum"
log "pg_regress with gpudl.device = gpu through the service"
mkdir -p test/out; chmod -R a+rwX test/out
PGOPTIONS="-c gpudl.device=gpu" timeout 300 make -s installcheck with_llvm=no NVCC= >"$OUT/installcheck_gpu.txt" 2>&1
grep -E "^test|tests" "$OUT/installcheck_gpu.txt" | tee -a "$sum"
cp test/out/regression.diffs "$OUT/regression_gpu.diffs" 2>/dev/null
log "shell tests"
for t in ${TESTS:-test/t/10_service.sh test/t/04_gpu.sh test/t/03_cancel.sh test/t/06_cache_sessions.sh}; do
  GPUDL_SERVICE_BACKEND=cuda timeout 240 bash "$t" >"$OUT/$(basename "$t").txt" 2>&1
  echo "$t rc=$?" | tee -a "$sum"
  tail -4 "$OUT/$(basename "$t").txt" >>"$sum"
done
log "benchmarks"
GRAPH_DIR="${GRAPH_DIR:-$PWD/.device/graphs}" timeout 200 bash bench/service/run.sh ${PHASES:-mixed resident} >"$OUT/bench.txt" 2>&1
cat "$OUT/service.md" >>"$sum"
grep -c "fatal signal" /tmp/pg.log 2>/dev/null | sed 's/^/service faults: /' | tee -a "$sum"
tail -40 "$sum"

#!/usr/bin/env bash
# bench/gpu/kg_device.sh — issue 21 on the GPU machine, in one go:
#   1. the 10 M-fact synthetic KG of bench/mine mined (max_body 3, anytime
#      budget MINE_SECONDS) and QUERIES random queries answered, on the GPU
#      (mining; prediction on the CPU threads) and on the 16 CPU cores;
#   2. FB15k-237's test split through SQL (bench/kg/eval.sh) with the
#      settings chosen on its valid split (environment, as eval.sh reads
#      them), gpudl.device = gpu and = cpu.
# Run inside the staged PostgreSQL, the graph staged under .device/kg:
#   bash .device/run.sh 'bash bench/gpu/kg_device.sh'
# Logs and results go to $OUT (or out/ when unset).
set -uo pipefail
export GPUDL_PGHOST=/tmp GPUDL_PGPORT=5432 GPUDL_PGUSER=pg
OUT="${OUT:-out}"; mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi -L 2>&1 | tee "$OUT/nvidia-smi.txt"
log "build the CUDA module and bench_mine here"
make -s cuda/gpudl_cuda.so >"$OUT/build.txt" 2>&1 && cp cuda/gpudl_cuda.so "$(pg_config --pkglibdir)/gpudl_cuda.so.new" \
  && mv -f "$(pg_config --pkglibdir)/gpudl_cuda.so.new" "$(pg_config --pkglibdir)/gpudl_cuda.so" || tail -20 "$OUT/build.txt"
make -s -C bench/mine >>"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
q="${QUERIES:-100000}" budget="${MINE_SECONDS:-60}"
if [ "${SKIP_SYNTH:-0}" != 1 ]; then
  log "synthetic KG, 10 M facts: GPU mining (max_body 3, max_seconds $budget), $q queries"
  timeout 300 bench/mine/bin/bench_mine -b 3 -e 1000000 -f 100000 -T 16 -A "$budget" -q "$q" -c \
    -g "$PWD/cuda/gpudl_cuda.so" 2>&1 | tee "$OUT/synth_gpu.txt" | tail -6 | tee -a "$OUT/summary.txt"
  log "synthetic KG, 10 M facts: 16 CPU threads (max_body 3, max_seconds $budget), $q queries"
  timeout 300 bench/mine/bin/bench_mine -b 3 -e 1000000 -f 100000 -T 16 -A "$budget" -q "$q" \
    2>&1 | tee "$OUT/synth_cpu.txt" | tail -6 | tee -a "$OUT/summary.txt"
fi
for dev in ${FB_DEVICES:-gpu cpu}; do
  log "FB15k-237 test split through SQL, gpudl.device = $dev"
  DATA_ROOT="$PWD/.device/kg" SPLIT=test DEVICE=$dev timeout 400 bash bench/kg/eval.sh fb15k-237 \
    >"$OUT/fb15k237_$dev.txt" 2>&1
  grep -E "^(==|graph|loading|mining|prediction|scoring)" "$OUT/fb15k237_$dev.txt" | tee -a "$OUT/summary.txt"
  grep -A3 "^overall" "$OUT/fb15k237_$dev.txt" | tail -1 | tee -a "$OUT/summary.txt"
done

#!/usr/bin/env bash
# bench/analysis/device.sh — CSPA, CSDA and Andersen on extracted facts on
# the GPU machine (issue 23): builds the CUDA module and standalone.c there,
# then runs every derived relation on the GPU and on 16 CPU threads (median
# of 3 each, a timeout per program).
#   bash .device/run.sh 'FACTS=.device/analysis bash bench/analysis/device.sh'
# Results in $OUT/analysis.txt.
set -uo pipefail
OUT="${OUT:-out}"; mkdir -p "$OUT"
FACTS="${FACTS:-.device/analysis}"
TIMEOUT="${TIMEOUT:-150}"
log() { echo "== $(date +%T) $*" | tee -a "$OUT/analysis.txt"; }
log "build"
make -s cuda/gpudl_cuda.so >"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
cc -O2 -std=gnu11 -pthread -o gdl_analysis bench/analysis/standalone.c test/unit/test_host.c \
  src/{core,lang,plan,exec,cpu,ilp,mine}/[a-z]*.c -lm -ldl >>"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
wc -l "$FACTS"/*.tsv | tee -a "$OUT/analysis.txt"
for dev in gpu cpu; do
  for prog in andersen:pt csda:null cspa:valueFlow,memoryAlias,valueAlias; do
    dl=${prog%%:*}; goals=$(echo "${prog#*:}" | tr , ' ')
    log "$dl on $dev"
    GDL_DEVICE=$dev GDL_THREADS=16 GDL_CUDA_LIB=cuda/gpudl_cuda.so timeout "$TIMEOUT" \
      ./gdl_analysis "$FACTS" "bench/analysis/$dl.dl" $goals 2>&1 | tee -a "$OUT/analysis.txt"
    [ "${PIPESTATUS[0]}" = 124 ] && echo "$dl on $dev: > $TIMEOUT s (stopped)" | tee -a "$OUT/analysis.txt"
  done
done
log "done"

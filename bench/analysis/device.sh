#!/usr/bin/env bash
# bench/analysis/device.sh — CSPA, CSDA and Andersen on extracted facts on
# the GPU machine (issue 23): builds the CUDA module and standalone.c there,
# then runs every derived relation on the GPU and on 16 CPU threads (median
# of 3 each, one run when the first takes more than 20 s; a timeout per
# program), over one or more fact directories, smallest first (run.sh on a
# subset of a code base makes the smaller ones: a whole code base's CSPA can
# be larger than a run has time for).
#   bash .device/run.sh 'FACTS=".device/an_lang .device/analysis" bash bench/analysis/device.sh'
# CPU runs of CSPA time valueAlias only (the three relations are one
# stratum: every goal runs all of it).  GDL_TRACE=1 adds the rounds, the
# tuples and the time of join / dedup / difference / merge to each line.
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
for facts in $FACTS; do
  wc -l "$facts"/*.tsv | tee -a "$OUT/analysis.txt"
  for dev in gpu cpu; do
    for prog in andersen:pt csda:null cspa:valueFlow,memoryAlias,valueAlias; do
      dl=${prog%%:*}; goals=$(echo "${prog#*:}" | tr , ' ')
      [ "$dev" = cpu ] && [ "$dl" = cspa ] && goals=valueAlias
      log "$facts: $dl on $dev"
      GDL_DEVICE=$dev GDL_THREADS=16 GDL_CUDA_LIB=cuda/gpudl_cuda.so timeout "$TIMEOUT" \
        ./gdl_analysis "$facts" "bench/analysis/$dl.dl" $goals 2>&1 | grep -v '^log:' | tee -a "$OUT/analysis.txt"
      [ "${PIPESTATUS[0]}" = 124 ] && echo "$dl on $dev: > $TIMEOUT s (stopped)" | tee -a "$OUT/analysis.txt"
    done
  done
done
log "done"

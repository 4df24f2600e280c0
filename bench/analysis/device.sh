#!/usr/bin/env bash
# bench/analysis/device.sh — CSPA, CSDA and Andersen on extracted facts on
# the GPU machine (issue 23): builds the CUDA module and standalone.c there,
# then runs every derived relation on the GPU over one or more fact
# directories, smallest first, and then on 16 CPU threads over those the GPU
# finished (median of 3 each, one run when the first takes more than 20 s; a
# timeout per program and device).  run.sh on a subset of a code base makes
# the smaller inputs: a whole code base's CSPA can be larger than a run has
# time for, and the CPU is only timed where the GPU's answer is known.
#   bash .device/run.sh 'FACTS=".device/an_lang .device/analysis" bash bench/analysis/device.sh'
# Settings: FACTS (directories), PROGRAMS (default "andersen csda cspa"),
# GPU_TIMEOUT and CPU_TIMEOUT (seconds a program may run, default 150 each),
# THREADS (CPU threads, default 16), CUDA_LIB (a built gpudl_cuda.so, e.g.
# the staged one, instead of building cuda/ here).  CPU runs of CSPA time valueAlias only
# (the three relations are one stratum: every goal runs all of it).
# GDL_TRACE=1 adds the rounds, the tuples and the time of join / dedup /
# difference / merge to each line.  Results in $OUT/analysis.txt.
set -uo pipefail
OUT="${OUT:-out}"; mkdir -p "$OUT"
FACTS="${FACTS:-.device/analysis}"
PROGRAMS="${PROGRAMS:-andersen csda cspa}"
GPU_TIMEOUT="${GPU_TIMEOUT:-${TIMEOUT:-150}}"
CPU_TIMEOUT="${CPU_TIMEOUT:-${TIMEOUT:-150}}"
THREADS="${THREADS:-16}"
CUDA_LIB="${CUDA_LIB:-}"
log() { echo "== $(date +%T) $*" | tee -a "$OUT/analysis.txt"; }

# the goals of program $1 on device $2
goals_of() {
  case "$1" in
    andersen) echo pt ;;
    csda) echo null ;;
    cspa) if [ "$2" = cpu ]; then echo valueAlias; else echo valueFlow memoryAlias valueAlias; fi ;;
  esac
}

# run program $2 over facts $1 on device $3 with timeout $4; returns 124 when stopped
run_one() {
  local facts=$1 dl=$2 dev=$3 limit=$4 rc
  log "$facts: $dl on $dev"
  GDL_DEVICE=$dev GDL_THREADS=$THREADS GDL_CUDA_LIB=${CUDA_LIB:-cuda/gpudl_cuda.so} timeout "$limit" \
    ./gdl_analysis "$facts" "bench/analysis/$dl.dl" $(goals_of "$dl" "$dev") 2>&1 | grep -v '^log:' | tee -a "$OUT/analysis.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 124 ] && echo "$dl on $dev: > $limit s (stopped)" | tee -a "$OUT/analysis.txt"
  return "$rc"
}

log "build"
[ -n "$CUDA_LIB" ] || make -s -j16 cuda/gpudl_cuda.so >"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
cc -O2 -std=gnu11 -pthread -o gdl_analysis bench/analysis/standalone.c test/unit/test_host.c \
  src/{core,lang,plan,exec,cpu,ilp,mine}/[a-z]*.c -lm -ldl >>"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
declare -A gpu_done=()
for facts in $FACTS; do
  wc -l "$facts"/*.tsv | tee -a "$OUT/analysis.txt"
  for dl in $PROGRAMS; do
    run_one "$facts" "$dl" gpu "$GPU_TIMEOUT" && gpu_done["$facts/$dl"]=1
  done
done
for facts in $FACTS; do
  for dl in $PROGRAMS; do
    if [ -n "${gpu_done[$facts/$dl]:-}" ]; then run_one "$facts" "$dl" cpu "$CPU_TIMEOUT"
    else log "$facts: $dl on cpu skipped (the GPU did not finish it)"; fi
  done
done
log "done"

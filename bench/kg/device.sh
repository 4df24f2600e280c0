#!/usr/bin/env bash
# bench/kg/device.sh — a knowledge graph's link prediction on the GPU machine
# (issue 21's "under 60 s on the H200"): kg_eval's phases (the core without a
# database) at each thread count of THREADS_LIST, then bench/kg/eval.sh
# through SQL on the staged PostgreSQL with the phases logged.  The settings
# are auto.sh's choice for FB15k-237 on the valid split (docs/BENCHMARKS.md);
# override with the eval.sh variables.  Results in $OUT/kg_device.txt.
#   bash .device/run.sh 'bash bench/kg/device.sh'
# Settings: NAME (graph, default fb15k-237), DATA (folder holding it,
# default .device/kg), SPLIT (default test), THREADS_LIST (default "16"),
# SQL (0 skips the SQL run), DEVICE (gpudl.device for it, default cpu),
# AGG (eval.sh's aggregation, default weighted: weights fitted on valid).
set -uo pipefail
OUT="${OUT:-out}"; mkdir -p "$OUT"
NAME="${NAME:-fb15k-237}"; DATA="${DATA:-.device/kg}"; SPLIT="${SPLIT:-test}"
log() { echo "== $(date +%T) $*" | tee -a "$OUT/kg_device.txt"; }
log "build kg_eval"
make -s -C bench/mine bin/kg_eval >"$OUT/build.txt" 2>&1 || { tail -20 "$OUT/build.txt"; exit 1; }
for t in ${THREADS_LIST:-16}; do
  log "kg_eval $NAME $SPLIT, $t threads"
  bench/mine/bin/kg_eval "$DATA/$NAME" -x "$SPLIT" -b 3 -K -B 1 -h 0 -s 5 -T "$t" -a kind -S 2 2>&1 | tee -a "$OUT/kg_device.txt"
done
if [ "${SQL:-1}" != 0 ]; then
  log "eval.sh $NAME $SPLIT through SQL, device ${DEVICE:-cpu}"
  export GPUDL_PGHOST="${PGHOST:-/tmp}" GPUDL_PGPORT="${PGPORT:-5432}" GPUDL_PGUSER="${PGUSER:-pg}"
  PHASES=1 KG_CACHE=1 DATA_ROOT="$PWD/$DATA" SPLIT="$SPLIT" MAX_BODY=3 CONSTANTS=true MAX_BODY_CONST=1 \
    CONST_HC=0 MIN_SUPPORT=5 AGG="${AGG:-weighted}" CONF=std SMOOTH=2 DEVICE="${DEVICE:-cpu}" \
    bash bench/kg/eval.sh "$NAME" 2>&1 | tee -a "$OUT/kg_device.txt"
fi
log "done"

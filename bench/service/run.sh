#!/usr/bin/env bash
# bench/service/run.sh — the GPU service under many sessions (issue 10):
#   conc      8 and 16 sessions at once, each TC of p2p-Gnutella31, under
#             gpudl.device = gpu and auto, against the same queries one after
#             another on the GPU (wall time ratio), every answer checked
#   cpu16     16 sessions at once with gpudl.device = cpu (CPU_GRAPH)
#   mixed     8 large (p2p-Gnutella31) and 8 small (ego-Facebook) at once:
#             how long the small ones take
#   latency   first query of 20 fresh connections vs a warm session (TC of
#             ego-Facebook), median
#   resident  8 sessions gpudl_load the same table: device bytes held
# Needs gpudl in shared_preload_libraries (the service).  On the GPU machine:
#   GPUDL_PG_CONF="shared_preload_libraries='gpudl'" bash .device/run.sh 'bash bench/service/run.sh conc mixed latency'
# Writes $OUT/service.md (and per-session files under $OUT/runs).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
phases=" $* "
md="$OUT/service.md"
BIG="${BIG:-p2p-Gnutella31}"; BIG_TC="${BIG_TC:-884179859}"
SMALL="${SMALL:-ego-Facebook}"
q -c "CREATE EXTENSION IF NOT EXISTS gpudl"
echo "## GPU service: $(date -u +%F) on $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no GPU'), $(nproc) cores" | tee -a "$md"
q -c "SELECT state, device, device_budget_bytes >> 20 AS budget_mb, slots FROM gpudl_service_status()" | tee -a "$md"

if [[ "$phases" == *" conc "* || "$phases" == *" mixed "* ]]; then
  load_graph "$BIG" big tcbig
fi
if [[ "$phases" == *" mixed "* || "$phases" == *" latency "* || "$phases" == *" resident "* ]]; then
  load_graph "$SMALL" small tcsmall
  SMALL_TC=$(q -c "SELECT gpudl_count('tcsmall', 'tc(X,Y)')")
fi

if [[ "$phases" == *" conc "* ]]; then
  echo | tee -a "$md"
  echo "### $BIG TC ($BIG_TC tuples), N sessions at once" | tee -a "$md"
  one_run "$OUT/warm" gpu tcbig   # warm-up: the service learns the run's peak
  echo "warm-up: $(cat "$OUT/warm.out")" | tee -a "$md"
  q -c "SELECT gpudl_count('tcbig','tc(X,Y)')" -c "SELECT value FROM gpudl_stats() WHERE name = 'last_peak_device_bytes'" | tail -1 | awk '{printf "peak device bytes of one run: %.1f GB\n", $1/1e9}' | tee -a "$md"
  echo "| sessions | device | batch wall s | one after another s | ratio | correct | cpu fallbacks |" | tee -a "$md"
  echo "| --- | --- | --- | --- | --- | --- | --- |" | tee -a "$md"
  for n in 8 16; do
    t0=$(now); for i in $(seq 1 "$n"); do one_run "$OUT/seq$i" gpu tcbig; done; t1=$(now)
    seq_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')
    for dev in gpu auto; do
      wall=$(batch "$n" "$dev" tcbig "$OUT/runs/conc_${n}_$dev")
      ok=$(check_batch "$OUT/runs/conc_${n}_$dev" "$BIG_TC")
      echo "| $n | $dev | $wall | $seq_s | $(awk -v a="$wall" -v b="$seq_s" 'BEGIN {printf "%.2f", a / b}') | $ok/$n | see log |" | tee -a "$md"
      grep -v "^$BIG_TC " "$OUT/runs/conc_${n}_$dev"/*.out | head -3 | tee -a "$md"
    done
  done
fi

if [[ "$phases" == *" cpu16 "* ]]; then
  CPU_GRAPH="${CPU_GRAPH:-p2p-Gnutella04}"
  load_graph "$CPU_GRAPH" cpug tccpu
  want=$(PGOPTIONS="-c gpudl.device=gpu" q -c "SELECT gpudl_count('tccpu', 'tc(X,Y)')")
  echo | tee -a "$md"
  echo "### 16 sessions at once, gpudl.device = cpu, TC of $CPU_GRAPH ($want tuples)" | tee -a "$md"
  wall=$(batch 16 cpu tccpu "$OUT/runs/cpu16")
  ok=$(check_batch "$OUT/runs/cpu16" "$want")
  echo "batch wall: $wall s, correct: $ok/16; server restarts: $(grep -c 'terminated by signal' /tmp/pg.log 2>/dev/null)" | tee -a "$md"
fi

if [[ "$phases" == *" mixed "* ]]; then
  echo | tee -a "$md"
  echo "### mixed: 8 x $BIG TC and 8 x $SMALL TC at once (gpudl.device = gpu)" | tee -a "$md"
  one_run "$OUT/alone" gpu tcbig
  rm -rf "$OUT/runs/mixed"; mkdir -p "$OUT/runs/mixed"
  t0=$(now)
  for i in $(seq 1 8); do one_run "$OUT/runs/mixed/big$i" gpu tcbig & sleep 0.05; one_run "$OUT/runs/mixed/small$i" gpu tcsmall & done
  wait; t1=$(now)
  echo "one large run alone: $(awk '{print $2}' "$OUT/alone.out") s; batch wall $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') s" | tee -a "$md"
  echo "small runs (s): $(awk '{print $2}' "$OUT"/runs/mixed/small*.out | sort -g | tr '\n' ' ')" | tee -a "$md"
  echo "large runs (s): $(awk '{print $2}' "$OUT"/runs/mixed/big*.out | sort -g | tr '\n' ' ')" | tee -a "$md"
  echo "small correct: $(cat "$OUT"/runs/mixed/small*.out | awk -v w="$SMALL_TC" '$1 == w' | wc -l)/8, large correct: $(cat "$OUT"/runs/mixed/big*.out | awk -v w="$BIG_TC" '$1 == w' | wc -l)/8" | tee -a "$md"
fi

if [[ "$phases" == *" latency "* ]]; then
  echo | tee -a "$md"
  echo "### first query of a fresh connection (TC of $SMALL on the GPU), 20 connections" | tee -a "$md"
  : >"$OUT/fresh_query.txt"
  for i in $(seq 1 20); do
    t0=$(now)
    printf '\\timing on\nSELECT gpudl_count(%s);\n' "'tcsmall','tc(X,Y)'" | PGOPTIONS="-c gpudl.device=gpu" psql -X -At 2>&1 \
      | grep '^Time' | awk '{print $2/1000}' >>"$OUT/fresh_query.txt"
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", b - a}'
  done >"$OUT/fresh.txt"
  # a warm session: the same query 20 times in one connection, client-side timing
  { echo '\timing on'; for i in $(seq 1 21); do echo "SELECT gpudl_count('tcsmall','tc(X,Y)');"; done; } \
    | PGOPTIONS="-c gpudl.device=gpu" psql -X -At 2>&1 | grep '^Time' | tail -20 | awk '{print $2/1000}' >"$OUT/warm.txt"
  # a fresh connection's baseline without any gpudl call (connection set-up)
  for i in $(seq 1 20); do t0=$(now); q -c "SELECT 1" >/dev/null; t1=$(now); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", b - a}'; done >"$OUT/connect.txt"
  echo "fresh connection, first GPU query (incl. connect): median $(median <"$OUT/fresh.txt") s" | tee -a "$md"
  echo "fresh connection, SELECT 1 (connect only): median $(median <"$OUT/connect.txt") s" | tee -a "$md"
  echo "fresh connection, first GPU query alone (server round trip, psql \\timing): median $(median <"$OUT/fresh_query.txt") s" | tee -a "$md"
  echo "warm session, same query: median $(median <"$OUT/warm.txt") s" | tee -a "$md"
fi

if [[ "$phases" == *" resident "* ]]; then
  echo | tee -a "$md"
  echo "### one table loaded by 8 sessions (gpudl_load of $SMALL's edges)" | tee -a "$md"
  before=$(q -c "SELECT device_committed_bytes FROM gpudl_service_status()")
  for i in $(seq 1 8); do
    ( PGOPTIONS="-c gpudl.device=gpu" q -c "SELECT gpudl_load('small')" -c "SELECT gpudl_count('tcsmall','tc(X,Y)')" -c "SELECT pg_sleep(4)" >"$OUT/res$i.out" 2>&1 & )
  done
  sleep 2.5
  q -c "SELECT relation, rows, bytes, device FROM gpudl_cache_status() WHERE relation = 'small'::regclass" 2>&1 | tee -a "$md" || true
  after=$(q -c "SELECT device_committed_bytes FROM gpudl_service_status()")
  echo "device bytes committed before: $before, with 8 sessions holding the table: $after" | tee -a "$md"
  wait; sleep 2
fi
echo "done" | tee -a "$md"

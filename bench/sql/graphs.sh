#!/usr/bin/env bash
# bench/sql/graphs.sh — TC and SG over the benchmark graphs through SQL:
# gpudl_count end to end and the engine's own time (gpudl_stats), gpudl_materialize
# of TC, against WITH RECURSIVE in the same run.  Medians of RUNS runs.
#
#   bash bench/sql/graphs.sh                      # private cluster of this checkout
#   DEVICE=gpu RUNS=5 GRAPHS="CA-HepTh SF.cedge" bash bench/sql/graphs.sh
#
# Settings (environment): GRAPHS (names in shared/data/graphs), DEVICE (cpu|gpu|auto),
# RUNS (default 3), WORKLOADS (default "tc sg"; also tcnl, TC written non-linearly),
# RECURSIVE_TIMEOUT_S (0 skips WITH
# RECURSIVE; default 120), MATERIALIZE (1: also time gpudl_materialize of TC),
# GRAPH_DIR, LOADED (1: gpudl_load the edge table in the timed session first, so
# a GPU run reads it from device memory).  Output: two markdown tables on stdout —
# times (peak RSS of the backend from /proc), then the last timed run's per-phase
# breakdown: ms and kernel launches of load, join, dedup, difference, merge, CUB
# calls, bytes moved each way, peak device memory.
# Connection: PGHOST/PGPORT/... as set; without them, tools/pgenv.sh's private cluster.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../common/lib.sh"
bench_defaults GRAPH_DIR="$here/../../../shared/data/graphs" GRAPHS="p2p-Gnutella04 CA-HepTh ego-Facebook SF.cedge" \
  DEVICE=auto RUNS=3 WORKLOADS="tc sg" RECURSIVE_TIMEOUT_S=120 MATERIALIZE=1 LOADED=0
bench_sql_db gpudl_bench

bench_fresh_db
q -c "CREATE EXTENSION gpudl" -c "
CREATE FUNCTION bench_count(prog text, goal text, dev text) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; n bigint; e bigint; it bigint; b0 bigint; f0 bigint; x0 bigint; d text;
BEGIN
  PERFORM set_config('gpudl.device', dev, true);
  SELECT value INTO b0 FROM gpudl_stats() WHERE name = 'bytes_to_device';
  SELECT value INTO f0 FROM gpudl_stats() WHERE name = 'bytes_from_device';
  SELECT value INTO x0 FROM gpudl_stats() WHERE name = 'device_transfers';
  t0 := clock_timestamp();
  n := gpudl_count(prog, goal);
  SELECT value INTO e FROM gpudl_stats() WHERE name = 'last_us_total';
  SELECT value INTO it FROM gpudl_stats() WHERE name = 'last_iterations';
  -- breakdown: ms per phase, launches per phase, CUB calls, bytes in/out, peak device bytes
  SELECT string_agg(CASE WHEN name LIKE 'last_us%' THEN round(value / 1e3, 1)::text ELSE value::text END, ' '
                    ORDER BY array_position(ARRAY['last_us_load', 'last_us_join', 'last_us_dedup', 'last_us_difference',
                      'last_us_merge', 'last_launches_load', 'last_launches_join', 'last_launches_dedup',
                      'last_launches_difference', 'last_launches_merge', 'last_launches', 'last_library_calls',
                      'last_peak_device_bytes'], name))
    INTO d FROM gpudl_stats()
   WHERE name IN ('last_us_load', 'last_us_join', 'last_us_dedup', 'last_us_difference', 'last_us_merge',
                  'last_launches_load', 'last_launches_join', 'last_launches_dedup', 'last_launches_difference',
                  'last_launches_merge', 'last_launches', 'last_library_calls', 'last_peak_device_bytes');
  RETURN n || ' ' || round(extract(epoch FROM clock_timestamp() - t0)::numeric, 4) || ' ' || round(e / 1e6, 4) || ' ' || it
    || ' ' || d
    || ' ' || ((SELECT value FROM gpudl_stats() WHERE name = 'bytes_to_device') - b0)
    || ' ' || ((SELECT value FROM gpudl_stats() WHERE name = 'bytes_from_device') - f0)
    || ' ' || ((SELECT value FROM gpudl_stats() WHERE name = 'device_transfers') - x0);
END \$\$;
CREATE FUNCTION bench_sql(query text) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz := clock_timestamp(); n bigint;
BEGIN
  EXECUTE query INTO n;
  RETURN n || ' ' || round(extract(epoch FROM clock_timestamp() - t0)::numeric, 3);
END \$\$;"

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "| graph | workload | tuples | iterations | device | engine s (median) | gpudl_count s (median) | WITH RECURSIVE s | ratio | peak backend RSS MB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
breakdown=""
for g in $GRAPHS; do
  t="e_$(echo "$g" | tr -c 'a-zA-Z0-9\n' '_' | tr 'A-Z' 'a-z')"
  q -c "CREATE TABLE $t(a int, b int)" -c "\\copy $t FROM '$GRAPH_DIR/$g.txt'" -c "ANALYZE $t"
  q -c "SELECT gpudl_create_program('tc_$t', 'tc(X, Y) :- $t(X, Y). tc(X, Z) :- tc(X, Y), $t(Y, Z).')" >/dev/null
  q -c "SELECT gpudl_create_program('tcnl_$t', 'tcnl(X, Y) :- $t(X, Y). tcnl(X, Z) :- tcnl(X, Y), tcnl(Y, Z).')" >/dev/null
  q -c "SELECT gpudl_create_program('sg_$t', 'sg(X, Y) :- $t(P, X), $t(P, Y), X != Y. sg(X, Y) :- $t(A, X), sg(A, B), $t(B, Y).')" >/dev/null
  for w in $WORKLOADS; do
    goal="$w(X, Y)"
    engine=(); e2e=(); tuples=""; iters=""
    # one session per workload: the warm-up run, RUNS timed runs, then the
    # backend's peak RSS (VmHWM) for this workload
    res=$( { [ "$LOADED" = 1 ] && echo "SELECT 'loaded ' || gpudl_load('$t');"
             for i in $(seq 0 "$RUNS"); do echo "SELECT bench_count('${w}_$t', '$goal', '$DEVICE');"; done
             echo "SELECT 'rss ' || (regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+)'))[1];"; } \
           | q -f - 2>&1) || true
    lines=$(echo "$res" | grep -E '^[0-9]+ ' | tail -n +2)   # drop the warm-up run
    tuples=$(echo "$lines" | head -1 | awk '{print $1}')
    iters=$(echo "$lines" | head -1 | awk '{print $4}')
    e2e_m=$(echo "$lines" | awk '{print $2}' | median)
    eng_m=$(echo "$lines" | awk '{print $3}' | median)
    rss=$(echo "$res" | awk '/^rss/ {printf "%d", $2 / 1024}')
    [ -n "$tuples" ] || { echo "| $g | $w | failed: $(echo "$res" | grep -m1 ERROR) | | | | | | | |"; continue; }
    rec="-"; ratio="-"
    if [ "$RECURSIVE_TIMEOUT_S" != 0 ]; then
      if [ "$w" = tc ] || [ "$w" = tcnl ]; then
        sql="WITH RECURSIVE r(a, b) AS (SELECT a, b FROM $t UNION SELECT r.a, e.b FROM r JOIN $t e ON e.a = r.b) SELECT count(*) FROM r"
      else
        sql="WITH RECURSIVE s(x, y) AS (SELECT e1.b, e2.b FROM $t e1 JOIN $t e2 ON e1.a = e2.a WHERE e1.b <> e2.b UNION SELECT e1.b, e2.b FROM s JOIN $t e1 ON e1.a = s.x JOIN $t e2 ON e2.a = s.y) SELECT count(*) FROM s"
      fi
      r=$(PGOPTIONS="-c statement_timeout=${RECURSIVE_TIMEOUT_S}s -c work_mem=1GB" q -c "SELECT bench_sql(\$q\$$sql\$q\$)" 2>/dev/null) || r=""
      if [ -n "$r" ]; then
        rec=$(echo "$r" | awk '{print $2}')
        [ "$(echo "$r" | awk '{print $1}')" = "$tuples" ] || rec="$rec (count differs!)"
        ratio=$(awk -v a="$(echo "$r" | awk '{print $2}')" -v b="$e2e_m" 'BEGIN {printf "%.1fx", a / b}')
      else
        rec="> $RECURSIVE_TIMEOUT_S"; ratio="> $(awk -v a="$RECURSIVE_TIMEOUT_S" -v b="$e2e_m" 'BEGIN {printf "%.1fx", a / b}')"
      fi
    fi
    echo "| $g | $w | $tuples | $iters | $DEVICE | $eng_m | $e2e_m | $rec | $ratio | $rss |"
    # the last timed run's breakdown
    breakdown+=$(echo "$lines" | tail -1 | awk -v g="$g" -v w="$w" -v d="$DEVICE" -v l="$LOADED" '{
      printf "| %s | %s | %s%s | %s | %s | %s | %s | %s | %s | %s / %s / %s / %s / %s = %s | %s | %s | %.1f | %.3f | %.1f |\n",
        g, w, d, (l == 1 ? " (loaded)" : ""), $3 * 1000, $5, $6, $7, $8, $9,
        $10, $11, $12, $13, $14, $15, $16, $20, $18 / 1e6, $19 / 1e6, $17 / 1048576 }')$'\n'
  done
  if [ "$MATERIALIZE" = 1 ]; then
    m=$(q -c "SELECT set_config('gpudl.device', '$DEVICE', false)" -c "SELECT bench_sql(\$q\$SELECT gpudl_materialize('tc_$t', 'tc', 'tc_out')\$q\$)" | tail -1)
    echo "| $g | tc materialize | $(echo "$m" | awk '{print $1}') | | $DEVICE | | $(echo "$m" | awk '{print $2}') | | | |"
    q -c "DROP TABLE tc_out"
  fi
done
echo
echo "Breakdown of the last timed run (ms; launches = the backend's own kernels load / join / dedup / difference / merge = all; CUB = library algorithm calls, 1-4 kernels each):"
echo
echo "| graph | workload | device | engine ms | load ms | join ms | dedup ms | difference ms | merge ms | launches | CUB calls | transfers | MB to device | MB from device | peak device MiB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf "%s" "$breakdown"

#!/usr/bin/env bash
# bench/pushdown/run.sh — a bound goal evaluated goal-directed (WHERE pushed
# into the goal, magic sets) against the full transitive closure filtered
# afterwards, on CA-HepTh:
#
#   anc(X, Y) :- edge(X, Y).
#   anc(X, Y) :- anc(X, Z), edge(Z, Y).
#   SELECT ... FROM gpudl_query('...', 'anc(X, Y)') AS t(a int, b int) WHERE a = <node>
#
# Configurations (one psql session each, a warm-up run first, then the median
# of the timed runs as psql's \timing reports them, end to end):
#   pushdown        WHERE a = node pushed into the goal, goal-directed evaluation
#   pushdown-rows   the same, answer rows decoded and summed in SQL
#   direct          SELECT gpudl_count(p, 'anc(node, Y)') (constant in the goal)
#   full-engine     gpudl.enable_magic = off: the whole closure, the goal filters in the engine
#   full-sql        gpudl.enable_pushdown = off: the whole closure out of the engine,
#                   WHERE a = node filters in PostgreSQL
#
#   bash bench/pushdown/run.sh                       # private cluster of this checkout
#   RUNS=7 FULL_RUNS=3 NODE=24325 bash bench/pushdown/run.sh
#
# Settings (environment): RUNS (bound runs, default 5), FULL_RUNS (full-closure
# runs, default 3), NODE (default 24325, in the giant component), DEVICE
# (cpu|gpu|auto, default auto), GRAPH_DIR.  Output: a markdown table on stdout.
# Connection: PGHOST/PGPORT/... as set; without them, tools/pgenv.sh's private cluster.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../common/lib.sh"
bench_defaults GRAPH_DIR="$here/../../../shared/data/graphs" RUNS=5 FULL_RUNS=3 NODE=24325 DEVICE=auto
[ -f "$GRAPH_DIR/CA-HepTh.txt" ] || GRAPH_DIR=/work/shared/data/graphs
bench_sql_db gpudl_bench_pushdown

bench_fresh_db
q -c "CREATE EXTENSION gpudl" -c "CREATE TABLE edge(a int, b int)" \
  -c "\\copy edge FROM '$GRAPH_DIR/CA-HepTh.txt'" -c "ANALYZE edge" \
  -c "SELECT gpudl_create_program('anc', 'anc(X, Y) :- edge(X, Y). anc(X, Y) :- anc(X, Z), edge(Z, Y).')" >/dev/null

# time_query NAME N SETTING QUERY: warm-up, then N timed runs; prints "name median_ms answer"
time_query() {
  local name=$1 n=$2 setting=$3 query=$4 out times answer median
  out=$( { echo "SET gpudl.device = '$DEVICE';"; echo "$setting"; echo "$query"; echo '\timing on';
           for _ in $(seq "$n"); do echo "$query"; done; } | q 2>&1)
  times=$(echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
  answer=$(echo "$out" | grep -v '^Time:' | head -1)
  median=$(echo "$times" | sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}')
  echo "$name $median $answer"
}

bound="SELECT count(*) FROM gpudl_query('anc', 'anc(X, Y)') AS t(a int, b int) WHERE a = $NODE;"
rows="SELECT count(*) || '/' || sum(b) FROM gpudl_query('anc', 'anc(X, Y)') AS t(a int, b int) WHERE a = $NODE;"
direct="SELECT gpudl_count('anc', 'anc($NODE, Y)');"

results=$(
  time_query pushdown "$RUNS" "" "$bound"
  time_query pushdown-rows "$RUNS" "" "$rows"
  time_query direct "$RUNS" "" "$direct"
  time_query full-engine "$FULL_RUNS" "SET gpudl.enable_magic = off;" "$bound"
  time_query full-sql "$FULL_RUNS" "SET gpudl.enable_pushdown = off;" "$rows"
)

# tuples derived by each evaluation
derived_bound=$(q -c "SET gpudl.device = '$DEVICE'" -c "$direct" \
  -c "SELECT value FROM gpudl_stats() WHERE name = 'last_tuples_derived'" | tail -1)
derived_full=$(q -c "SET gpudl.device = '$DEVICE'" -c "SET gpudl.enable_magic = off" -c "$direct" \
  -c "SELECT value FROM gpudl_stats() WHERE name = 'last_tuples_derived'" | tail -1)
plan=$(q -c "SET gpudl.explain_machine_details = off" \
  -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $bound")

full_sql=$(echo "$results" | awk '$1 == "full-sql" {print $2}')
full_engine=$(echo "$results" | awk '$1 == "full-engine" {print $2}')
echo "CA-HepTh (51,971 edges), anc($NODE, Y); device setting: $DEVICE; $(nproc) CPUs"
echo "runs: $RUNS bound, $FULL_RUNS full closure (medians, after one warm-up run each)"
echo
echo "| configuration | median ms | answer | vs full-sql | vs full-engine |"
echo "| --- | ---: | --- | ---: | ---: |"
echo "$results" | while read -r name ms answer; do
  awk -v n="$name" -v ms="$ms" -v a="$answer" -v fs="$full_sql" -v fe="$full_engine" \
    'BEGIN { printf "| %s | %.1f | %s | %.0fx | %.0fx |\n", n, ms, a, fs / ms, fe / ms }'
done
echo
echo "tuples derived: goal-directed $derived_bound, full closure $derived_full"
echo
echo '```'
echo "$plan"
echo '```'

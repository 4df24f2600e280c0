# bench/service/lib.sh — helpers of the GPU service benchmarks and tests:
# load a graph, run N sessions at once, time them.  Sourced.
GRAPH_DIR="${GRAPH_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/shared/data/graphs}"
OUT="${OUT:-out}"; mkdir -p "$OUT"

q() { psql -X -v ON_ERROR_STOP=1 -Atq "$@"; }
now() { date +%s.%N; }

# load_graph NAME TABLE PROGRAM: an edge table and a TC program over it
load_graph() {
  local g=$1 t=$2 p=$3
  q -c "DROP TABLE IF EXISTS $t" -c "CREATE TABLE $t(a int, b int)" \
    -c "\\copy $t FROM '$GRAPH_DIR/$g.txt'" -c "ANALYZE $t"
  q -c "SELECT gpudl_drop_program('$p') FROM gpudl.programs WHERE name = '$p'" >/dev/null
  q -c "SELECT gpudl_create_program('$p', 'tc(X,Y) :- $t(X,Y). tc(X,Z) :- tc(X,Y), $t(Y,Z).')" >/dev/null
}

# one_run TAG DEVICE PROGRAM: one session, one count; writes TAG.out: "count secs"
one_run() {
  local tag=$1 dev=$2 prog=$3 t0 t1 r
  t0=$(now)
  r=$(PGOPTIONS="-c gpudl.device=$dev ${EXTRA_OPTS:-}" q -c "SELECT gpudl_count('$prog', 'tc(X,Y)')" 2>&1 | tr '\n' ' ')
  t1=$(now)
  echo "$r $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')" >"$tag.out"
}

# batch N DEVICE PROGRAM DIR: N sessions at once; prints the wall time
batch() {
  local n=$1 dev=$2 prog=$3 dir=$4 t0 t1 i
  rm -rf "$dir"; mkdir -p "$dir"
  t0=$(now)
  for i in $(seq 1 "$n"); do one_run "$dir/s$i" "$dev" "$prog" & done
  wait
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}

# check_batch DIR EXPECTED: how many sessions answered EXPECTED
check_batch() {
  local dir=$1 want=$2
  cat "$dir"/*.out | awk -v w="$want" '$1 == w {ok++} END {print ok + 0}'
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

#!/usr/bin/env bash
# bench/analysis/run.sh — the standard program-analysis Datalog benchmarks
# (CSPA, CSDA, Andersen) on facts from real C code (issue 23): compiles a C
# code base to LLVM IR with clang-14, extracts the facts (extract.py), prints
# their sizes beside the published ones, then — when a PostgreSQL with gpudl
# answers — loads them into a fresh database and times gpudl_count of every
# derived relation (median of 3).
#
#   bash bench/analysis/run.sh                 # gpudl's own src/**/*.c
#   bash bench/analysis/run.sh ~/src/httpd     # any directories of .c files
#
# Settings (environment):
#   DEVICE    gpudl.device (default cpu)
#   WORK      where the .ll and .tsv files go (default /tmp/gpudl-analysis)
#   CFLAGS    extra clang flags (include directories of the code base, -D...)
#   KEEP=1    keep the database gpudl_analysis afterwards
#   PROGRAMS  which to time (default "andersen csda cspa"; CSPA on gpudl's
#             own sources does not finish on 2 CPU cores)
#   TIMEOUT   statement_timeout of each call (default 0: none)
#   SSA=1     promote locals to SSA values first (opt's mem2reg, as pointer
#             analyses such as SVF do): a local whose address is never taken
#             is no longer a memory cell, so loads and stores of it are
#             plain value flow (see README.md, "Front-end choices")
#   CLONE=N   context sensitivity: a call site copies its callee when the
#             callee's inlined subgraph has at most N facts (extract.py
#             --clone; default 0, context-insensitive)
# Connection: GPUDL_PGHOST / GPUDL_PGPORT / GPUDL_PGUSER (else PGHOST ...,
# /tmp, 54329, postgres), as bench/kg/eval.sh.  It starts no server; without
# one it stops after the fact sizes and says so.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$here/../common/lib.sh"
bench_defaults DEVICE=cpu WORK=/tmp/gpudl-analysis CLANG=clang-14 OPT=opt-14 SSA=0 CLONE=0 PROGRAMS="andersen csda cspa"
bench_connection
export PGOPTIONS="-c client_min_messages=warning -c gpudl.device=$DEVICE -c statement_timeout=${TIMEOUT:-0}"
db=gpudl_analysis
dirs=("$@")
default_flags=()
if [ ${#dirs[@]} -eq 0 ]; then
  dirs=("$root/src")
  default_flags=(-I"$root/src" -I"$(pg_config --includedir-server)")
fi
# published input sizes (reported, not measured here): Graspan/GDlog httpd
declare -A reported=([assign]="httpd ~360 K (reported)")

# compile every .c file under the directories to .ll in $WORK/ll (failures are counted, not fatal)
compile_all() {
  rm -rf "$WORK/ll" "$WORK/facts"; mkdir -p "$WORK/ll"
  local ok=0 bad=0 f out
  while IFS= read -r f; do
    out="$WORK/ll/$(echo "$f" | tr '/' '_' | sed 's/\.c$//').ll"
    if nice -n 15 "$CLANG" -S -emit-llvm -O0 -Xclang -disable-O0-optnone -fno-discard-value-names -w \
         "${default_flags[@]}" ${CFLAGS:-} -o "$out" "$f" 2>>"$WORK/clang.log" &&
       { [ "$SSA" != 1 ] || nice -n 15 "$OPT" -S -passes=mem2reg -o "$out" "$out" 2>>"$WORK/clang.log"; }
    then ok=$((ok + 1)); else bad=$((bad + 1)); fi
  done < <(find "${dirs[@]}" -name '*.c' -type f | LC_ALL=C sort)
  echo "compiled: $ok files ($bad failed, see $WORK/clang.log)"
}

# extract the facts and print one line per relation, published sizes beside them
extract_facts() {
  local ll=("$WORK"/ll/*.ll)
  [ -e "${ll[0]}" ] || { echo "no .ll files" >&2; exit 1; }
  nice -n 15 python3 "$here/extract.py" --clone "$CLONE" -o "$WORK/facts" "${ll[@]}" >/dev/null
  printf '%-12s %10s   %s\n' relation rows published
  local rel
  for rel in assign dereference addr assgn load store arc nullEdge; do
    printf '%-12s %10d   %s\n' "$rel" "$(wc -l <"$WORK/facts/$rel.tsv")" "${reported[$rel]:-}"
  done
}

# psql on the benchmark database, stopping at the first error
q() { psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }

# a fresh database with the eight fact tables loaded from the TSVs
load_facts() {
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
  q -c "CREATE EXTENSION gpudl"
  local rel
  for rel in assign dereference addr assgn load store arc nullEdge; do
    q -c "CREATE TABLE \"$rel\" (a text, b text)" \
      -c "\\copy \"$rel\" FROM '$WORK/facts/$rel.tsv'" -c "ANALYZE \"$rel\""
  done
}

# create program $1 from rules file $2 (the tables are read by name: no binds needed)
create_program() {
  q -v name="$1" -v rules="$(cat "$2")" >/dev/null <<'SQL'
SELECT gpudl_create_program(:'name', :'rules');
SQL
}

# tuples and median wall time (of 3) of gpudl_count(program $1, goal $2)
time_count() {
  q -At -v prog="$1" -v goal="$2" <<'SQL'
\set ON_ERROR_STOP 1
CREATE TEMP TABLE runs(n bigint, s float8);
SELECT clock_timestamp() AS t0 \gset
INSERT INTO runs SELECT gpudl_count(:'prog', :'goal'), extract(epoch FROM clock_timestamp() - :'t0'::timestamptz);
SELECT clock_timestamp() AS t0 \gset
INSERT INTO runs SELECT gpudl_count(:'prog', :'goal'), extract(epoch FROM clock_timestamp() - :'t0'::timestamptz);
SELECT clock_timestamp() AS t0 \gset
INSERT INTO runs SELECT gpudl_count(:'prog', :'goal'), extract(epoch FROM clock_timestamp() - :'t0'::timestamptz);
SELECT format('%-8s %-14s %12s tuples %9s s (median of 3)', :'prog', split_part(:'goal', '(', 1),
              max(n), round((percentile_disc(0.5) WITHIN GROUP (ORDER BY s))::numeric, 3)) FROM runs;
SQL
}

mkdir -p "$WORK"
echo "== sources: ${dirs[*]}"
compile_all
extract_facts
if ! psql -X -q -d postgres -c "SELECT 1 FROM pg_available_extensions WHERE name = 'gpudl'" -At 2>/dev/null | grep -q .; then
  echo "no PostgreSQL with gpudl at $PGHOST:$PGPORT (user $PGUSER): database part skipped"
  exit 0
fi
echo "== gpudl on $PGHOST:$PGPORT, device $DEVICE"
load_facts
create_program cspa "$here/cspa.dl"
create_program csda "$here/csda.dl"
create_program andersen "$here/andersen.dl"
for prog in $PROGRAMS; do
  case $prog in
    cspa) time_count cspa 'valueFlow(X, Y)'; time_count cspa 'memoryAlias(X, Y)'; time_count cspa 'valueAlias(X, Y)' ;;
    csda) time_count csda 'null(X, Y)' ;;
    andersen) time_count andersen 'pt(X, Y)' ;;
    *) echo "unknown program $prog (andersen, csda, cspa)" >&2; exit 1 ;;
  esac
done
[ "${KEEP:-0}" = 1 ] || psql -X -q -d postgres -c "DROP DATABASE $db"

#!/usr/bin/env bash
# bench/maintain/maintain.sh — maintained tables (issue 24): the cost of a
# change of the base table against a full run, through SQL.
#
#   bash bench/maintain/maintain.sh                          # private cluster of this checkout
#   DEVICE=gpu GRAPHS="p2p-Gnutella04" RUNS=5 bash bench/maintain/maintain.sh
#
# Per graph and workload (TC, SG): the full run (gpudl_count, the engine
# alone; gpudl_materialize, engine plus writing the table), setting up
# mode 'maintain', then for N in SIZES: delete N edges of the graph in one
# statement, then insert them back in one statement (each its own
# transaction, one session, psql's \timing), RUNS times on different edges;
# medians.  At the end the maintained table is compared with gpudl_query
# (CHECK=0 skips it).  EDGES=inner picks only edges with an edge into their
# source and one out of their target (edges on paths, where a dense
# closure's deletions reach far); CHECKED sets gpudl.maintain_check_deletions
# (auto; never is the way before the check: past the bound, a recompute).  The edge table has an index on each column, as a
# table joined on them would (the delta joins use them).
# Workloads: tc, sg, deg (a count per group: r(X, count(Y)) :- edge(X, Y),
# edge(Y, _)), tcneg (reverse edges outside the closure, r(X, Y) :- edge(Y,
# X), !c(X, Y), with the closure c maintained in a table of its own: the
# change times include both tables).  Settings: GRAPHS, WORKLOADS ("tc sg"), SIZES ("1 100 10000"), RUNS (3),
# DEVICE (cpu|gpu|auto: the full runs and recomputes), CHECK (1), GRAPH_DIR,
# EDGES (random|inner), CHECKED (auto|always|never), MESSAGES (warning; debug1 shows
# where a change's time goes, on stderr), KEEP (1 keeps the database for a
# closer look).  The ratio is against the full materialize, which a
# maintained table's alternative (gpudl_refresh) costs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../common/lib.sh"
bench_defaults GRAPH_DIR="$here/../../../shared/data/graphs" GRAPHS=ego-Facebook WORKLOADS="tc sg" \
  SIZES="1 100 10000" RUNS=3 DEVICE=auto CHECK=1 EDGES=random CHECKED=auto
bench_sql_db gpudl_bench_maintain
export PGOPTIONS="${PGOPTIONS:-} -c gpudl.device=$DEVICE -c client_min_messages=${MESSAGES:-warning} -c gpudl.maintain_check_deletions=$CHECKED"
case $EDGES in
  random) pick="SELECT src, dst FROM edge" ;;
  inner) pick="SELECT src, dst FROM edge e WHERE EXISTS (SELECT 1 FROM edge f WHERE f.dst = e.src) AND EXISTS (SELECT 1 FROM edge g WHERE g.src = e.dst)" ;;
  *) echo "EDGES is random or inner" >&2; exit 2 ;;
esac

# median of numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# run a psql script with \timing; print the milliseconds of each statement after a "\echo T label" line as "label ms"
timed() { q -f - | awk '/^T /{label=$2; next} /^Time: /{if (label != "") {print label, $2; label=""}}'; }

bench_fresh_db "WITH (FORCE)"
q -c "CREATE EXTENSION gpudl"
echo "| graph | workload | tuples | full count s | full materialize s | setup maintain s | edges changed | delete ms | insert back ms | full materialize / change (the slower of the two) |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for g in $GRAPHS; do
  q -c "DROP TABLE IF EXISTS edge CASCADE" -c "CREATE TABLE edge(src int, dst int)"
  grep -v '^#' "$GRAPH_DIR/$g.txt" | awk '{print $1 "\t" $2}' | q -c "\\copy edge FROM stdin"
  q -c "CREATE INDEX ON edge(src)" -c "CREATE INDEX ON edge(dst)" -c "ANALYZE edge"
  for w in $WORKLOADS; do
    case $w in
      tc) rules='r(X, Y) :- edge(X, Y).  r(X, Z) :- r(X, Y), edge(Y, Z).' ;;
      sg) rules='r(X, Y) :- edge(P, X), edge(P, Y), X != Y.  r(X, Y) :- edge(A, X), r(A, B), edge(B, Y).' ;;
      deg) rules='r(X, count(Y)) :- edge(X, Y), edge(Y, _).' ;;
      tcneg) rules='c(X, Y) :- edge(X, Y).  c(X, Z) :- c(X, Y), edge(Y, Z).  r(X, Y) :- edge(Y, X), !c(X, Y).' ;;
    esac
    q -c "SELECT gpudl_drop_program(name) FROM gpudl.programs WHERE name = 'bm'" -c "DROP TABLE IF EXISTS kept, scratch, held" >/dev/null
    q -c "SELECT gpudl_create_program('bm', '$rules')" >/dev/null
    # tcneg: the closure is maintained in a table of its own, which r reads (both change per edge)
    [ "$w" = tcneg ] && q -c "SELECT gpudl_materialize('bm', 'c', 'held', mode => 'maintain')" >/dev/null
    full_count=$( { for r in $(seq "$RUNS"); do echo '\timing on'; echo '\echo T count'; echo "SELECT gpudl_count('bm', 'r(X, Y)');"; done; } | timed | awk '{print $2/1000}' | median)
    tuples=$(q -c "SELECT gpudl_count('bm', 'r(X, Y)')")
    full_mat=$( { echo '\timing on'; echo '\echo T mat'; echo "SELECT gpudl_materialize('bm', 'r', 'scratch');"; } | timed | awk '{print $2/1000}' | median)
    q -c "DROP TABLE scratch"
    setup=$( { echo '\timing on'; echo '\echo T setup'; echo "SELECT gpudl_materialize('bm', 'r', 'kept', mode => 'maintain');"; } | timed | awk '{print $2/1000}')
    q -c "ANALYZE kept"
    first=1
    for n in $SIZES; do
      script=$( for r in $(seq "$RUNS"); do
        echo "SELECT setseed($r / 100.0 + $n / 1000000.0);"
        echo "DROP TABLE IF EXISTS batch; CREATE TABLE batch AS $pick ORDER BY random() LIMIT $n;"
        echo '\timing on'
        echo '\echo T delete'
        echo "DELETE FROM edge e USING batch b WHERE e.src = b.src AND e.dst = b.dst;"
        echo '\echo T insert'
        echo "INSERT INTO edge SELECT * FROM batch;"
        echo '\timing off'
      done )
      res=$(echo "$script" | timed)
      del=$(echo "$res" | awk '$1 == "delete" {print $2}' | median)
      ins=$(echo "$res" | awk '$1 == "insert" {print $2}' | median)
      ratio=$(awk -v f="$full_mat" -v d="$del" -v i="$ins" 'BEGIN {m = (d > i ? d : i); printf "%.1f", f * 1000 / m}')
      if [ $first = 1 ]; then
        echo "| $g | $w | $tuples | $full_count | $full_mat | $setup | $n | $del | $ins | $ratio |"; first=0
      else
        echo "| | | | | | | $n | $del | $ins | $ratio |"
      fi
    done
    if [ "$CHECK" = 1 ]; then
      cols=$(q -c "SELECT string_agg(quote_ident(attname) || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
                   FROM pg_attribute WHERE attrelid = 'kept'::regclass AND attnum > 0 AND NOT attisdropped")
      d=$(q -c "SELECT (SELECT count(*) FROM (TABLE kept EXCEPT SELECT * FROM gpudl_query('bm', 'r(X, Y)') AS t($cols)) x)
                  + (SELECT count(*) FROM (SELECT * FROM gpudl_query('bm', 'r(X, Y)') AS t($cols) EXCEPT TABLE kept) x)")
      [ "$d" = 0 ] || { echo "maintained $g $w differs from the relation by $d rows" >&2; exit 1; }
    fi
    q -c "SELECT 'mode ' || mode || ', last change ' || round(last_change_ms::numeric, 1) || ' ms' FROM gpudl.maintained" >&2
  done
done
[ "${KEEP:-0}" = 1 ] || psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null

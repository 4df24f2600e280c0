#!/usr/bin/env bash
# 02_ilp_tasks: every task of shared/data/ilp/tasks through SQL — load the
# train world, learn f with gpudl_learn (commit => true), then load the test
# world into the same tables and check the committed program with the Datalog
# engine.  Passes when every task but at most one is 100% accurate on its
# test world.  Prints accuracy, rules and learning time per task.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
tasks="${GPUDL_ILP_TASKS:-$GPUDL_ROOT/../shared/data/ilp/tasks}"
[ -d "$tasks" ] || { echo "no task suite at $tasks: skipped"; exit 0; }
db=gpudl_ilp
dropdb --if-exists $db; createdb $db
psql -X -q -d $db -c "CREATE EXTENSION gpudl" -c "
  CREATE FUNCTION timed_learn(prog text, pos text, neg text) RETURNS text LANGUAGE plpgsql AS \$\$
  DECLARE t0 timestamptz := clock_timestamp(); r text;
  BEGIN
    SELECT string_agg(rule, ' ' ORDER BY rank) INTO r
    FROM gpudl_learn(prog, 'f', pos, neg, max_body => 3, allow_recursive => true, commit => true);
    RETURN round(extract(epoch FROM clock_timestamp() - t0) * 1000, 1) || '|' || coalesce(r, '');
  END \$\$"
# fields of a task.json without a JSON tool: the target's arity, the background names
task_arity() { grep -o '"arity": *[0-9]*' "$1/task.json" | head -1 | grep -o '[0-9]*$'; }
task_background() { awk '/"background": *\[/ {on = 1; next} on && /\]/ {on = 0} on' "$1/task.json" | tr -d ' ",'; }
load_world() {  # task dir, world, schema
  local dir=$1 world=$2 s=$3 f name ncols cols
  for f in "$dir/$world"/*.tsv; do
    name=$(basename "$f" .tsv)
    ncols=$(head -1 "$f" | awk -F'\t' '{print NF}'); [ -n "$ncols" ] || ncols=$(task_arity "$dir")
    cols=$(seq 1 "$ncols" | sed 's/^/c/; s/$/ text/' | paste -sd, -)
    psql -X -q -d $db -c "CREATE TABLE IF NOT EXISTS $s.$name ($cols); TRUNCATE $s.$name"
    psql -X -q -d $db -c "\\copy $s.$name FROM '$f'"
  done
}
printf "%-16s %-10s %-9s %s\n" task accuracy learn_ms rules
bad=0; total=0
for dir in "$tasks"/*/; do
  t=$(basename "$dir"); s="task_$t"; total=$((total + 1))
  psql -X -q -d $db -c "CREATE SCHEMA $s"
  load_world "$dir" train "$s"
  bk=$(task_background "$dir")
  psql -X -q -d $db -c "SELECT gpudl_create_program('$t')" >/dev/null
  for p in $bk; do psql -X -q -d $db -c "SELECT gpudl_bind('$t', '$p', '$s.$p')" >/dev/null; done
  out=$(psql -X -At -d $db -c "SELECT timed_learn('$t', '$s.pos', '$s.neg')")
  ms=${out%%|*}; rules=${out#*|}
  load_world "$dir" test "$s"
  arity=$(task_arity "$dir")
  if [ "$arity" = 1 ]; then vars="X"; coldef="a text, b text DEFAULT NULL"; coldef="a text"; match="d.a = x.c1"
  else vars="X, Y"; coldef="a text, b text"; match="d.a = x.c1 AND d.b = x.c2"; fi
  acc=$(psql -X -q -At -d $db -c "
    CREATE TEMP TABLE d AS SELECT * FROM gpudl_query('$t', 'f($vars)') AS t($coldef);
    WITH p AS (SELECT count(*) n, count(*) FILTER (WHERE EXISTS (SELECT 1 FROM d WHERE $match)) ok FROM $s.pos x),
         n AS (SELECT count(*) n, count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM d WHERE $match)) ok FROM $s.neg x)
    SELECT round((p.ok + n.ok)::numeric / (p.n + n.n), 3) FROM p, n")
  printf "%-16s %-10s %-9s %s\n" "$t" "$acc" "$ms" "$rules"
  [ "$acc" = "1.000" ] || bad=$((bad + 1))
done
dropdb $db
echo "$((total - bad)) of $total tasks exact on the test world"
[ $bad -le 1 ]

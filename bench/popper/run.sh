#!/usr/bin/env bash
# bench/popper/run.sh — Popper's example tasks through SQL: each task folder
# (../shared/data/ilp/popper by default) is loaded into tables by load.py
# (one table per predicate, typed columns), gpudl_learn learns the target
# from pos/neg with the task's declared types, and the committed program is
# evaluated by the Datalog engine (gpudl_query) against the examples.
# Prints per task: accuracy on exs.pl, learning time, the number of rules
# and literals of the learned program, the learner's own message, and the
# rules.  Settings per task: max_body the task's (at most
# MAX_BODY, default 8) and its max_vars (Popper's default 6 when bias.pl
# sets none, at most 12); noise NOISE (0.3) for noisy-*
# tasks; a knowledge graph (only binary relations, no declared types) gets
# max_body 2 with allow_recursive (the bulk path); a task whose bias has
# enable_recursion gets allow_recursive (the target in bodies); MAX_SECONDS (50) each, so a run with loading stays under 60 s.
#
#   bash bench/popper/run.sh [task ...]        MAX_SECONDS=50 MAX_BODY=8 MAX_VARS=6
source "$(dirname "$0")/../../tools/pgenv.sh"
set +eu
here=$(cd "$(dirname "$0")" && pwd)
data="${POPPER_DATA:-$GPUDL_ROOT/../shared/data/ilp/popper}"
db=${POPPER_DB:-gpudl_popper}
max_seconds=${MAX_SECONDS:-50}
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
psql -X -q -d $db -c "CREATE EXTENSION gpudl" >/dev/null
tasks=("$@"); [ ${#tasks[@]} -gt 0 ] || tasks=($(cd "$data" && ls -d */ | tr -d /))
printf "%-32s %-8s %-8s %-6s %-8s %s\n" task accuracy seconds rules literals program
for t in "${tasks[@]}"; do
  s="p_$(echo "$t" | tr -c 'a-z0-9\n' _)"
  meta=$(python3 "$here/load.py" "$data/$t" "$s" "$s" 2>&1 >/tmp/popper_$s.sql) || { echo "$t: load failed: $meta"; continue; }
  eval "$(echo "$meta" | grep -v '^#')"
  psql -X -q -d $db -f /tmp/popper_$s.sql >/dev/null || { echo "$t: load failed"; continue; }
  # the task's max_body (at most MAX_BODY, default 8) and max_vars (at most
  # 12; Popper's default, 6, when the task sets none — as Popper reads it)
  mb=${MAX_BODY:-8}; [ -n "$BIAS_MAX_BODY" ] && [ "$BIAS_MAX_BODY" -lt "$mb" ] && mb=$BIAS_MAX_BODY
  mv=${MAX_VARS:-6}; [ -n "$BIAS_MAX_VARS" ] && mv=$(( BIAS_MAX_VARS > 12 ? 12 : BIAS_MAX_VARS ))
  noise=0; case $t in noisy-*) noise=${NOISE:-0.3};; esac
  # a knowledge graph (binary relations, no types): the bulk path, recursion allowed
  rec=false
  # the task's bias allows recursion (enable_recursion): the target may occur
  # in bodies, and the task's max_body stands
  if [ "$RECURSION" = 1 ]; then rec=true
  elif [ "$MAXARITY" -le 2 ] && [ -z "$TYPES" ]; then mb=2; rec=true; fi
  vars=$(seq 1 "$ARITY" | sed 's/^/A/' | paste -sd, -)
  coldef=$(echo "$COLTYPES" | tr , '\n' | awk '{printf "%sc%d %s", (NR>1?", ":""), NR, $0}')
  match=$(seq 1 "$ARITY" | awk '{printf "%sd.c%d = x.c%d", (NR>1?" AND ":""), $1, $1}')
  out=$(psql -X -At -d $db -v ON_ERROR_STOP=1 2>&1 <<SQL
\set QUIET on
SET client_min_messages = warning;
SELECT clock_timestamp() AS t0 \\gset
CREATE TEMP TABLE r AS SELECT * FROM gpudl_learn('$s', '$TARGET', '$s.pos', '$s.neg',
  max_body => $mb, max_vars => $mv, allow_recursive => $rec, max_seconds => $max_seconds, noise => $noise,
  types => nullif('$TYPES', ''), commit => true);
SELECT 'SECS=' || round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 2) || ' TIMEDOUT=' || timed_out
  FROM gpudl.learn_runs ORDER BY id DESC LIMIT 1;
SELECT 'MSG=' || message FROM gpudl.learn_runs ORDER BY id DESC LIMIT 1;
CREATE TEMP TABLE d AS SELECT * FROM $s.pos WHERE false;
SELECT count(*) > 0 AS has_rules FROM r \\gset
\\if :has_rules
INSERT INTO d SELECT * FROM gpudl_query('$s', '$TARGET($vars)') AS t($coldef);
\\endif
CREATE INDEX ON d ($(seq 1 "$ARITY" | sed 's/^/c/' | paste -sd, -));
ANALYZE d;
SELECT 'ACC=' || round(((SELECT count(*) FROM $s.pos x WHERE EXISTS (SELECT 1 FROM d WHERE $match)) +
                        (SELECT count(*) FROM $s.neg x WHERE NOT EXISTS (SELECT 1 FROM d WHERE $match)))::numeric /
                       ((SELECT count(*) FROM $s.pos) + (SELECT count(*) FROM $s.neg)), 3);
SELECT 'RULE=' || replace(rule, E'\n', ' ') FROM r ORDER BY rank;
SQL
)
  acc=$(echo "$out" | sed -n 's/^ACC=//p'); secs=$(echo "$out" | sed -n 's/^SECS=\([0-9.]*\).*/\1/p')
  to=$(echo "$out" | sed -n 's/.*TIMEDOUT=//p')
  [ "$to" = "true" ] && secs="$secs*"
  rules=$(echo "$out" | sed -n 's/^RULE=//p')
  # rules: every clause, an invented helper's included (one ':-' each)
  nrules=$(echo "$rules" | grep -o ':-' | wc -l)
  # literals: the head and each body atom (one opening parenthesis each)
  nlits=$(echo "$rules" | tr -cd '(' | wc -c)
  printf "%-32s %-8s %-8s %-6s %-8s %s\n" "$t" "${acc:-error}" "${secs:--}" "$nrules" "$nlits" "$(echo "$rules" | paste -sd' ' -)"
  echo "$out" | grep -v '^ACC=\|^SECS=\|^RULE=' | sed 's/^/    /'
done

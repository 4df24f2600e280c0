#!/usr/bin/env bash
# 06_cache_sessions: a table pinned with gpudl_load in one session is never
# read stale after another session changes it (once that change commits),
# and an uncommitted change of another session is not seen.  The same for a
# knowledge graph kept between gpudl_predict calls (0.6), and for the stored
# rules another session mines again.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_cache_sessions
# open_session OUT: a session (psql) running what is written to fd 3, its
# output in OUT, until close_session
open_session() {
  fifo=$(mktemp -u); mkfifo "$fifo"
  psql -X -At -d $db <"$fifo" >"$1" 2>&1 &
  exec 3>"$fifo"
}
close_session() { exec 3>&-; wait; rm -f "$fifo"; }
# expect_lines FILE LINE MESSAGE [LINE MESSAGE]...: stop with MESSAGE
# unless FILE (a session's output) has a line that is exactly LINE
expect_lines() {
  local file=$1; shift
  while [ $# -gt 0 ]; do
    grep -qx "$1" "$file" || { echo "$2"; exit 1; }
    shift 2
  done
}
# ask_around_commit SQL EXPR: half a second on, another session runs SQL in
# a transaction it holds open for a second; the open session is asked EXPR
# (as 'during ') before that commits, and again (as 'after ') once it has
ask_around_commit() {
  sleep 0.5
  psql -X -q -d $db -c "BEGIN" -c "$1" -c "SELECT pg_sleep(1)" -c "COMMIT" &
  local writer=$!
  sleep 0.4
  echo "SELECT 'during ' || $2;" >&3
  # by its pid: a job number (%2) can name the open session instead once
  # the writer is reaped, and then this waited for ever (seen in CI)
  wait "$writer" 2>/dev/null || sleep 1.2
  echo "SELECT 'after ' || $2;" >&3
}
dropdb --if-exists $db; createdb $db
psql -X -q -v ON_ERROR_STOP=1 -d $db <<'SQL'
CREATE EXTENSION gpudl;
CREATE TABLE edge(a int, b int);
INSERT INTO edge VALUES (1, 2), (2, 3);
SELECT gpudl_create_program('p', 'path(X, Y) :- edge(X, Y). path(X, Z) :- path(X, Y), edge(Y, Z).');
SQL
# session A keeps the table loaded and answers a query whenever told to
open_session /tmp/gpudl_cache_a.out
echo "SELECT 'load ' || gpudl_load('edge');" >&3
echo "SELECT 'count ' || gpudl_count('p', 'path(X, Y)');" >&3
# session B changes the table, first without committing
ask_around_commit "INSERT INTO edge VALUES (3, 4)" "gpudl_count('p', 'path(X, Y)')"
echo "SELECT 'served ' || value FROM gpudl_stats() WHERE name = 'cache_reads';" >&3
close_session
cat /tmp/gpudl_cache_a.out
expect_lines /tmp/gpudl_cache_a.out "count 3" "wrong first count" "during 3" "saw an uncommitted change" \
  "after 6" "read a stale copy after another session's commit" "served 3" "queries were not served from the cache"

# ---- a copy made in a transaction that rolls back, then another session's
# change bringing the count back to the same number: made again
big="SELECT coalesce(string_agg(a::text, ',' ORDER BY a), '') FROM gpudl_query('p', 'path(X, Y)') AS t(a int, b int) WHERE a >= 10"
open_session /tmp/gpudl_cache_rb.out
echo "SELECT 'load ' || gpudl_load('edge');" >&3
echo "BEGIN; INSERT INTO edge VALUES (10, 11); SELECT 'in xact ' || ($big); ROLLBACK;" >&3
sleep 1
psql -X -q -d $db -c "INSERT INTO edge VALUES (20, 21)"
echo "SELECT 'after ' || ($big);" >&3
echo "SELECT 'served ' || value FROM gpudl_stats() WHERE name = 'cache_reads';" >&3
close_session
cat /tmp/gpudl_cache_rb.out
expect_lines /tmp/gpudl_cache_rb.out "in xact 10" "rollback case: the transaction did not see its own row" \
  "after 20" "rollback case: a copy of a rolled-back change was served" \
  "served 2" "rollback case: the queries were not served from the cache"
psql -X -q -d $db -c "DELETE FROM edge WHERE a >= 10"

# ---- a knowledge graph kept between calls (pg_kg_cache.c)
psql -X -q -v ON_ERROR_STOP=1 -d $db >/dev/null <<'SQL'
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES ('abe', 'homer'), ('homer', 'bart'), ('homer', 'lisa'), ('marge', 'bart'), ('marge', 'lisa');
CREATE TABLE sib(a text, b text);
INSERT INTO sib VALUES ('bart', 'lisa'), ('lisa', 'bart');
SELECT gpudl_create_program('kg');
SELECT gpudl_bind('kg', 'parent', 'parent');
SELECT gpudl_bind('kg', 'sib', 'sib');
SELECT count(*) FROM gpudl_mine('kg', 'sib', max_body => 2, commit => true);
SELECT gpudl_load('parent'), gpudl_load('sib');
SQL
ask="SELECT coalesce(string_agg(answer, ',' ORDER BY answer), '') FROM gpudl_predict('kg', 'sib', 'sib(\"bart\", Y)', exclude_known => false, \"limit\" => 0)"
open_session /tmp/gpudl_cache_kg.out
echo "SELECT 'first ' || ($ask);" >&3
echo "SELECT 'again ' || ($ask);" >&3
ask_around_commit "INSERT INTO parent VALUES ('homer', 'maggie')" "($ask)"
echo "SELECT 'hits ' || hits FROM gpudl_kg_cache_status();" >&3
echo "SELECT 'again ' || ($ask);" >&3
echo "SELECT 'hits ' || hits FROM gpudl_kg_cache_status();" >&3
sleep 0.5
# another session replaces the stored rules with one that gives bart no sibling
psql -X -q -d $db -c "UPDATE gpudl.mined_rules SET rule = 'sib(X, Y) :- parent(X, Y).' WHERE program = 'kg'"
echo "SELECT 'new rules ' || ($ask);" >&3
close_session
cat /tmp/gpudl_cache_kg.out
grep -qx "first lisa" /tmp/gpudl_cache_kg.out || { echo "kg: wrong first answers"; exit 1; }
first=$(sed -n 's/^first //p' /tmp/gpudl_cache_kg.out)
grep -qx "during $first" /tmp/gpudl_cache_kg.out || { echo "kg: saw an uncommitted change"; exit 1; }
grep -q "^after .*maggie" /tmp/gpudl_cache_kg.out || { echo "kg: read a stale graph after another session's commit"; exit 1; }
[ "$(grep -c '^hits ' /tmp/gpudl_cache_kg.out)" = 2 ] && grep -qx "hits 0" /tmp/gpudl_cache_kg.out && grep -qx "hits 1" /tmp/gpudl_cache_kg.out \
  || { echo "kg: the graph read after the commit was not kept and reused"; exit 1; }
fresh=$(PGOPTIONS="$PGOPTIONS -c gpudl.kg_cache=off" psql -X -At -d $db -c "$ask")
[ "$fresh" != "lisa,maggie" ] && grep -qx "new rules $fresh" /tmp/gpudl_cache_kg.out \
  || { echo "kg: used rules another session replaced (fresh: '$fresh')"; exit 1; }
dropdb $db
echo "cache across sessions: ok"

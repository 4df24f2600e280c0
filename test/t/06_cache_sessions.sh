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
sleep 0.5
# session B changes the table, first without committing
psql -X -q -d $db -c "BEGIN" -c "INSERT INTO edge VALUES (3, 4)" -c "SELECT pg_sleep(1)" -c "COMMIT" &
sleep 0.4
echo "SELECT 'during ' || gpudl_count('p', 'path(X, Y)');" >&3
wait %2 2>/dev/null || sleep 1.2
echo "SELECT 'after ' || gpudl_count('p', 'path(X, Y)');" >&3
echo "SELECT 'served ' || value FROM gpudl_stats() WHERE name = 'cache_reads';" >&3
close_session
cat /tmp/gpudl_cache_a.out
grep -qx "count 3" /tmp/gpudl_cache_a.out || { echo "wrong first count"; exit 1; }
grep -qx "during 3" /tmp/gpudl_cache_a.out || { echo "saw an uncommitted change"; exit 1; }
grep -qx "after 6" /tmp/gpudl_cache_a.out || { echo "read a stale copy after another session's commit"; exit 1; }
grep -qx "served 3" /tmp/gpudl_cache_a.out || { echo "queries were not served from the cache"; exit 1; }

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
grep -qx "in xact 10" /tmp/gpudl_cache_rb.out || { echo "rollback case: the transaction did not see its own row"; exit 1; }
grep -qx "after 20" /tmp/gpudl_cache_rb.out || { echo "rollback case: a copy of a rolled-back change was served"; exit 1; }
grep -qx "served 2" /tmp/gpudl_cache_rb.out || { echo "rollback case: the queries were not served from the cache"; exit 1; }
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
sleep 0.5
psql -X -q -d $db -c "BEGIN" -c "INSERT INTO parent VALUES ('homer', 'maggie')" -c "SELECT pg_sleep(1)" -c "COMMIT" &
sleep 0.4
echo "SELECT 'during ' || ($ask);" >&3
wait %2 2>/dev/null || sleep 1.2
echo "SELECT 'after ' || ($ask);" >&3
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

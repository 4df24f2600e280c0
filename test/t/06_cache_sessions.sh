#!/usr/bin/env bash
# 06_cache_sessions: a table pinned with gpudl_load in one session is never
# read stale after another session changes it (once that change commits),
# and an uncommitted change of another session is not seen.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_cache_sessions
dropdb --if-exists $db; createdb $db
psql -X -q -v ON_ERROR_STOP=1 -d $db <<'SQL'
CREATE EXTENSION gpudl;
CREATE TABLE edge(a int, b int);
INSERT INTO edge VALUES (1, 2), (2, 3);
SELECT gpudl_create_program('p', 'path(X, Y) :- edge(X, Y). path(X, Z) :- path(X, Y), edge(Y, Z).');
SQL
fifo=$(mktemp -u); mkfifo "$fifo"
# session A keeps the table loaded and answers a query whenever told to
psql -X -At -d $db <"$fifo" >/tmp/gpudl_cache_a.out 2>&1 &
exec 3>"$fifo"
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
exec 3>&-
wait
rm -f "$fifo"
cat /tmp/gpudl_cache_a.out
grep -qx "count 3" /tmp/gpudl_cache_a.out || { echo "wrong first count"; exit 1; }
grep -qx "during 3" /tmp/gpudl_cache_a.out || { echo "saw an uncommitted change"; exit 1; }
grep -qx "after 6" /tmp/gpudl_cache_a.out || { echo "read a stale copy after another session's commit"; exit 1; }
grep -qx "served 3" /tmp/gpudl_cache_a.out || { echo "queries were not served from the cache"; exit 1; }
dropdb $db
echo "cache across sessions: ok"

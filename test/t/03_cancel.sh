#!/usr/bin/env bash
# 03_cancel: statement_timeout and pg_cancel_backend stop a long evaluation
# within a second, and the session (and server) carry on normally.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
db=gpudl_cancel
dropdb --if-exists $db; createdb $db
psql -X -q -v ON_ERROR_STOP=1 -d $db <<'SQL'
CREATE EXTENSION gpudl;
-- counting up without bound: millions of cheap rounds
SELECT gpudl_create_program('forever', 'n(0). n(Y) :- n(X), Y = X + 1.');
SQL
# statement_timeout
start=$(date +%s.%N)
out=$(PGOPTIONS="-c statement_timeout=1000 -c gpudl.max_iterations=2000000000" \
      psql -X -At -d $db -c "SELECT gpudl_count('forever', 'n(X)')" 2>&1 || true)
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
echo "statement_timeout: $out (after ${took}s)"
grep -q <<<"$out" "canceling statement due to statement timeout" || { echo "no timeout error"; exit 1; }
awk -v t="$took" 'BEGIN { exit !(t < 2.5) }' || { echo "took too long: $took"; exit 1; }
# pg_cancel_backend from another session
psql -X -At -d $db -c "SET gpudl.max_iterations = 2000000000" -c "SELECT gpudl_count('forever', 'n(X)')" >/tmp/gpudl_cancel.out 2>&1 &
bg=$!
sleep 1.5
pid=$(psql -X -At -d $db -c "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT gpudl_count(''forever''%' AND pid <> pg_backend_pid()")
start=$(date +%s.%N)
psql -X -At -d $db -c "SELECT pg_cancel_backend($pid)" >/dev/null
wait $bg || true
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
echo "cancel: $(cat /tmp/gpudl_cancel.out | tail -1) (after ${took}s)"
grep -q "canceling statement due to user request" /tmp/gpudl_cancel.out || { echo "no cancel error"; exit 1; }
awk -v t="$took" 'BEGIN { exit !(t < 1.5) }' || { echo "cancel took too long: $took"; exit 1; }
# the same session goes on; the server did not restart
psql -X -At -d $db -c "SET statement_timeout = 200" -c "SELECT gpudl_count('forever', 'n(X)')" 2>/dev/null && exit 1
psql -X -At -d $db -c "SELECT gpudl_create_program('ok', 'n(0). n(Y) :- n(X), Y = X + 1, Y < 10.')" -c "SELECT gpudl_count('ok', 'n(X)')" | tail -1 | grep -qx 10
dropdb $db
echo "cancel and statement_timeout: ok"

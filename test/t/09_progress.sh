#!/usr/bin/env bash
# 09_progress: a long evaluation is seen in gpudl_progress from a second
# session — kind, program, goal, phase, a growing round and tuple count, the
# device — while a role that does not own the work sees only its pid, role
# and database; a role sees the details of its own work; the row is gone
# once the run ends (here: cancelled).  Needs gpudl in
# shared_preload_libraries (tools/pgenv.sh sets it); without it only the
# session's own work is visible, and the cross-session part is skipped.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_progress
dropdb --if-exists $db; createdb $db
psql -X -q -v ON_ERROR_STOP=1 -d $db <<'SQL'
CREATE EXTENSION gpudl;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'gpudl_watcher') THEN CREATE ROLE gpudl_watcher LOGIN; END IF;
END $$;
-- counting up without bound: millions of cheap rounds
SELECT gpudl_create_program('forever', 'n(0). n(Y) :- n(X), Y = X + 1.');
-- where programs have owners (0.2), the watcher may use it
DO $$ BEGIN
  IF to_regprocedure('gpudl_grant(text, text, text)') IS NOT NULL THEN
    EXECUTE $q$SELECT gpudl_grant('forever', 'gpudl_watcher', 'use')$q$;
  END IF;
END $$;
SQL
if ! psql -X -At -d $db -c "SHOW shared_preload_libraries" | grep -q gpudl; then
  echo "gpudl is not preloaded: progress of other sessions is not visible; skipped"
  psql -X -At -d $db -c "SELECT count(*) FROM gpudl_progress" | grep -qx 0
  dropdb $db; exit 0
fi

# a long run in the background, stopped by statement_timeout if all else fails
psql -X -At -d $db -c "SET statement_timeout = 30000" -c "SET gpudl.max_iterations = 2000000000" \
  -c "SELECT gpudl_count('forever', 'n(X)')" >/tmp/gpudl_progress_bg.out 2>&1 &
bg=$!
row=""
for i in $(seq 1 100); do
  row=$(psql -X -At -F ' ' -d $db -c "SELECT pid, kind, program, goal, phase, round, tuples, device
                                       FROM gpudl_progress WHERE pid <> pg_backend_pid() AND round > 0")
  [ -n "$row" ] && break
  sleep 0.1
done
echo "seen: $row"
[ -n "$row" ] || { echo "no progress row with round > 0"; kill $bg; exit 1; }
read -r pid kind program goal phase round tuples device <<<"$row"
[ "$kind $program $phase $device" = "count forever evaluating cpu" ] || [ "$kind $program $phase $device" = "count forever evaluating gpu" ] \
  || { echo "unexpected row: $row"; exit 1; }
[ "$goal" = "n(X)" ] || { echo "goal: $goal"; exit 1; }
sleep 0.5
round2=$(psql -X -At -d $db -c "SELECT round FROM gpudl_progress WHERE pid = $pid")
echo "round $round, half a second later $round2"
[ "$round2" -gt "$round" ] || { echo "round did not grow"; exit 1; }
psql -X -At -d $db -c "SELECT 'elapsed ' || (elapsed > interval '0') || ', tuples ' || tuples, 'bytes ' || bytes
                       FROM gpudl_progress WHERE pid = $pid"

# another role sees the pid, role and database, and nothing else
other=$(psql -X -At -U gpudl_watcher -d $db -c "SELECT pid, role, database, program IS NULL, goal IS NULL,
          kind IS NULL, round IS NULL, tuples IS NULL, elapsed IS NULL FROM gpudl_progress WHERE pid = $pid")
echo "as gpudl_watcher: $other"
[ "$other" = "$pid|$PGUSER|$db|t|t|t|t|t|t" ] || { echo "a non-owner saw details"; exit 1; }

# ... but the details of its own work
psql -X -At -U gpudl_watcher -d $db -c "SET statement_timeout = 30000" -c "SET gpudl.max_iterations = 2000000000" \
  -c "SELECT gpudl_count('forever', 'n(X)')" >/tmp/gpudl_progress_bg2.out 2>&1 &
bg2=$!
own=""
for i in $(seq 1 100); do
  own=$(psql -X -At -U gpudl_watcher -d $db -c "SELECT pid, role, program, round > 0 FROM gpudl_progress
                                                 WHERE role = 'gpudl_watcher' AND pid <> pg_backend_pid() AND round > 0")
  [ -n "$own" ] && break
  sleep 0.1
done
echo "own work, as gpudl_watcher: $own"
grep -q <<<"$own" "|gpudl_watcher|forever|t$" || { echo "a role did not see its own work"; exit 1; }

# cancelled, the runs leave no rows behind
psql -X -At -d $db -c "SELECT pg_cancel_backend(pid) FROM gpudl_progress WHERE program = 'forever'" >/dev/null
wait $bg || true
wait $bg2 || true
grep -q "canceling statement" /tmp/gpudl_progress_bg.out || { cat /tmp/gpudl_progress_bg.out; exit 1; }
left=$(psql -X -At -d $db -c "SELECT count(*) FROM gpudl_progress")
echo "rows after the runs ended: $left"
[ "$left" = 0 ]
dropdb $db
echo "progress: ok"

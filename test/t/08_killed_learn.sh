#!/usr/bin/env bash
# 08_killed_learn: a learn run whose backend dies never stays 'running' in
# gpudl.learn_runs.  The 'running' row is committed at the run's start (by a
# background worker) with the backend's pid and transaction; a row whose
# transaction is no longer in progress is marked 'failed' by the sweep at
# the start of the next gpudl_learn, or by gpudl_learn_runs_sweep().
#   1. SIGKILL of the learning backend (the postmaster restarts every
#      session: this script reconnects), then gpudl_learn_runs_sweep();
#   2. pg_terminate_backend, then the next gpudl_learn sweeps;
#   3. a finished learn whose transaction rolls back.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_killed_learn
dropdb --if-exists $db; createdb $db
psql -X -q -v ON_ERROR_STOP=1 -d $db >/dev/null <<'SQL'
CREATE EXTENSION gpudl;
-- a learn that takes many seconds: four random relations over 1500 nodes,
-- bodies of up to three atoms
SELECT setseed(0.5);
CREATE TABLE r1 AS SELECT (random() * 1500)::int AS a, (random() * 1500)::int AS b FROM generate_series(1, 15000);
CREATE TABLE r2 AS SELECT (random() * 1500)::int AS a, (random() * 1500)::int AS b FROM generate_series(1, 15000);
CREATE TABLE r3 AS SELECT (random() * 1500)::int AS a, (random() * 1500)::int AS b FROM generate_series(1, 15000);
CREATE TABLE r4 AS SELECT (random() * 1500)::int AS a, (random() * 1500)::int AS b FROM generate_series(1, 15000);
CREATE TABLE pos AS SELECT DISTINCT x.a, z.b FROM r1 x JOIN r2 y ON x.b = y.a JOIN r3 z ON y.b = z.a LIMIT 3000;
SELECT gpudl_create_program('slow', 'q1(X, Y) :- r1(X, Y). q2(X, Y) :- r2(X, Y). q3(X, Y) :- r3(X, Y). q4(X, Y) :- r4(X, Y).');
-- a quick one
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES ('a', 'b'), ('b', 'c'), ('c', 'd'), ('d', 'e');
CREATE TABLE gp AS SELECT x.p, y.c FROM parent x JOIN parent y ON x.c = y.p;
SELECT gpudl_create_program('fam', 'child(X, Y) :- parent(Y, X).');
SQL
learn_sql="SELECT count(*) FROM gpudl_learn('slow', 't', 'pos', max_body => 3, epochs => 10000)"

# start the slow learn in the background; print its backend pid once its
# 'running' row is committed and it shows in gpudl_progress
start_slow() {
  psql -X -At -d $db -c "$learn_sql" >/tmp/gpudl_killed_learn.out 2>&1 &
  local pid=""
  for i in $(seq 1 100); do
    pid=$(psql -X -At -d $db -c "SELECT backend_pid FROM gpudl.learn_runs
                                 WHERE status = 'running' AND target = 't' ORDER BY id DESC LIMIT 1")
    [ -n "$pid" ] && break
    sleep 0.1
  done
  [ -n "$pid" ] || { echo "no running row" >&2; return 1; }
  sleep 1
  if psql -X -At -d $db -c "SHOW shared_preload_libraries" | grep -q gpudl; then
    psql -X -At -d $db -c "SELECT 'progress: ' || kind || ' ' || program || ' ' || goal || ' ' || phase
                           FROM gpudl_progress WHERE pid = $pid" >&2
  fi
  echo "$pid"
}

status_of() {  # the run's status and message
  psql -X -At -d $db -c "SELECT status || ' | ' || coalesce(message, '') FROM gpudl.learn_runs WHERE backend_pid = $1 AND target = 't'"
}

# 1. SIGKILL
pid=$(start_slow)
echo "learning backend $pid: $(status_of $pid)"
kill -9 "$pid"
wait || true
# the postmaster resets every backend after the kill and replays the WAL:
# wait for that to begin (connections refused; up to 5 s, it may be over
# already), then to end — a connection taken before the reset saw no
# recovery, and the next test met "the database system is in recovery mode"
for i in $(seq 1 25); do
  psql -X -At -d $db -c "SELECT 1" >/dev/null 2>&1 || break
  sleep 0.2
done
for i in $(seq 1 100); do
  psql -X -At -d $db -c "SELECT 1" >/dev/null 2>&1 && break
  sleep 0.2
done
echo "after SIGKILL and the restart: $(status_of $pid)"
status_of $pid | grep -q "^running" || { echo "expected the row still running before a sweep"; exit 1; }
swept=$(psql -X -At -d $db -c "SELECT gpudl_learn_runs_sweep()")
echo "swept: $swept; now: $(status_of $pid)"
[ "$swept" = 1 ]
status_of $pid | grep -q "^failed | backend ended without finishing: pid $pid is gone" || exit 1
psql -X -At -d $db -c "SELECT finished_at IS NOT NULL FROM gpudl.learn_runs WHERE backend_pid = $pid" | grep -qx t

# 2. pg_terminate_backend; the next learn sweeps
pid=$(start_slow)
psql -X -At -d $db -c "SELECT pg_terminate_backend($pid)" >/dev/null
wait || true
sleep 0.5
psql -X -At -d $db -c "SELECT count(*) > 0 FROM gpudl_learn('fam', 'grandparent', 'gp')" | grep -qx t
echo "after pg_terminate_backend and another learn: $(status_of $pid)"
status_of $pid | grep -q "^failed | backend ended without finishing" || exit 1

# 3. a finished learn in a transaction that rolls back
swept=$(psql -X -At -d $db -c "BEGIN" -c "SELECT count(*) FROM gpudl_learn('fam', 'grandparent', 'gp', seed => 7)" \
          -c "ROLLBACK" -c "SELECT gpudl_learn_runs_sweep()" | tail -1)
[ "$swept" = 1 ] || { echo "swept $swept"; exit 1; }
rb=$(psql -X -At -d $db -c "SELECT status || ' | ' || message FROM gpudl.learn_runs WHERE params->>'seed' = '7'")
echo "rolled back: $rb"
grep -q <<<"$rb" "^failed | run ended without finishing: its transaction rolled back" || exit 1

# nothing is left running, and finished runs were left alone
psql -X -At -d $db -c "SELECT status, count(*) FROM gpudl.learn_runs GROUP BY 1 ORDER BY 1"
[ "$(psql -X -At -d $db -c "SELECT count(*) FROM gpudl.learn_runs WHERE status = 'running'")" = 0 ]
[ "$(psql -X -At -d $db -c "SELECT count(*) FROM gpudl.learn_runs WHERE status = 'succeeded'")" = 1 ]
dropdb $db
echo "killed learn: ok"

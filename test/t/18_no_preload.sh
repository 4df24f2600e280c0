#!/usr/bin/env bash
# 18_no_preload: gpudl installed into a cluster its DBA configured without
# it — shared_preload_libraries holds another library (pg_stat_statements)
# and not gpudl.  CREATE EXTENSION works and the session stays connected
# (0.4 lost it with "FATAL: cannot create PGC_POSTMASTER variables after
# startup"); the service's start-time settings are there, as sighup
# settings; gpudl_service_status says "not preloaded"; gpudl_progress says
# with a NOTICE and a HINT that it shows only this session; a query, a
# count, a materialize, a learn (recorded in gpudl.learn_runs) and a mine
# all work.  Then the DBA adds gpudl to shared_preload_libraries and
# restarts: the same database keeps its programs and rules, the settings
# are postmaster settings and the service runs.  No FATAL, no crash in the
# server log.  Runs its own throwaway cluster (port 54331).
source "$(dirname "$0")/../../tools/pgenv.sh"
set +e -u
work=$(mktemp -d /tmp/gpudl-nopreload.XXXXXX)
[ "$(id -u)" = 0 ] && chown "${GPUDL_SERVER_USER:-postgres}" "$work"
chmod 700 "$work"
data="$work/data"
port=54331
fail=0
export PGPORT=$port PGDATABASE=postgres
export PGOPTIONS="-c client_min_messages=notice"

cleanup() { as_server_user pg_ctl -D "$data" -w stop -m fast >/dev/null 2>&1; rm -rf "$work"; }
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
check() {   # check <what> <expected> <actual>
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected [$2], got [$3]"; fail=1; fi
}
start_server() {
  as_server_user pg_ctl -D "$data" -l "$data/server.log" -w start >/dev/null \
    || { tail -20 "$data/server.log"; echo "FAIL: server start"; exit 1; }
}

as_server_user initdb -D "$data" -A trust -U "$PGUSER" >"$work/initdb.log" 2>&1 \
  || { cat "$work/initdb.log"; exit 1; }
{
  echo "listen_addresses = ''"
  echo "unix_socket_directories = '$PGHOST'"
  echo "port = $port"
  echo "shared_preload_libraries = 'pg_stat_statements'"
} >>"$data/postgresql.conf"
start_server

q() { psql -X -At -d gpudl_np "$@"; }
createdb gpudl_np
out=$(q -c "CREATE EXTENSION gpudl" -c "SELECT 'still connected'" 2>&1)
echo "$out"
check "CREATE EXTENSION without preloading" "CREATE EXTENSION
still connected" "$out"

check "the service's settings are sighup settings without preloading" \
  "gpudl.service|sighup gpudl.service_backend|sighup gpudl.service_buffer|sighup gpudl.service_slots|sighup" \
  "$(q -c "LOAD 'gpudl'" -c "SELECT name || '|' || context FROM pg_settings
            WHERE name IN ('gpudl.service', 'gpudl.service_backend', 'gpudl.service_buffer', 'gpudl.service_slots')
            ORDER BY name" | grep -v '^LOAD$' | tr '\n' ' ' | sed 's/ $//')"
check "gpudl_service_status without preloading" "not preloaded" \
  "$(q -c "SELECT state FROM gpudl_service_status()")"
# a session-level SET of a start-time setting is refused with a clear error, not a FATAL
out=$(q -c "LOAD 'gpudl'" -c "SET gpudl.service_slots = 4" 2>&1)
case "$out" in *"cannot be changed now"*) echo "ok: SET of a start-time setting refused";;
  *) echo "FAIL: SET gpudl.service_slots: $out"; fail=1;; esac

out=$(q -c "SELECT count(*) FROM gpudl_progress" 2>&1)
case "$out" in
  *"NOTICE:  gpudl_progress shows only this session's work"*"HINT:  Add gpudl to shared_preload_libraries"*)
    echo "ok: gpudl_progress says it sees only this session";;
  *) echo "FAIL: gpudl_progress without preloading: $out"; fail=1;;
esac

# the main job without preloading: query, count, materialize, learn, mine
q -v ON_ERROR_STOP=1 -q >"$work/job.out" 2>&1 <<'SQL'
CREATE TABLE parent(p text, c text);
INSERT INTO parent VALUES
  ('abe', 'homer'), ('mona', 'homer'), ('homer', 'bart'), ('homer', 'lisa'),
  ('homer', 'maggie'), ('marge', 'bart'), ('marge', 'lisa'), ('marge', 'maggie'),
  ('clancy', 'marge'), ('jackie', 'marge'), ('clancy', 'patty'), ('clancy', 'selma'),
  ('selma', 'ling'), ('bart', 'bo');
-- positives only: negatives are drawn by partial completeness
CREATE TABLE gp_examples AS
  SELECT DISTINCT a.p AS grandparent, b.c AS grandchild FROM parent a JOIN parent b ON a.c = b.p;
SELECT gpudl_create_program('family', 'anc(X, Y) :- parent(X, Y).  anc(X, Z) :- anc(X, Y), parent(Y, Z).');
\o /dev/null
SELECT * FROM gpudl_learn('family', 'grandparent', 'SELECT * FROM gp_examples', commit => true);
\o
SQL
rc=$?
[ $rc = 0 ] || { cat "$work/job.out"; echo "FAIL: the sample job"; fail=1; }
check "query" "$(q -c "WITH RECURSIVE a(x, y) AS (SELECT p, c FROM parent UNION SELECT a.x, p.c FROM a JOIN parent p ON a.y = p.p) SELECT count(*) FROM a")" "$(q -c "SELECT count(*) FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text)")"
check "count" "5" "$(q -c "SELECT gpudl_count('family', 'anc(\"abe\", Y)')")"
check "materialize" "$(q -c "SELECT count(*) FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text)")" "$(q -c "SELECT gpudl_materialize('family', 'anc', 'ancestors')" >/dev/null; q -c "SELECT count(*) FROM ancestors")"
check "learned rule answers" "$(q -c "SELECT count(*) FROM gp_examples")" "$(q -c "SELECT count(*) FROM gpudl_query('family', 'grandparent(X, Y)') AS t(a text, b text)")"
# the learn run is recorded by a dynamic background worker: wait for it
runs=0
for i in $(seq 1 50); do
  runs=$(q -c "SELECT count(*) FROM gpudl.learn_runs WHERE target = 'grandparent' AND status = 'succeeded'")
  [ "$runs" = 1 ] && break; sleep 0.1
done
check "learn run recorded" "1" "$runs"
check "mining works" "t" "$(q -c "SELECT count(*) > 0 FROM gpudl_mine('family', 'anc')")"

# the DBA preloads gpudl now: same database, same programs, the service runs
sed -i "s/^shared_preload_libraries = .*/shared_preload_libraries = 'pg_stat_statements,gpudl'/" "$data/postgresql.conf"
as_server_user pg_ctl -D "$data" -l "$data/server.log" -w restart >/dev/null \
  || { tail -20 "$data/server.log"; echo "FAIL: restart with gpudl preloaded"; exit 1; }
check "the service's settings are postmaster settings when preloaded" \
  "gpudl.service|postmaster gpudl.service_slots|postmaster" \
  "$(q -c "SELECT name || '|' || context FROM pg_settings WHERE name IN ('gpudl.service', 'gpudl.service_slots') ORDER BY name" \
     | tr '\n' ' ' | sed 's/ $//')"
state=""
for i in $(seq 1 50); do
  state=$(q -c "SELECT state FROM gpudl_service_status()")
  case "$state" in ready|no_gpu|"no GPU"*) break;; esac; sleep 0.1
done
case "$state" in "not preloaded"|off|"") echo "FAIL: service after preloading: [$state]"; fail=1;;
  *) echo "ok: service after preloading: $state";; esac
check "programs and learned rules kept" "$(q -c "SELECT count(*) FROM gp_examples")" \
  "$(q -c "SELECT count(*) FROM gpudl_query('family', 'grandparent(X, Y)') AS t(a text, b text)")"

if grep -E "FATAL|terminated by signal|PGC_POSTMASTER" "$data/server.log" | grep -v "terminating connection due to administrator command"; then
  echo "FAIL: the server log has a FATAL or a crash"; fail=1
else
  echo "ok: no FATAL, no crash in the server log"
fi
[ $fail = 0 ] && echo "18_no_preload: PASS" || echo "18_no_preload: FAIL"
exit $fail

#!/usr/bin/env bash
# 17_long_cancel: every long call stops within a second (issue 20).
#
# For each kind of long call — mining, prediction, learning (refinement
# search and bulk coverage), gpudl_materialize, gpudl_count and gpudl_query
# of a long fixpoint — and each way of stopping it — pg_cancel_backend,
# statement_timeout, pg_terminate_backend — measure the time from the
# signal to the call returning (psql exiting) and require it below
# GPUDL_CANCEL_LIMIT_MS (default 1000).  After each: the cluster did not
# restart (no "terminated by signal" in the server log), the GPU service has
# the same pid, nothing is left in gpudl_gpu_jobs.  Then a fast shutdown
# while a long call runs: pg_ctl stop -m fast returns within a few seconds,
# the log shows a clean shutdown, the server starts again.
#
# Two configurations: in the session on the CPU (gpudl.device = cpu) and
# through the GPU service (gpudl.device = gpu), the service on its CPU
# backend (gpudl.service_backend = cpu, so that its job paths run in CI) or
# on CUDA with GPUDL_SERVICE_BACKEND=cuda GPUDL_TEST_GPU=1 (GPU machine).
# Prints a table of latencies (docs/TESTING.md, issue 20).
# GPUDL_CANCEL_KINDS / GPUDL_CANCEL_SIGNALS / GPUDL_CANCEL_MODES restrict
# the runs (space-separated names); GPUDL_CANCEL_GPU_INPUTS=1 (the default
# with GPUDL_TEST_GPU=1) takes inputs that run long on a GPU too.
source "$(dirname "$0")/../../tools/pgenv.sh"
set +e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_long
backend="${GPUDL_SERVICE_BACKEND:-cpu}"
limit_ms="${GPUDL_CANCEL_LIMIT_MS:-1000}"
kinds="${GPUDL_CANCEL_KINDS:-mine predict learn_refine learn_bulk materialize count query}"
signals="${GPUDL_CANCEL_SIGNALS:-cancel timeout terminate}"
modes="${GPUDL_CANCEL_MODES:-cpu service}"
run_for="${GPUDL_CANCEL_RUN_FOR:-1.0}"	# seconds a call runs before the signal
if [ "$backend" = cuda ] && [ "${GPUDL_TEST_GPU:-0}" != 1 ]; then
  echo "long_cancel: GPUDL_SERVICE_BACKEND=cuda needs GPUDL_TEST_GPU=1"; exit 1
fi

spl=$(psql -X -At -d postgres -c "SHOW shared_preload_libraries" 2>/dev/null)
preloaded=0
case ",${spl// /}," in *,gpudl,*) preloaded=1 ;; esac
if [ $preloaded = 0 ]; then
  echo "long_cancel: gpudl is not preloaded: the service runs are skipped"
  modes="${modes//service/}"
fi

fails=0
ok()   { echo "ok: $*"; }
bad()  { echo "FAIL: $*"; fails=$((fails + 1)); }
q()  { psql -X -At -d $db "$@" 2>&1; }
now() { date +%s.%N; }
ms_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%d", (b - a) * 1000 }'; }

source "$(dirname "$0")/lib/cluster.sh"
save_autoconf
restore() { kill_jobs; restore_cluster; }
trap restore EXIT

if [ $preloaded = 1 ]; then
  psql -X -q -d postgres -c "ALTER SYSTEM SET gpudl.service_backend = '$backend'" \
    -c "ALTER SYSTEM RESET gpudl.device_memory_budget" -c "ALTER SYSTEM RESET gpudl.cluster_host_memory" \
    || { echo "FAIL: ALTER SYSTEM"; exit 1; }
  pg_restart || { echo "FAIL: restart"; tail -20 "$PGDATA/server.log"; exit 1; }
fi
log="$PGDATA/server.log"
log_from=$(stat -c %s "$log" 2>/dev/null || echo 0)
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null

# ----- inputs that run for many seconds on the CPU
q -q -v ON_ERROR_STOP=1 <<'SQL' >/dev/null || { echo "FAIL: setup"; exit 1; }
CREATE EXTENSION gpudl;
-- a random knowledge graph: schema nm with relations r0..r<nrels-1>, each of
-- up to nfacts distinct pairs over entities 0..maxent, and a program nm
-- binding them
CREATE FUNCTION random_kg(nm text, nrels int, maxent int, nfacts int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE SCHEMA %I', nm);
  FOR r IN 0..nrels - 1 LOOP
    EXECUTE format('CREATE TABLE %I.r%s(s int, o int)', nm, r);
    EXECUTE format('INSERT INTO %I.r%s SELECT DISTINCT (random() * %s)::int, (random() * %s)::int
                    FROM generate_series(1, %s)', nm, r, maxent, maxent, nfacts);
  END LOOP;
  PERFORM gpudl_create_program(nm);
  PERFORM gpudl_bind(nm, 'r' || r, nm || '.r' || r) FROM generate_series(0, nrels - 1) r;
END $$;
SELECT setseed(0.2);
-- a small dense knowledge graph: 40 relations over 30 entities
SELECT random_kg('kg', 40, 29, 300);
-- prediction over many rules: mined (max_body 2) and committed, many queries
SELECT gpudl_create_program('kgp');
SELECT gpudl_bind('kgp', 'r' || r, 'kg.r' || r) FROM generate_series(0, 39) r;
SELECT count(*) FROM gpudl_mine('kgp', max_body => 2, min_confidence => 0.0, min_head_coverage => 0.0, commit => true);
CREATE TABLE pq AS SELECT s, NULL::int AS o FROM kg.r0, generate_series(1, 40) g;
-- a fixpoint of millions of rounds (gpudl.max_iterations is raised for the
-- calls) for count, query and materialize: a closure of millions of tuples
-- finishes in under a second on a machine faster than the 2-core one (CI
-- met that with the transitive closure of a dense 16,000-edge graph)
SELECT gpudl_create_program('cnt', 'n(0). n(Y) :- n(X), Y = X + 1.');
-- learning: a target over the knowledge graph, every entity pair an example
CREATE TABLE ex AS SELECT s, o, (s + o) % 3 = 0 AS label FROM generate_series(0, 29) s, generate_series(0, 29) o;
CREATE TABLE pos AS SELECT s, o FROM ex WHERE label;
CREATE TABLE neg AS SELECT s, o FROM ex WHERE NOT label;
SQL
if [ "${GPUDL_CANCEL_GPU_INPUTS:-${GPUDL_TEST_GPU:-0}}" = 1 ]; then
  # the GPU finishes the inputs above in well under a second: the issue's
  # graph for mining (14 entities, 55 dense relations: 130 s on the H200
  # before)
  q -q -v ON_ERROR_STOP=1 <<'SQL' >/dev/null || { echo "FAIL: GPU setup"; exit 1; }
SELECT setseed(0.3);
SELECT random_kg('kg14', 55, 13, 120);
-- bulk learning: the small graph's training converges in about a second on
-- the GPU; 40 relations over 120 entities and 14,400 examples take longer
SELECT setseed(0.4);
SELECT random_kg('kgb', 40, 119, 4500);
CREATE TABLE exb AS SELECT s, o, (s + o) % 3 = 0 AS label FROM generate_series(0, 119) s, generate_series(0, 119) o;
CREATE TABLE posb AS SELECT s, o FROM exb WHERE label;
CREATE TABLE negb AS SELECT s, o FROM exb WHERE NOT label;
SQL
  sed_gpu=1
fi
ok "setup"

mine_kg=kg; bulk_kg=kg; bulk_ex=""
if [ "${sed_gpu:-0}" = 1 ]; then mine_kg=kg14; bulk_kg=kgb; bulk_ex=b; fi

svc_pid() {
  [ $preloaded = 1 ] || { echo 0; return; }
  q -c "SELECT coalesce((SELECT pid FROM pg_stat_activity WHERE backend_type = 'gpudl GPU service'), 0)"
}

# the SQL of each kind of call
call_sql() {
  case $1 in
    mine) echo "SELECT count(*) FROM gpudl_mine('${mine_kg}', max_body => 3, min_head_coverage => 0.0, min_confidence => 0.0)" ;;
    predict) echo "SELECT count(*) FROM gpudl_predict('kgp', 'r0', 'SELECT s, o FROM pq', \"limit\" => 0)" ;;
    learn_refine) echo "SELECT count(*) FROM gpudl_learn('kg', 'tgt', 'SELECT * FROM pos', 'SELECT * FROM neg', max_body => 3, max_rules => 64, method => 'refine')" ;;
    learn_bulk) echo "SELECT count(*) FROM gpudl_learn('${bulk_kg}', 'tgt', 'SELECT * FROM pos${bulk_ex}', 'SELECT * FROM neg${bulk_ex}', max_body => 2, max_rules => 64, method => 'bulk', epochs => 10000000)" ;;
    materialize) echo "SELECT gpudl_materialize('cnt', 'n', 'tc_out')" ;;
    count) echo "SELECT gpudl_count('cnt', 'n(X)')" ;;
    query) echo "SELECT count(*) FROM gpudl_query('cnt', 'n(X)') AS t(a bigint)" ;;
  esac
}

declare -A lat
# one_case MODE KIND SIGNAL: start the call, stop it, measure, check health
one_case() {
  local mode=$1 kind=$2 sig=$3 device opts sql before after pid start took out expect
  device=cpu; [ "$mode" = service ] && device=gpu
  opts="-c client_min_messages=warning -c gpudl.device=$device -c gpudl.max_iterations=2000000000"
  [ "$sig" = timeout ] && opts="$opts -c statement_timeout=$(awk -v s="$run_for" 'BEGIN { printf "%d", s * 1000 }')"
  sql=$(call_sql "$kind")
  before=$(svc_pid)
  # the first line of the output: the time the long statement starts (its timeout counts from there)
  PGOPTIONS="$opts" PGAPPNAME=long_$kind psql -X -At -d $db -c "SELECT extract(epoch FROM clock_timestamp())" \
    -c "$sql" >"$tmp/out" 2>&1 &
  local bg=$!
  if [ "$sig" = timeout ]; then
    wait $bg
    start=$(head -1 "$tmp/out")
    took=$(( $(ms_since "$start") - $(awk -v s="$run_for" 'BEGIN { printf "%d", s * 1000 }') ))
    expect="canceling statement due to statement timeout"
  else
    sleep "$run_for"
    pid=$(q -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'long_$kind' AND state = 'active'")
    if [ -z "$pid" ]; then
      bad "$mode $kind $sig: the call was not running after ${run_for}s: $(tr '\n' ' ' <"$tmp/out")"
      wait $bg; return
    fi
    # the signal's time as the server took it (the same clock as date's):
    # what starting the signalling psql costs on a loaded machine is not counted
    local fn=pg_cancel_backend
    expect="canceling statement due to user request"
    if [ "$sig" = terminate ]; then
      fn=pg_terminate_backend
      expect="terminating connection due to administrator command|server closed the connection"
    fi
    start=$(q -c "SELECT s FROM (SELECT $fn($pid) AS r, extract(epoch FROM clock_timestamp()) AS s) x")
    wait $bg
    took=$(ms_since "$start")
  fi
  out=$(tr '\n' ' ' <"$tmp/out")
  lat[$mode,$kind,$sig]=$took
  if ! grep -Eq "$expect" "$tmp/out"; then
    bad "$mode $kind $sig: not stopped by the signal (the input is too small?): $out"
  elif [ "$took" -gt "$limit_ms" ] && [ "${retried:-0}" = 0 ]; then
    # one more measurement: a load spike of a shared 2-core machine is not the
    # call's latency; twice over the limit fails
    echo "note: $mode $kind $sig: stopped after $took ms (limit $limit_ms); measured once more"
    wait; retried=1 one_case "$mode" "$kind" "$sig"; return
  elif [ "$took" -gt "$limit_ms" ]; then
    bad "$mode $kind $sig: stopped after $took ms (limit $limit_ms, also on the second measurement)"
  else
    ok "$mode $kind $sig: $took ms"
  fi
  # health: same service, nothing queued, no crash
  after=$(svc_pid)
  [ "$before" = "$after" ] || bad "$mode $kind $sig: the GPU service changed ($before -> $after)"
  if [ $preloaded = 1 ]; then
    local jobs_left i
    for i in 1 2 3 4 5 6 7 8 9 10; do
      jobs_left=$(q -c "SELECT count(*) FROM gpudl_gpu_jobs")
      [ "$jobs_left" = 0 ] && break
      sleep 0.1
    done
    [ "$jobs_left" = 0 ] || bad "$mode $kind $sig: $jobs_left left in gpudl_gpu_jobs: $(q -c 'SELECT * FROM gpudl_gpu_jobs')"
  fi
  if tail -c +$((log_from + 1)) "$log" | grep -Eq "terminated by signal|all server processes terminated|was terminated by"; then
    bad "$mode $kind $sig: a process crashed: $(tail -c +$((log_from + 1)) "$log" | grep -E 'terminated by' | head -3)"
    log_from=$(stat -c %s "$log")
  fi
  [ "$(q -c 'SELECT 1')" = 1 ] || bad "$mode $kind $sig: the server does not answer"
}

for mode in $modes; do
  for kind in $kinds; do
    for sig in $signals; do
      one_case "$mode" "$kind" "$sig"
    done
  done
done

# ----- a fast shutdown while a long call runs
fast_shutdown() {
  local mode=$1 device=cpu start took
  [ "$mode" = service ] && device=gpu
  PGOPTIONS="-c gpudl.device=$device" PGAPPNAME=long_shutdown \
    psql -X -At -d $db -c "$(call_sql mine)" >"$tmp/out" 2>&1 &
  local bg=$!
  sleep "$run_for"
  start=$(now)
  as_server_user pg_ctl -D "$PGDATA" -m fast -w -t 30 stop >/dev/null 2>&1
  took=$(ms_since "$start")
  wait $bg
  lat[$mode,mine,shutdown]=$took
  if [ "$took" -gt 5000 ]; then bad "$mode fast shutdown took $took ms"; else ok "$mode fast shutdown: $took ms"; fi
  if tail -c +$((log_from + 1)) "$log" | grep -Eq "terminated by signal|abnormal database system shutdown"; then
    bad "$mode fast shutdown: not clean: $(tail -c +$((log_from + 1)) "$log" | grep -E 'terminated by|abnormal' | head -3)"
  fi
  tail -c +$((log_from + 1)) "$log" | grep -q "database system is shut down" \
    || bad "$mode fast shutdown: no 'database system is shut down' in the log"
  pg_start >/dev/null 2>&1 || bad "$mode: the server did not start after the fast shutdown"
  log_from=$(stat -c %s "$log")
  [ "$(q -c 'SELECT 1')" = 1 ] || bad "$mode: the server does not answer after the restart"
}
for mode in $modes; do fast_shutdown "$mode"; done

# ----- the table
echo
echo "cancel latency (ms), service backend: $backend, limit $limit_ms ms"
printf "%-8s %-13s %8s %8s %10s %9s\n" mode call cancel timeout terminate shutdown
for mode in $modes; do
  for kind in $kinds; do
    printf "%-8s %-13s %8s %8s %10s %9s\n" "$mode" "$kind" "${lat[$mode,$kind,cancel]:--}" \
      "${lat[$mode,$kind,timeout]:--}" "${lat[$mode,$kind,terminate]:--}" "${lat[$mode,$kind,shutdown]:--}"
  done
done
echo
if [ $fails -gt 0 ]; then echo "long_cancel: $fails failures"; exit 1; fi
echo "long_cancel: ok"

#!/usr/bin/env bash
# 10_service: the GPU service with several sessions — status, equal answers
# through it, the device queue (waiting, cancel, wait timeout, auto falling
# back to the CPU, statement_timeout), the host memory queue, the death of
# the service while it runs a session's work, a backend killed mid-run
# (crash recovery), and privileges of the calling role.
#
# Restarts the private cluster with gpudl.service_backend = 'cpu' (the
# service serves the CPU backend, so this runs without a GPU), or keeps cuda
# when GPUDL_SERVICE_BACKEND=cuda (on the GPU machine); the previous
# configuration comes back at the end.
source "$(dirname "$0")/../../tools/pgenv.sh"
set +e
export PGOPTIONS="-c client_min_messages=warning -c gpudl.max_iterations=100000000"
db=gpudl_service
role=gpudl_svc_nopriv
backend="${GPUDL_SERVICE_BACKEND:-cpu}"
t0=$(date +%s.%N)

spl=$(psql -X -At -d postgres -c "SHOW shared_preload_libraries" 2>/dev/null)
case ",${spl// /}," in
  *,gpudl,*) ;;
  *) echo "service: skipped (gpudl is not in shared_preload_libraries)"; exit 0 ;;
esac

fails=0
ok()   { echo "ok: $*"; }
bad()  { echo "FAIL: $*"; fails=$((fails + 1)); }
# check NAME ACTUAL EXPECTED
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', expected '$3'"; fi; }
# check_grep NAME FILE PATTERN (extended regexp)
check_grep() {
  if grep -Eq -- "$3" "$2"; then ok "$1"; else bad "$1: no /$3/ in: $(tr '\n' ' ' <"$2")"; fi
}
q()  { psql -X -At -d $db "$@" 2>&1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# wait_for CONDITION SECONDS: poll a boolean SQL expression every 50 ms
wait_for() {
  local end; end=$(awk -v n="$(now)" -v s="$2" 'BEGIN { printf "%.3f", n + s }')
  while awk -v n="$(now)" -v e="$end" 'BEGIN { exit !(n < e) }'; do
    [ "$(psql -X -At -d $db -c "SELECT ($1)" 2>/dev/null)" = t ] && return 0
    sleep 0.05
  done
  return 1
}
# session NAME SQL...: a background psql (application_name svc_NAME, errors
# with their SQLSTATE) running each SQL argument; output in $tmp/NAME.out
declare -A bgpid
session() {
  local name=$1; shift
  local args=()
  for s in "$@"; do args+=(-c "$s"); done
  PGAPPNAME=svc_$name psql -X -At -v VERBOSITY=verbose -d $db "${args[@]}" >"$tmp/$name.out" 2>&1 &
  bgpid[$name]=$!
}
pid_of() { q -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'svc_$1'"; }
job_state() { q -c "SELECT coalesce(string_agg(resource || ' ' || state, ','), 'none') FROM gpudl_gpu_jobs WHERE pid = $1"; }
finish() { wait "${bgpid[$1]}" 2>/dev/null; }

# ----- configuration: the service on the CPU backend (or cuda), restored at the end
source "$(dirname "$0")/lib/cluster.sh"
save_autoconf
restore() {
  kill_jobs
  exec 3>&- 2>/dev/null
  restore_cluster "DROP ROLE IF EXISTS $role"
}
trap restore EXIT

psql -X -q -d postgres -c "ALTER SYSTEM SET gpudl.service_backend = '$backend'" \
  -c "ALTER SYSTEM RESET gpudl.device_memory_budget" -c "ALTER SYSTEM RESET gpudl.cluster_host_memory" \
  || { echo "FAIL: ALTER SYSTEM"; exit 1; }
pg_restart || { echo "FAIL: restart with gpudl.service_backend = $backend"; tail -20 "$PGDATA/server.log"; exit 1; }
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "DROP ROLE IF EXISTS $role" -c "CREATE DATABASE $db" >/dev/null
q -q -v ON_ERROR_STOP=1 <<'SQL' >/dev/null || { echo "FAIL: setup"; exit 1; }
CREATE EXTENSION gpudl;
SELECT setseed(0.1);
CREATE TABLE edge(a int, b int);
INSERT INTO edge SELECT DISTINCT (random() * 300)::int, (random() * 300)::int FROM generate_series(1, 450);
CREATE TABLE nm(id int, name text);
INSERT INTO nm SELECT i, 'node ' || i FROM generate_series(0, 300) i WHERE i % 3 = 0;
CREATE TABLE big(a int, b int);
INSERT INTO big SELECT DISTINCT (random() * 3000)::int, (random() * 3000)::int FROM generate_series(1, 6000);
SQL
tc_rules='p(X, Y) :- edge(X, Y). p(X, Z) :- p(X, Y), edge(Y, Z). named(N, M) :- p(X, Y), nm(X, N), nm(Y, M).'
tcbig_rules='p(X, Y) :- big(X, Y). p(X, Z) :- p(X, Y), big(Y, Z).'
# programs of the same rules under other names: their runs have no
# remembered peak, so each first admission asks for 256 MB of device memory
program() { q -c "SELECT gpudl_create_program('$1', '$2')" >/dev/null; }
program tc "$tc_rules"
counter() { q -c "SELECT gpudl_create_program('$1', 'n(0). n(Y) :- n(X), Y = X + 1, Y < $2.')" >/dev/null; }

# ----- 1. status
if ! wait_for "(SELECT state FROM gpudl_service_status()) IN ('ready', 'no gpu')" 30; then
  bad "service did not start: $(q -c 'SELECT * FROM gpudl_service_status()')"; exit 1
fi
if [ "$backend" = cuda ] && [ "$(q -c 'SELECT state FROM gpudl_service_status()')" != ready ]; then
  echo "service: skipped (no GPU: $(q -c 'SELECT device FROM gpudl_service_status()'))"; exit 0
fi
check "1. service state" "$(q -c "SELECT state, pid > 0, generation >= 1, slots > 0, device_committed_bytes, running, waiting FROM gpudl_service_status()")" \
  "ready|t|t|t|0|0|0"
svcpid=$(q -c "SELECT pid FROM gpudl_service_status()")
check "1. the service is a process of the cluster" \
  "$(q -c "SELECT backend_type FROM pg_stat_activity WHERE pid = $svcpid")" "gpudl GPU service"
check "1. gpudl_device_info shows the service" \
  "$(q -c "SELECT count(*) FROM gpudl_device_info() WHERE backend = 'cuda' AND device LIKE '%(GPU service, pid $svcpid)'")" 1

# ----- 2. the same answers through the service
want=$(q -c "WITH RECURSIVE r(a, b) AS (SELECT a, b FROM edge UNION SELECT r.a, e.b FROM r JOIN edge e ON e.a = r.b) SELECT count(*) FROM r")
want5=$(q -c "WITH RECURSIVE r(a, b) AS (SELECT a, b FROM edge WHERE a = 5 UNION SELECT r.a, e.b FROM r JOIN edge e ON e.a = r.b) SELECT count(*) FROM r")
out=$(q -v ON_ERROR_STOP=1 <<'SQL'
SET gpudl.device = gpu;
SELECT 'count ' || gpudl_count('tc', 'p(X, Y)');
SELECT 'count5 ' || gpudl_count('tc', 'p(5, Y)');
CREATE TEMP TABLE g AS SELECT * FROM gpudl_query('tc', 'p(X, Y)') AS t(a int, b int);
CREATE TEMP TABLE gn AS SELECT * FROM gpudl_query('tc', 'named(N, M)') AS t(n text, m text);
SELECT 'gpu_runs ' || value FROM gpudl_stats() WHERE name = 'gpu_runs';
SET gpudl.device = cpu;
SELECT 'cpu count ' || gpudl_count('tc', 'p(X, Y)');
CREATE TEMP TABLE c AS SELECT * FROM gpudl_query('tc', 'p(X, Y)') AS t(a int, b int);
CREATE TEMP TABLE cn AS SELECT * FROM gpudl_query('tc', 'named(N, M)') AS t(n text, m text);
SELECT 'rows ' || (SELECT count(*) FROM g) || ' ' || (SELECT count(*) FROM c);
SELECT 'differ ' || ((SELECT count(*) FROM (SELECT * FROM g EXCEPT SELECT * FROM c) x)
                   + (SELECT count(*) FROM (SELECT * FROM c EXCEPT SELECT * FROM g) y));
SELECT 'named ' || (SELECT count(*) FROM gn) || ' ' ||
       ((SELECT count(*) FROM (SELECT * FROM gn EXCEPT SELECT * FROM cn) x)
      + (SELECT count(*) FROM (SELECT * FROM cn EXCEPT SELECT * FROM gn) y));
SQL
)
check "2. count through the service = WITH RECURSIVE" "$(echo "$out" | sed -n 's/^count //p')" "$want"
check "2. goal-directed count through the service" "$(echo "$out" | sed -n 's/^count5 //p')" "$want5"
check "2. the runs went to the service" "$(echo "$out" | sed -n 's/^gpu_runs //p')" 4
check "2. count on the CPU" "$(echo "$out" | sed -n 's/^cpu count //p')" "$want"
check "2. gpudl_query rows, service and CPU" "$(echo "$out" | sed -n 's/^rows //p')" "$want $want"
check "2. gpudl_query rows differ" "$(echo "$out" | sed -n 's/^differ //p')" 0
nwant=$(q -c "SELECT count(DISTINCT (x.name, y.name)) FROM (WITH RECURSIVE r(a, b) AS (SELECT a, b FROM edge UNION SELECT r.a, e.b FROM r JOIN edge e ON e.a = r.b) SELECT * FROM r) r JOIN nm x ON x.id = r.a JOIN nm y ON y.id = r.b")
check "2. text answers (named) equal" "$(echo "$out" | sed -n 's/^named //p')" "$nwant 0"
[ "$want" -gt 1000 ] || bad "2. the random graph is too small ($want)"

# ----- 3-6. the device queue: one run at a time under a 300 MB budget
# A counts up without bound (until the test cancels it), so it holds the
# device for as long as the checks take, however fast or loaded this machine is.
q -c "SELECT gpudl_create_program('along', 'n(0). n(Y) :- n(X), Y = X + 1.')" >/dev/null
for p in qb qc qd qd2 qe; do program $p "$tc_rules"; done
q -c "ALTER SYSTEM SET gpudl.device_memory_budget = 300" -c "SELECT pg_reload_conf()" >/dev/null
wait_for "(SELECT device_budget_bytes FROM gpudl_service_status()) = 300 * 1024 * 1024" 5 \
  || bad "3. the budget did not change to 300 MB"
session A "SET gpudl.device = gpu" "SELECT gpudl_count('along', 'n(X)'), extract(epoch FROM clock_timestamp())"
wait_for "EXISTS (SELECT FROM gpudl_gpu_jobs j JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'svc_A' AND j.state = 'running')" 10 \
  || bad "3. A is not running: $(cat "$tmp/A.out")"
apid=$(pid_of A)
session B "SET gpudl.device = gpu" "SELECT gpudl_count('qb', 'p(X, Y)'), extract(epoch FROM clock_timestamp())"
wait_for "EXISTS (SELECT FROM gpudl_gpu_jobs j JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'svc_B' AND j.state = 'waiting')" 5 \
  || bad "3. B is not waiting"
bpid=$(pid_of B)
check "3. A runs, B waits (gpudl_gpu_jobs)" \
  "$(q -c "SELECT string_agg(j.state || ' ' || j.resource || ' ' || j.program || ' ' || (j.need_bytes >> 20), ', ' ORDER BY j.state) FROM gpudl_gpu_jobs j WHERE pid IN ($apid, $bpid)")" \
  "running device along 256, waiting device qb 256"
check "3. status counts" "$(q -c "SELECT running, waiting, device_committed_bytes >> 20 FROM gpudl_service_status()")" "1|1|256"
# 4. cancel while waiting
session C "SET gpudl.device = gpu" "SELECT gpudl_count('qc', 'p(X, Y)')"
# 5. wait timeouts: gpu raises 53200, auto runs on the CPU
session D "SET gpudl.device = gpu" "SET gpudl.device_wait_timeout = 300" "SELECT gpudl_count('qd', 'p(X, Y)')"
session D2 "SET gpudl.device = auto" "SET gpudl.device_wait_timeout = 300" \
  "SELECT 'count ' || gpudl_count('qd2', 'p(X, Y)')" \
  "SELECT name || ' ' || value FROM gpudl_stats() WHERE name IN ('cpu_fallbacks', 'gpu_runs') ORDER BY name"
# 6. statement_timeout while waiting
session E "SET gpudl.device = gpu" "SET statement_timeout = 500" "SELECT gpudl_count('qe', 'p(X, Y)')"
wait_for "EXISTS (SELECT FROM gpudl_gpu_jobs j JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'svc_C' AND j.state = 'waiting')" 5 \
  || bad "4. C is not waiting"
cpid=$(pid_of C)
s=$(now)
q -c "SELECT pg_cancel_backend($cpid)" >/dev/null
finish C; took=$(elapsed "$s")
check_grep "4. the waiting run is cancelled (57014)" "$tmp/C.out" "ERROR:  57014: canceling statement due to user request"
awk -v t="$took" 'BEGIN { exit !(t < 1.5) }' && ok "4. cancel took ${took}s" || bad "4. cancel took ${took}s"
check "4. its row is gone" "$(job_state "$cpid")" none
finish D; finish D2; finish E
check_grep "5. gpu: 53200 after the wait" "$tmp/D.out" "ERROR:  53200: gpudl: the GPU was busy: waited [0-9]+ ms for 256 MB of device memory"
check_grep "5. ... held by A" "$tmp/D.out" "DETAIL:  Held by pid $apid \(256 MB, program along\)"
waited=$(sed -n 's/.*busy: waited \([0-9]*\) ms.*/\1/p' "$tmp/D.out")
[ -n "$waited" ] && [ "$waited" -ge 300 ] && [ "$waited" -lt 2000 ] && ok "5. waited $waited ms" || bad "5. waited '$waited' ms"
check "5. auto: the right answer on the CPU" "$(tr '\n' ' ' <"$tmp/D2.out")" "SET SET count $want cpu_fallbacks 1 gpu_runs 0 "
check_grep "6. statement_timeout while waiting (57014)" "$tmp/E.out" "ERROR:  57014: canceling statement due to statement timeout"
check "4-6. only A and B are left" \
  "$(q -c "SELECT string_agg(state, ',' ORDER BY state) FROM gpudl_gpu_jobs")" "running,waiting"
check "4-6. A still runs" "$(job_state "$apid")" "device running"
s=$(now)
q -c "SELECT pg_cancel_backend($apid)" >/dev/null
finish A; finish B
check "3-4. A ran until cancelled" "$(grep -c ERROR "$tmp/A.out")|$(grep -c 'ERROR:  57014: canceling statement due to user request' "$tmp/A.out")" "1|1"
b_out=$(tail -1 "$tmp/B.out")
check "3. B's answer" "${b_out%%|*}" "$want"
awk -v a="$s" -v b="${b_out##*|}" 'BEGIN { exit !(b > a) }' \
  && ok "3. B finished after A" || bad "3. B finished at ${b_out##*|}, A was cancelled at $s"
check "3-6. nothing left" "$(q -c "SELECT running, waiting, device_committed_bytes FROM gpudl_service_status()")" "0|0|0"
q -c "ALTER SYSTEM RESET gpudl.device_memory_budget" -c "SELECT pg_reload_conf()" >/dev/null

# ----- 7. the host memory queue
# A watcher polls gpudl_gpu_jobs every 2 ms inside the server (runs may be
# short): the jobs of a program until it saw npids sessions come and go.
q -q <<'SQL' >/dev/null
CREATE FUNCTION watch_jobs(prog text, npids int, secs float8) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  seen int[] := '{}'; now_pids int[]; w int; r int; n bigint;
  max_wait int := 0; max_run int := 0; max_need bigint := 0;
  deadline timestamptz := clock_timestamp() + secs * interval '1 second';
BEGIN
  LOOP
    SELECT count(*) FILTER (WHERE state = 'waiting'), count(*) FILTER (WHERE state = 'running'),
           coalesce(max(need_bytes), 0), coalesce(array_agg(pid), '{}')
      INTO w, r, n, now_pids FROM gpudl_gpu_jobs WHERE program = prog AND resource = 'host';
    max_wait := greatest(max_wait, w); max_run := greatest(max_run, r); max_need := greatest(max_need, n);
    seen := ARRAY(SELECT DISTINCT unnest(seen || now_pids));
    EXIT WHEN (cardinality(seen) >= npids AND cardinality(now_pids) = 0) OR clock_timestamp() > deadline;
    PERFORM pg_sleep(0.002);
  END LOOP;
  RETURN format('sessions %s waiting %s running %s need %s', cardinality(seen), max_wait, max_run, max_need >> 20);
END $$;
SQL
program hx "$tcbig_rules"
bigwant=$(q -c "SET gpudl.device = cpu" -c "SELECT gpudl_count('hx', 'p(X, Y)')" | tail -1)
[ "$bigwant" -gt 1000000 ] 2>/dev/null || bad "7. big TC: $bigwant"
# the second run asks for the peak the first one left
session W0 "SELECT watch_jobs('hx', 1, 30)"
wait_for "EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'svc_W0' AND state = 'active')" 5
session H0 "SET gpudl.device = cpu" "SELECT gpudl_count('hx', 'p(X, Y)')"
finish H0; finish W0
check "7. second run" "$(tail -1 "$tmp/H0.out")" "$bigwant"
peak_mb=$(sed -n 's/^sessions 1 waiting 0 running 1 need \([0-9]*\)$/\1/p' "$tmp/W0.out")
if [ -z "$peak_mb" ] || [ "$peak_mb" -lt 16 ]; then
  bad "7. no remembered peak for the host run: $(cat "$tmp/W0.out")"
else
  budget=$((peak_mb * 3 / 2))
  echo "7. remembered peak $peak_mb MB; cluster_host_memory = $budget MB"
  q -c "ALTER SYSTEM SET gpudl.cluster_host_memory = $budget" -c "SELECT pg_reload_conf()" >/dev/null
  wait_for "(SELECT host_budget_bytes FROM gpudl_service_status()) = $budget::bigint * 1024 * 1024" 5 \
    || bad "7. the host budget did not change"
  session W "SELECT watch_jobs('hx', 3, 60)"
  wait_for "EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'svc_W' AND state = 'active')" 5
  for i in 1 2 3; do session H$i "SET gpudl.device = cpu" "SELECT gpudl_count('hx', 'p(X, Y)')"; done
  finish H1; finish H2; finish H3; finish W
  for i in 1 2 3; do check "7. run $i's answer" "$(tail -1 "$tmp/H$i.out")" "$bigwant"; done
  w=$(cat "$tmp/W.out")
  check "7. three sessions, one running at a time" "$(echo "$w" | sed 's/ waiting [0-9]*//; s/ need.*//')" "sessions 3 running 1"
  [[ "$w" =~ waiting\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] \
    && ok "7. seen waiting for host memory: ${BASH_REMATCH[1]} at once" || bad "7. none seen waiting: $w"
  q -c "ALTER SYSTEM RESET gpudl.cluster_host_memory" -c "SELECT pg_reload_conf()" >/dev/null
fi
check "7. nothing left" "$(q -c "SELECT running, waiting, host_committed_bytes FROM gpudl_service_status()")" "0|0|0"
# a run larger than the whole budget: 53200 saying so, not a wait
q -c "ALTER SYSTEM SET gpudl.cluster_host_memory = 1" -c "SELECT pg_reload_conf()" >/dev/null
wait_for "(SELECT host_budget_bytes FROM gpudl_service_status()) = 1024 * 1024" 5
psql -X -At -v VERBOSITY=verbose -d $db -c "SET gpudl.device = cpu" -c "SELECT gpudl_count('hx', 'p(X, Y)')" >"$tmp/budget.out" 2>&1
check_grep "7. larger than the host budget: 53200" "$tmp/budget.out" \
  "ERROR:  53200: gpudl: the evaluation needs more than the cluster's host memory budget \(1 MB\)"
q -c "ALTER SYSTEM RESET gpudl.cluster_host_memory" -c "SELECT pg_reload_conf()" >/dev/null
check "7. nothing left after the refusal" "$(q -c "SELECT running, waiting, host_committed_bytes FROM gpudl_service_status()")" "0|0|0"

# ----- 8. the service dies while it runs a session's work
# F counts without bound; G (auto) counts to N, N calibrated for about 3 s here
q -c "SELECT gpudl_create_program('f8', 'n(0). n(Y) :- n(X), Y = X + 1.')" >/dev/null
counter cal 300
cal=100
for _ in 1 2; do   # the faster of two: other work on the machine only slows it
  s=$(now); q -c "SET gpudl.device = gpu" -c "SELECT gpudl_count('cal', 'n(X)')" >/dev/null
  cal=$(awk -v a="$cal" -v b="$(elapsed "$s")" 'BEGIN { print (b < a ? b : a) }')
done
long=$(awk -v t="$cal" 'BEGIN { n = int(300 * 4 / (t > 0.001 ? t : 0.001)); if (n < 1500) n = 1500; if (n > 5000000) n = 5000000; print n }')
echo "8. calibration: 300 rounds through the service in ${cal}s; G counts to $long"
counter g8 "$long"
fifo="$tmp/fifo"; mkfifo "$fifo"
PGAPPNAME=svc_idle psql -X -At -d $db <"$fifo" >"$tmp/idle.out" 2>&1 &
exec 3>"$fifo"
echo "SELECT 'before ' || pg_backend_pid();" >&3
session F "SET gpudl.device = gpu" "SELECT gpudl_count('f8', 'n(X)')"
session G "SET gpudl.device = auto" "SELECT 'count ' || gpudl_count('g8', 'n(X)')" \
  "SELECT name || ' ' || value FROM gpudl_stats() WHERE name IN ('cpu_fallbacks', 'gpu_runs') ORDER BY name"
wait_for "(SELECT count(*) FROM gpudl_gpu_jobs j JOIN pg_stat_activity a USING (pid) WHERE a.application_name IN ('svc_F', 'svc_G') AND j.state = 'running' AND j.resource = 'device') = 2" 10 \
  || bad "8. F and G are not both running on the device"
sleep 0.3
gen0=$(q -c "SELECT generation FROM gpudl_service_status()")
svcpid=$(q -c "SELECT pid FROM gpudl_service_status()")
s=$(now)
check "8. pg_terminate_backend(service)" "$(q -c "SELECT pg_terminate_backend($svcpid)")" t
finish F
echo "8. the gpu run: $(grep -E '^(ERROR|DETAIL)' "$tmp/F.out" | tr '\n' ' ')"
check_grep "8. the gpu run fails" "$tmp/F.out" "^ERROR:  [0-9A-Z]{5}: "
check_grep "8. ... naming the GPU service" "$tmp/F.out" "the GPU service (ended|is not running)"
if wait_for "(SELECT state = 'ready' AND generation > $gen0 AND pid <> $svcpid FROM gpudl_service_status())" 5; then
  ok "8. the service is back after $(elapsed "$s")s (generation $(q -c "SELECT generation FROM gpudl_service_status()"))"
else
  bad "8. the service is not back: $(q -c "SELECT * FROM gpudl_service_status()")"
fi
finish G
check "8. auto: the right answer (on the CPU)" "$(tr '\n' ' ' <"$tmp/G.out")" "SET count $long cpu_fallbacks 1 gpu_runs 0 "
check "8. the next query through the service" \
  "$(q -c "SET gpudl.device = gpu" -c "SELECT gpudl_count('tc', 'p(X, Y)')" | tail -1)" "$want"
echo "SELECT 'after ' || pg_backend_pid();" >&3
exec 3>&-
wait "$(jobs -p | tail -1)" 2>/dev/null; sleep 0.2
b1=$(sed -n 's/^before //p' "$tmp/idle.out"); b2=$(sed -n 's/^after //p' "$tmp/idle.out")
[ -n "$b1" ] && [ "$b1" = "$b2" ] && ok "8. an idle session kept its connection" || bad "8. idle session: $(tr '\n' ' ' <"$tmp/idle.out")"
check "8. nothing left" "$(q -c "SELECT running, waiting, device_committed_bytes FROM gpudl_service_status()")" "0|0|0"

# ----- 9. SIGKILL of a backend during a GPU run: crash recovery
q -c "SELECT gpudl_create_program('k9', 'n(0). n(Y) :- n(X), Y = X + 1.')" >/dev/null
session K "SET gpudl.device = gpu" "SELECT gpudl_count('k9', 'n(X)')"
wait_for "EXISTS (SELECT FROM gpudl_gpu_jobs j JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'svc_K' AND j.state = 'running')" 10 \
  || bad "9. K is not running"
kpid=$(pid_of K)
logsize=$(stat -c %s "$PGDATA/server.log")
sleep 0.3
s=$(now)
kill -9 "$kpid"
finish K
for _ in $(seq 1 300); do
  tail -c +"$logsize" "$PGDATA/server.log" | grep -q "all server processes terminated; reinitializing" && break
  sleep 0.1
done
tail -c +"$logsize" "$PGDATA/server.log" | grep -q "all server processes terminated; reinitializing" \
  && ok "9. the postmaster reinitialised" || bad "9. no crash recovery in the log"
if wait_for "(SELECT state = 'ready' FROM gpudl_service_status())" 30; then
  ok "9. accepting connections, service ready after $(elapsed "$s")s"
else
  bad "9. not back: $(q -c "SELECT * FROM gpudl_service_status()")"
fi
check "9. nothing committed, nothing running or waiting" \
  "$(q -c "SELECT device_committed_bytes, host_committed_bytes, running, waiting FROM gpudl_service_status()")" "0|0|0|0"
check "9. a query through the service" \
  "$(q -c "SET gpudl.device = gpu" -c "SELECT gpudl_count('tc', 'p(X, Y)')" | tail -1)" "$want"

# ----- 10. privileges: the service reads nothing the caller may not read,
# also while the owner holds the table loaded (on CUDA: the cluster's one
# device copy)
q -q -c "CREATE ROLE $role LOGIN" -c "SELECT gpudl_grant('tc', '$role', 'use')" >/dev/null
# (the holder sleeps until step 10 is over: cancelled below)
PGAPPNAME=gpudl_holder psql -X -At -d $db -c "SET gpudl.device = gpu" -c "SELECT gpudl_load('edge')" \
  -c "SELECT gpudl_count('tc', 'p(X, Y)')" -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
holder=$!
sleep 1.5
out=$(PGUSER=$role psql -X -At -v VERBOSITY=verbose -d $db -c "SET gpudl.device = gpu" \
      -c "SELECT gpudl_count('tc', 'p(X, Y)')" -c "SELECT count(*) FROM gpudl_query('tc', 'p(X, Y)') AS t(a int, b int)" 2>&1)
check "10. no SELECT on the table: 42501, twice, no rows" \
  "$(echo "$out" | grep -c "ERROR:  42501: permission denied for table edge")|$(echo "$out" | grep -Ec '^[0-9]+$')" "2|0"
q -q -c "GRANT SELECT ON edge TO $role" >/dev/null
check "10. with SELECT: the answer" \
  "$(PGUSER=$role psql -X -At -d $db -c "SET gpudl.device = gpu" -c "SELECT gpudl_count('tc', 'p(X, Y)')" 2>&1 | tail -1)" "$want"
# the role loads it too (sharing the owner's device copy on CUDA), then loses
# SELECT: its next query is refused although its cache entry exists
out=$(PGUSER=$role psql -X -At -v VERBOSITY=verbose -d $db -c "SET gpudl.device = gpu" -c "SELECT gpudl_load('edge')" \
      -c "SELECT 'n ' || gpudl_count('tc', 'p(X, Y)')" \
      -c "SELECT 'where ' || device FROM gpudl_cache_status() WHERE relation = 'edge'::regclass" \
      -c "SELECT pg_sleep(1.5)" -c "SELECT 'after ' || gpudl_count('tc', 'p(X, Y)')" 2>&1 &
      sleep 0.8; q -q -c "REVOKE SELECT ON edge FROM $role" >/dev/null; wait $!)
check "10. loaded by the role too: the answer" "$(echo "$out" | grep '^n ' | cut -d' ' -f2)" "$want"
if [ "$backend" = cuda ]; then
  check "10. one device copy for both sessions" \
    "$(echo "$out" | grep '^where ' | tr '\n' ';')" "where gpu (one copy, shared by 2 sessions);"
  grep -q <<<"$out" '^where gpu (one copy' || echo "the role's session said: $(echo "$out" | tr '\n' '|')"
fi
check "10. SELECT revoked: 42501 from its loaded copy, no rows" \
  "$(echo "$out" | grep -c "ERROR:  42501: permission denied for table edge")|$(echo "$out" | grep -c '^after ')" "1|0"
q -q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'gpudl_holder'" >/dev/null
wait $holder

echo "service tests took $(elapsed "$t0")s"
if [ "$fails" -gt 0 ]; then echo "service: $fails FAILED"; exit 1; fi
echo "service: ok"

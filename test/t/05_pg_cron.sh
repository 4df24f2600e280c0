#!/usr/bin/env bash
# 05_pg_cron: gpudl jobs run from pg_cron — a scheduled gpudl_materialize
# refreshes a table of derived facts, and a scheduled gpudl_learn records its
# run, both in pg_cron's own sessions.  Skipped where pg_cron is not preloaded.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db="$PGDATABASE"   # cron.database_name of the private cluster
if ! psql -X -At -d "$db" -c "SHOW shared_preload_libraries" | grep -q pg_cron; then
  echo "pg_cron is not preloaded: skipped"; exit 0
fi
q() { psql -X -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }
q -q <<'SQL'
CREATE EXTENSION IF NOT EXISTS pg_cron;
CREATE EXTENSION IF NOT EXISTS gpudl;
DROP SCHEMA IF EXISTS cron_test CASCADE;
CREATE SCHEMA cron_test;
CREATE TABLE cron_test.parent(p text, c text);
INSERT INTO cron_test.parent VALUES ('a', 'b'), ('b', 'c'), ('c', 'd');
CREATE TABLE cron_test.gp(a text, b text);
INSERT INTO cron_test.gp VALUES ('a', 'c'), ('b', 'd');
SELECT gpudl_drop_program(name) FROM gpudl.programs WHERE name = 'cron_family';
SELECT gpudl_create_program('cron_family');
SELECT gpudl_bind('cron_family', 'parent', 'cron_test.parent');
SELECT gpudl_add_rules('cron_family', 'anc(X, Y) :- parent(X, Y). anc(X, Z) :- anc(X, Y), parent(Y, Z).');
SELECT cron.unschedule(jobid) FROM cron.job WHERE jobname LIKE 'gpudl-test-%';
SELECT cron.schedule('gpudl-test-refresh', '* * * * *',
  $$SELECT gpudl_materialize('cron_family', 'anc', 'cron_test.anc_snapshot')$$);
SELECT cron.schedule('gpudl-test-learn', '* * * * *',
  $$SELECT count(*) FROM gpudl_learn('cron_family', 'grandparent', 'cron_test.gp')$$);
SQL
ok=""
for i in $(seq 1 150); do   # pg_cron 1.4 runs jobs on minute boundaries
  sleep 0.5
  n=$(q -c "SELECT count(*) FROM cron_test.anc_snapshot" 2>/dev/null || true)
  r=$(q -c "SELECT count(*) FROM gpudl.learn_runs WHERE program = 'cron_family' AND status = 'succeeded'")
  if [ "$n" = 6 ] && [ "$r" -ge 1 ]; then ok=1; break; fi
done
q -c "SELECT cron.unschedule(jobid) FROM cron.job WHERE jobname LIKE 'gpudl-test-%'" >/dev/null
q -c "SELECT jobname, status, return_message FROM cron.job_run_details d JOIN cron.job j USING (jobid)
      WHERE jobname LIKE 'gpudl-test-%' ORDER BY runid DESC LIMIT 4" 2>/dev/null || true
[ -n "$ok" ] || { echo "pg_cron jobs did not produce the snapshot and the learn run"; exit 1; }
echo "pg_cron: snapshot of $n derived facts and $r recorded learn runs"
q -q -c "DROP SCHEMA cron_test CASCADE" -c "SELECT gpudl_drop_program('cron_family')" >/dev/null

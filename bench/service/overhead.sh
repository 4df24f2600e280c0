#!/usr/bin/env bash
# bench/service/overhead.sh — what the GPU service adds to a small query
# (issue 23: "a small query costs no more than in-process plus 2 ms").
#
# In one warm session, gpudl_count of a program is run REPS times; each
# call is timed on the server (clock_timestamp around the call, so neither
# psql nor the connection counts) and the median is reported.  Workloads:
# TC of ego-Facebook (the issue's case), TC of a 160-edge chain (160
# rounds of tiny operations: the per-operation cost), TC of a 5-edge chain
# (the per-run cost).  The same session is timed in two ways of running the
# same device work, side by side in one run:
#
#   MODE=device (the GPU machine): gpudl.service = on, then the cluster is
#     restarted with gpudl.service = off (each session opens its own CUDA
#     context: "in-process").  Needs RESTART, a command that restarts the
#     cluster after a line was added to CONF (the postgresql.conf).
#   MODE=cpu (any machine; the service serves the CPU backend:
#     gpudl.service_backend = cpu): gpudl.device = cpu runs the CPU backend
#     in the session, gpudl.device = gpu sends the same operations to the
#     service, so the difference is the service's hops alone.
#
#   GPU machine:  bash .device/run.sh 'MODE=device bash bench/service/overhead.sh'
#   here:         MODE=cpu bash bench/service/overhead.sh   (cluster of tools/pgenv.sh
#                 with gpudl.service_backend = cpu)
# Writes $OUT/overhead.md.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
MODE="${MODE:-device}"
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
REPS="${REPS:-41}"
md="$OUT/overhead.md"
CONF="${CONF:-/tmp/pgdata/postgresql.conf}"
RESTART="${RESTART:-runuser -u pg -- env LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} pg_ctl -D /tmp/pgdata -l /tmp/pg.log restart -w -m fast}"

q -c "CREATE EXTENSION IF NOT EXISTS gpudl"
load_graph ego-Facebook ovh_fb ovh_tc_fb
for n in 5 160; do
  q -c "DROP TABLE IF EXISTS ovh_chain$n" -c "CREATE TABLE ovh_chain$n(a int, b int)" \
    -c "INSERT INTO ovh_chain$n SELECT i, i + 1 FROM generate_series(1, $n) i"
  q -c "SELECT gpudl_drop_program('ovh_tc_chain$n') FROM gpudl.programs WHERE name = 'ovh_tc_chain$n'" >/dev/null
  q -c "SELECT gpudl_create_program('ovh_tc_chain$n', 'tc(X,Y) :- ovh_chain$n(X,Y). tc(X,Z) :- tc(X,Y), ovh_chain$n(Y,Z).')" >/dev/null
done
# the median of REPS timed calls after one untimed call, in milliseconds
q <<'SQL'
CREATE OR REPLACE FUNCTION public.ovh_median_ms(prog text, device text, reps int)
RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; ms float8[] := '{}'; n bigint;
BEGIN
  PERFORM set_config('gpudl.device', device, true);
  n := gpudl_count(prog, 'tc(X,Y)');
  FOR i IN 1..reps LOOP
    t0 := clock_timestamp();
    n := gpudl_count(prog, 'tc(X,Y)');
    ms := ms || extract(epoch FROM clock_timestamp() - t0)::float8 * 1000;
  END LOOP;
  RETURN round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM unnest(ms) v)::numeric, 2);
END $$;
SQL

progs="ovh_tc_fb ovh_tc_chain160 ovh_tc_chain5"
declare -A A B
# measure LABEL DEVICE: fills the array named LABEL with each program's median
measure() {
  local -n into=$1
  local p
  for p in $progs; do into[$p]=$(q -c "SELECT ovh_median_ms('$p', '$2', $REPS)"); done
}
if [ "$MODE" = cpu ]; then
  measure A cpu; measure B gpu
  la="in the session (gpudl.device = cpu)"; lb="through the service (its CPU backend)"
else
  q -c "SHOW gpudl.service" | grep -q on || { echo "overhead.sh: MODE=device needs gpudl.service = on at the start"; exit 1; }
  measure B gpu
  echo "gpudl.service = off" >> "$CONF"
  eval "$RESTART" >/dev/null || { echo "overhead.sh: restart failed"; exit 1; }
  measure A gpu
  sed -i '$ d' "$CONF"
  eval "$RESTART" >/dev/null
  la="in-process (gpudl.service = off)"; lb="through the service"
fi

{
  echo "## Service overhead, $(date -u '+%F %H:%M') UTC, $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no GPU'), $(nproc) cores, MODE=$MODE"
  echo
  echo "Median of $REPS calls of gpudl_count in one warm session (server-side clock)."
  echo
  echo "| program | tuples | $la | $lb | difference |"
  echo "| --- | ---: | ---: | ---: | ---: |"
  for p in $progs; do
    t=$(q -c "SELECT gpudl_count('$p', 'tc(X,Y)')")
    echo "| $p | $t | ${A[$p]} ms | ${B[$p]} ms | $(awk -v a="${A[$p]}" -v b="${B[$p]}" 'BEGIN {printf "%+.2f ms", b - a}') |"
  done
} | tee -a "$md"

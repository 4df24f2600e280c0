#!/usr/bin/env bash
# bench/kg/predict_stop_probe.sh — where a long gpudl_predict spends its time
# and how late it stops in each phase: the prediction input of
# test/t/17_long_cancel.sh (40 dense relations over 30 entities, rules mined
# with max_body 2 and committed, 12,000 queries), then (1) the phases seen
# in gpudl_progress every 50 ms of one uncancelled call, (2) the time from
# statement_timeout to the call's end for timeouts from 200 ms to 3 s.
# Runs against the cluster tools/pgenv.sh names; PROBE_DB (default
# gpudl_probe) is made and dropped.
source "$(dirname "$0")/../../tools/pgenv.sh"
set +e
db="${PROBE_DB:-gpudl_probe}"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" || exit 1
awk '/^CREATE EXTENSION gpudl;/{p=1} p{print} /^CREATE TABLE pq/{exit}' "$(dirname "$0")/../../test/t/17_long_cancel.sh" \
  | psql -X -q -v ON_ERROR_STOP=1 -d $db >/dev/null || { echo "setup failed"; exit 1; }
sql="SELECT count(*) FROM gpudl_predict('kgp', 'r0', 'SELECT s, o FROM pq', \"limit\" => 0)"
psql -X -At -d $db -c "SELECT count(*) FROM gpudl.mined_rules" 2>/dev/null | sed 's/^/stored rules: /'
s=$(date +%s%N)
PGAPPNAME=probe psql -X -At -d $db -c "$sql" >/tmp/probe_out 2>&1 &
bg=$!
prev=""
while kill -0 $bg 2>/dev/null; do
  ph=$(psql -X -At -d $db -c "SELECT phase FROM gpudl_progress WHERE kind = 'predict'" 2>/dev/null)
  if [ "$ph" != "$prev" ]; then echo "phase at $(( ($(date +%s%N) - s) / 1000000 )) ms: $ph"; prev=$ph; fi
  sleep 0.05
done
echo "uncancelled: $(( ($(date +%s%N) - s) / 1000000 )) ms, $(cat /tmp/probe_out) answers"
for t in ${PROBE_TIMEOUTS:-200 400 600 800 900 1000 1100 1200 1300 1500 2000 3000}; do
  s=$(date +%s%N)
  psql -X -d $db -c "SET statement_timeout = $t" -c "$sql" >/dev/null 2>&1
  echo "timeout $t ms: stopped $(( ($(date +%s%N) - s) / 1000000 - t )) ms later"
done
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db"

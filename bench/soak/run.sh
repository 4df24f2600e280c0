#!/usr/bin/env bash
# bench/soak/run.sh — soak test on the CPU: pgbench clients mixing
# gpudl_query, gpudl_count, gpudl_materialize (per-client tables), rule
# edits by the program's owner, gpudl_learn, gpudl_mine committing rules
# while others gpudl_predict with them, and edits by a role that does not
# own the program, for a while; then checks: no client aborted, no
# ERROR, deadlock or crash in the server log, the postmaster never restarted,
# the stored mined rules are one commit's, and the backends' memory (RSS)
# at the end within 10% of minute 1.
#
#   bash bench/soak/run.sh                 # 16 clients, 600 s
#   CLIENTS=4 SECONDS_=60 bash bench/soak/run.sh
#
# Results go to bench/out/soak/ (pgbench logs, RSS samples, summary.txt).
source "$(dirname "$0")/../../tools/pgenv.sh"
set +e
cd "$GPUDL_ROOT/bench/soak"
clients=${CLIENTS:-16}
secs=${SECONDS_:-600}
other=$(( clients / 4 )); [ "$other" -ge 1 ] || other=1
owner=$(( clients - other ))
out="$GPUDL_ROOT/bench/out/soak"; rm -rf "$out"; mkdir -p "$out"
db=gpudl_soak
export PGOPTIONS="-c gpudl.device=cpu -c client_min_messages=warning"

pg_start || exit 1
dropdb --if-exists $db; createdb $db
psql -X -q -v ON_ERROR_STOP=1 -d $db -f setup.sql >"$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
log_start=$(as_server_user wc -c <"$PGDATA/server.log")
pm_start=$(psql -X -At -d $db -c "SELECT pg_postmaster_start_time()")

# memory (kB) of every pgbench client's backend: pid, RSS (ps), RssAnon (its
# private memory: RSS also counts the shared buffers a backend has touched).
# Five samples a second apart, each backend's smallest: the memory it keeps
# between statements, not a transaction caught half-way (a learn or a
# materialize holds tens of MB while it runs and gives them back).
rss_sample() {
  local pids i
  pids=$(psql -X -At -d $db -c "SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE application_name = 'pgbench'")
  for i in 1 2 3 4 5; do
    for p in ${pids//,/ }; do
      echo "$p $(awk '/^VmRSS/ {r = $2} /^RssAnon/ {a = $2} END {print r, a}' /proc/$p/status 2>/dev/null)"
    done
    sleep 1
  done | awk 'NF == 3 { if (!($1 in r) || $2 < r[$1]) r[$1] = $2; if (!($1 in a) || $3 < a[$1]) a[$1] = $3 }
              END { for (p in r) print p, r[p], a[p] }' | sort -n
}

echo "soak: $owner owner clients + $other non-owner clients for ${secs}s on the CPU"
pgbench -n -c $owner -j 2 -T $secs -P 60 -U soak_owner \
  -f query.sql@6 -f count.sql@6 -f materialize.sql@2 -f owner_edit.sql@1 -f learn.sql@1 \
  -f mine.sql@1 -f predict.sql@2 $db \
  >"$out/pgbench_owner.log" 2>&1 &
pa=$!
pgbench -n -c $other -j 1 -T $secs -P 60 -U soak_other \
  -f other_edit.sql@1 -f query.sql@3 -f predict.sql@2 $db \
  >"$out/pgbench_other.log" 2>&1 &
pb=$!
first=60; [ "$secs" -ge 120 ] || first=$(( secs / 4 ))
sleep $first; rss_sample >"$out/rss_first.txt"
sleep $(( secs - first - 45 )); rss_sample >"$out/rss_last.txt"   # well before the clients end
wait $pa; ra=$?
wait $pb; rb=$?

pm_end=$(psql -X -At -d $db -c "SELECT pg_postmaster_start_time()")
as_server_user tail -c +$((log_start + 1)) "$PGDATA/server.log" >"$out/server.log"
{
  echo "clients: $owner as soak_owner, $other as soak_other; ${secs}s; gpudl.device = cpu"
  echo "pgbench exit: owner $ra, other $rb"
  for f in owner other; do
    echo "[$f] $(grep -E '^number of transactions actually processed' "$out/pgbench_$f.log")"
    echo "[$f] $(grep -E '^number of failed transactions' "$out/pgbench_$f.log")"
    echo "[$f] $(grep -E '^tps' "$out/pgbench_$f.log")"
    grep -E 'aborted|error' "$out/pgbench_$f.log" | head -5 | sed "s/^/[$f] /"
  done
  echo "server log: $(grep -c 'ERROR' "$out/server.log") ERROR, $(grep -c 'deadlock' "$out/server.log") deadlock," \
       "$(grep -cE 'terminated by signal|server process .* was terminated|PANIC' "$out/server.log") crash lines"
  echo "postmaster start: $pm_start -> $pm_end"
  echo "non-owner edits: $(psql -X -At -d $db -c "SELECT soak_other_edit(999)") (one more, by a superuser: allowed)"
  echo "mined rules of child: $(psql -X -At -d $db -c "SELECT count(*) || ' rows, ' || count(DISTINCT rule) || ' distinct, from ' || count(DISTINCT mined_at) || ' commit(s)' FROM gpudl.mined_rules WHERE program = 'soakfam' AND target = 'child'")"
  echo "learn runs: $(psql -X -At -d $db -c "SELECT string_agg(status || ' ' || n, ', ') FROM (SELECT status, count(*) n FROM gpudl.learn_runs GROUP BY 1 ORDER BY 1) s")"
  join "$out/rss_first.txt" "$out/rss_last.txt" | awk '
    { n++; r1 += $2; a1 += $3; r2 += $4; a2 += $5; d = ($5 - $3) / $3 * 100; if (d > max) max = d }
    END { if (n == 0) { print "backend memory: no sample (no client backends seen)"; print "anon_growth_pct 999"; exit }
          printf "backend RSS (ps): %d backends, mean %.1f MB at minute 1, %.1f MB at the end (%+.1f%%)\n",
                 n, r1 / n / 1024, r2 / n / 1024, (r2 - r1) / r1 * 100;
          printf "backend private memory (RssAnon): mean %.1f MB at minute 1, %.1f MB at the end (%+.1f%%), largest growth of one backend %+.1f%%\n",
                 a1 / n / 1024, a2 / n / 1024, (a2 - a1) / a1 * 100, max;
          printf "anon_growth_pct %.1f\n", (a2 - a1) / a1 * 100 }'
} | tee "$out/summary.txt"
ok=1
[ $ra = 0 ] && [ $rb = 0 ] || ok=0
grep -q ERROR "$out/server.log" && ok=0
grep -q deadlock "$out/server.log" && ok=0
[ "$pm_start" = "$pm_end" ] || ok=0
# the stored rules are one commit's, never a mix of two
psql -X -At -d $db -c "SELECT count(DISTINCT mined_at) <= 1 AND count(*) = count(DISTINCT rule) FROM gpudl.mined_rules WHERE program = 'soakfam' AND target = 'child'" | grep -qx t || ok=0
awk '/^anon_growth_pct/ { exit !($2 <= 10) }' "$out/summary.txt" || ok=0
[ $ok = 1 ] && echo "soak: PASS" || { echo "soak: FAIL"; exit 1; }

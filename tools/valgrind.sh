#!/usr/bin/env bash
# tools/valgrind.sh — run the pg_regress suites once against a server under
# Valgrind memcheck and report the errors in gpudl's code.  Slow (a backend
# under memcheck runs some 20-50x slower): not part of CI or tools/test.sh.
#
#   bash tools/valgrind.sh                       # every suite (make installcheck)
#   bash tools/valgrind.sh 10_eval 30_learn      # some suites
#
# It builds and installs gpudl like tools/test.sh, makes a second private
# cluster (data directory: this checkout's cluster's, with "-valgrind"
# appended; port $GPUDL_VG_PORT, default 54339) preloading gpudl, and starts
# postgres as
#     valgrind --tool=memcheck --trace-children=yes --track-origins=yes
#              --suppressions=tools/valgrind.supp --log-file=<dir>/vg.%p.log
# so the postmaster and every backend and worker it forks write a log of
# their own.  Afterwards it counts the errors of all processes and prints
# every error with a frame in gpudl (its sources, gpudl.so, gpudl_cuda.so);
# they are kept in test/out-valgrind/gpudl-errors.txt, all logs in
# test/out-valgrind/.  Exit status 1 when gpudl has errors.
#
# The server is a stock build (no USE_VALGRIND), so memory inside palloc'd
# blocks is not tracked chunk by chunk: memcheck sees reads of uninitialised
# values and invalid accesses to malloc'ed memory (gpudl's worker threads
# and backends), not overruns inside a memory context's block.
export GPUDL_PGPORT="${GPUDL_VG_PORT:-54339}"
source "$(dirname "$0")/pgenv.sh"
set +e
cd "$GPUDL_ROOT"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 1; }
export PGDATA="${PGDATA}-valgrind"
out="$GPUDL_ROOT/test/out-valgrind"
suites=("$@")

gpudl_build_install || exit 1
as_server_user pg_ctl -D "$PGDATA" -w stop >/dev/null 2>&1
if [ ! -f "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA"; [ "$(id -u)" = 0 ] && chown postgres "$PGDATA"; chmod 700 "$PGDATA"
  as_server_user initdb -D "$PGDATA" -A trust -U postgres >/dev/null || exit 1
  cat >>"$PGDATA/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$PGHOST'
port = $PGPORT
max_connections = 20
shared_preload_libraries = 'gpudl'
max_worker_processes = 8
autovacuum = off
CONF
fi
logs="$PGDATA/valgrind"
as_server_user rm -rf "$logs"; as_server_user mkdir -p "$logs"
cp tools/valgrind.supp /tmp/gpudl-valgrind.supp; chmod a+r /tmp/gpudl-valgrind.supp
echo "starting postgres under valgrind (port $PGPORT, data $PGDATA)"
as_server_user valgrind --tool=memcheck --trace-children=yes --track-origins=yes \
  --error-limit=no --num-callers=40 --read-var-info=no --leak-check=no \
  --fullpath-after= --suppressions=/tmp/gpudl-valgrind.supp \
  --log-file="$logs/vg.%p.log" \
  "$PGBIN/postgres" -D "$PGDATA" >"$GPUDL_ROOT/.valgrind-server.log" 2>&1 &
for i in $(seq 1 300); do
  pg_isready -q && break
  sleep 1
done
pg_isready -q || { echo "the server did not start"; tail -20 "$GPUDL_ROOT/.valgrind-server.log"; exit 1; }
psql -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'gpudl'" | grep -q 1 || createdb gpudl

start=$(date +%s)
rm -rf test/out; mkdir -p test/out; [ "$(id -u)" = 0 ] && chmod -R a+rwX test/out
if [ ${#suites[@]} -gt 0 ]; then
  make -s installcheck REGRESS="${suites[*]}"
else
  make -s installcheck
fi
regress_rc=$?
secs=$(( $(date +%s) - start ))
as_server_user pg_ctl -D "$PGDATA" -m fast -w -t 600 stop >/dev/null

rm -rf "$out"; mkdir -p "$out"
cp "$logs"/vg.*.log "$out"/ 2>/dev/null
cp test/out/regression.diffs "$out"/ 2>/dev/null
# an error block: from a "==PID== <message>" line to the next "==PID== " blank
awk -v root="$GPUDL_ROOT/src/" '
  /^==[0-9]+== [A-Z]/ && !/^==[0-9]+== (Memcheck|Copyright|Using|Command|Parent|HEAP|LEAK|ERROR SUMMARY|For |Use --|All heap|in use|total heap|Rerun|Warning|Thread|  )/ {
    inb = 1; blk = $0 "\n"; next }
  inb && /^==[0-9]+== *$/ { inb = 0; total++
    if (index(blk, root) || index(blk, "gpudl.so") || index(blk, "gpudl_cuda.so")) { ours++; print blk > "'"$out"'/gpudl-errors.txt" }
    next }
  inb { blk = blk $0 "\n" }
  END { printf "%d error reports in all processes, %d with a gpudl frame\n", total, ours > "/dev/stderr" }
' "$out"/vg.*.log 2>"$out/summary.txt"
nproc_logs=$(ls "$out"/vg.*.log 2>/dev/null | wc -l)
{
  echo "suites: ${suites[*]:-all (make installcheck)}; pg_regress exit $regress_rc; ${secs}s under valgrind; $nproc_logs processes"
  cat "$out/summary.txt"
} | tee "$out/summary.txt.new"; mv "$out/summary.txt.new" "$out/summary.txt"
if [ -s "$out/gpudl-errors.txt" ]; then
  echo "----- errors with a gpudl frame (test/out-valgrind/gpudl-errors.txt)"
  cat "$out/gpudl-errors.txt"
  exit 1
fi
exit $regress_rc

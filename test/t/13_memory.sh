#!/usr/bin/env bash
# 13_memory: slicing instead of failing.  TC of CA-HepTh on the CPU, first
# without a limit (its peak host memory from gpudl_stats), then with
# gpudl.host_memory_limit at half that peak: the same count, in join slices
# (last_batches), under the limit.  Then a limit that slicing cannot meet
# (smaller than the closure itself) fails with 53200, its message and hint.
# With GPUDL_TEST_GPU=1 (the GPU machine) the same on the GPU with
# gpudl.device_memory_limit at half the unlimited run's device peak (the
# hash set of `full` alone takes about a third of it: see docs/DESIGN.md).
# The graph: shared/data/graphs beside the checkout, GPUDL_GRAPH_DIR, or the
# copy in test/data (CA-HepTh, from the same source).
source "$(dirname "$0")/../../tools/pgenv.sh"
set +e
export PGOPTIONS="-c client_min_messages=warning"
graphs="${GPUDL_GRAPH_DIR:-$GPUDL_ROOT/../shared/data/graphs}"
# a checkout without shared/ beside it (a CI clone) uses the copy in test/data
[ -f "$graphs/CA-HepTh.txt" ] || graphs="$GPUDL_ROOT/test/data"
file="$graphs/CA-HepTh.txt"
if [ ! -r "$file" ]; then echo "13_memory: skipped (no $file)"; exit 0; fi
db=gpudl_memory
fails=0
ok()  { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', expected '$3'"; fi; }
q() { psql -X -At -v ON_ERROR_STOP=1 -d $db "$@" 2>&1; }
stat() { echo "SELECT value FROM gpudl_stats() WHERE name = '$1'"; }

dropdb --if-exists $db >/dev/null 2>&1; createdb $db || exit 1
q -q -c "CREATE EXTENSION gpudl" -c "CREATE TABLE edge(a int, b int)" \
  -c "\\copy edge FROM '$file'" \
  -c "SELECT gpudl_create_program('tc', 'tc(X, Y) :- edge(X, Y). tc(X, Z) :- tc(X, Y), edge(Y, Z).')" >/dev/null

# run DEVICE SETTINGS: count, peak host bytes, peak device bytes, slices
run() {
  q -c "SET gpudl.device = $1" -c "SET gpudl.max_iterations = 1000" ${2:+-c "$2"} \
    -c "SELECT gpudl_count('tc', 'tc(X, Y)')" -c "$(stat last_peak_host_bytes)" \
    -c "$(stat last_peak_device_bytes)" -c "$(stat last_batches)" | grep -v '^SET$' | tr '\n' ' '
}

read -r n0 host0 dev0 b0 <<<"$(run cpu)"
echo "cpu, no limit: $n0 tuples, peak host $host0 bytes, $b0 slices"
[ "${n0:-0}" -gt 0 ] 2>/dev/null && ok "unlimited count" || bad "unlimited run: $n0 $host0"
limit=$(( host0 / 2 / 1048576 ))
read -r n1 host1 dev1 b1 <<<"$(run cpu "SET gpudl.host_memory_limit = $limit")"
echo "cpu, gpudl.host_memory_limit = $limit MB: $n1 tuples, peak host $host1 bytes, $b1 slices"
check "count at half the peak" "$n1" "$n0"
[ "${b1:-0}" -gt "${b0:-0}" ] 2>/dev/null && ok "ran in more slices ($b1 > $b0)" || bad "slices $b1, unlimited $b0"
[ "${host1:-0}" -gt 0 ] && [ "${host1:-0}" -le $(( limit * 1048576 )) ] 2>/dev/null \
  && ok "peak under the limit" || bad "peak $host1 over $limit MB"

# the closure alone (8 bytes a tuple) does not fit: slicing cannot help
out=$(psql -X -At -d $db -c "\\set VERBOSITY verbose" -c "SET gpudl.device = cpu" \
        -c "SET gpudl.host_memory_limit = $(( n0 * 8 / 1048576 / 3 + 1 ))" \
        -c "SELECT gpudl_count('tc', 'tc(X, Y)')" 2>&1)
grep -q <<<"$out" "53200" && ok "53200 past the limit" || bad "no 53200: $out"
grep -q <<<"$out" "needs more than .* MB of host memory" && ok "message" || bad "message: $out"
grep -q <<<"$out" "HINT:  Raise gpudl.host_memory_limit" && ok "hint" || bad "hint: $out"

if [ "${GPUDL_TEST_GPU:-0}" = 1 ]; then
  read -r g0 gh0 gdev0 gb0 <<<"$(run gpu)"
  echo "gpu, no limit: $g0 tuples, peak device $gdev0 bytes, $gb0 slices"
  check "gpu count" "$g0" "$n0"
  glimit=$(( gdev0 / 2 / 1048576 ))
  read -r g1 gh1 gdev1 gb1 <<<"$(run gpu "SET gpudl.device_memory_limit = $glimit")"
  echo "gpu, gpudl.device_memory_limit = $glimit MB: $g1 tuples, peak device $gdev1 bytes, $gb1 slices"
  check "gpu count at half the peak" "$g1" "$n0"
  [ "${gdev1:-0}" -le $(( glimit * 1048576 )) ] 2>/dev/null && ok "device peak under the limit" \
    || bad "device peak $gdev1 over $glimit MB"
fi

dropdb --if-exists $db >/dev/null 2>&1
if [ $fails -eq 0 ]; then echo "13_memory: PASS"; else echo "13_memory: FAIL ($fails)"; exit 1; fi

#!/usr/bin/env bash
# 04_gpu: on a machine with a working GPU (skipped elsewhere): results on the
# GPU equal the CPU's, an ERROR or a cancel in the middle of a GPU run leaks
# no device memory, and out of device memory under gpudl.device = auto
# falls back to the CPU.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
db=gpudl_gpu
dropdb --if-exists $db; createdb $db
psql -X -q -d $db -c "CREATE EXTENSION gpudl"
if ! psql -X -At -d $db -c "SELECT backend FROM gpudl_device_info()" | grep -qx cuda; then
  echo "no usable GPU ($(psql -X -At -d $db -c "SELECT device FROM gpudl_device_info() WHERE backend = 'none'"))"
  # without a GPU: 'gpu' is refused with a reason, 'auto' runs on the CPU
  psql -X -q -d $db -c "SELECT gpudl_create_program('one', 'p(1).')" >/dev/null
  err=$(psql -X -At -d $db -c "SET gpudl.device = gpu" -c "SELECT gpudl_count('one', 'p(X)')" 2>&1 || true)
  grep -q <<<"$err" 'gpudl.device is "gpu" but no GPU can be used' || { echo "expected a refusal, got: $err"; exit 1; }
  grep -q <<<"$err" "HINT:  Set gpudl.device to 'auto' or 'cpu'" || { echo "no hint: $err"; exit 1; }
  [ "$(psql -X -At -d $db -c "SET gpudl.device = auto" -c "SELECT gpudl_count('one', 'p(X)')" | tail -1)" = 1 ] \
    || { echo "auto did not run on the CPU"; exit 1; }
  echo "GPU tests skipped; the no-GPU behaviour is right"
  dropdb $db; exit 0
fi
q() { psql -X -At -v ON_ERROR_STOP=1 -d $db "$@"; }
q -c "SELECT * FROM gpudl_device_info()"
q -q <<'SQL'
CREATE TABLE edge AS SELECT (random() * 3000)::int AS a, (random() * 3000)::int AS b FROM generate_series(1, 9000);
SELECT gpudl_create_program('tc', 'p(X, Y) :- edge(X, Y). p(X, Z) :- p(X, Y), edge(Y, Z).');
SELECT gpudl_create_program('forever', 'n(0). n(Y) :- n(X), Y = X + 1.');
SQL
cpu=$(q -c "SET gpudl.device = cpu" -c "SELECT gpudl_count('tc', 'p(X, Y)')" | tail -1)
gpu=$(q -c "SET gpudl.device = gpu" -c "SELECT gpudl_count('tc', 'p(X, Y)')" | tail -1)
echo "tc: cpu $cpu, gpu $gpu"
[ "$cpu" = "$gpu" ] || { echo "GPU and CPU differ"; exit 1; }
same=$(q -c "SET gpudl.device = gpu" -c "CREATE TABLE g AS SELECT * FROM gpudl_query('tc', 'p(X, Y)') AS t(a int, b int)" \
         -c "SET gpudl.device = cpu" -c "CREATE TABLE c AS SELECT * FROM gpudl_query('tc', 'p(X, Y)') AS t(a int, b int)" \
         -c "SELECT (SELECT count(*) FROM (SELECT * FROM g EXCEPT SELECT * FROM c) x) + (SELECT count(*) FROM (SELECT * FROM c EXCEPT SELECT * FROM g) y)" | tail -1)
[ "$same" = 0 ] || { echo "GPU rows differ from CPU rows: $same"; exit 1; }
# in ONE session: device memory after a warm-up GPU run, then errors and a
# cancel in the middle of GPU runs, then device memory again
out=$(q -c "SET gpudl.device = gpu" -c "SELECT gpudl_count('tc', 'p(X, Y)')" \
  -c "SELECT 'free ' || memory_free FROM gpudl_device_info() WHERE backend = 'cuda'" \
  -c "SET gpudl.max_iterations = 300" \
  -c "DO \$\$ BEGIN FOR i IN 1..20 LOOP BEGIN PERFORM gpudl_count('forever', 'n(X)'); EXCEPTION WHEN program_limit_exceeded THEN NULL; END; END LOOP; END \$\$" \
  -c "SET statement_timeout = 300" -c "SET gpudl.max_iterations = 2000000000" \
  -c "DO \$\$ BEGIN BEGIN PERFORM gpudl_count('forever', 'n(X)'); EXCEPTION WHEN query_canceled THEN NULL; END; END \$\$" \
  -c "RESET statement_timeout" \
  -c "SELECT 'free ' || memory_free FROM gpudl_device_info() WHERE backend = 'cuda'")
free0=$(echo "$out" | grep '^free' | head -1 | awk '{print $2}')
free1=$(echo "$out" | grep '^free' | tail -1 | awk '{print $2}')
echo "device memory free in one session: before $free0, after 21 failed GPU runs $free1"
[ "$free0" = "$free1" ] || { echo "device memory leaked: $((free0 - free1)) bytes"; exit 1; }
# out of device memory: 'gpu' fails with 53200, 'auto' retries on the CPU
err=$(q -c "SET gpudl.device = gpu" -c "SET gpudl.device_memory_limit = 1" -c "SELECT gpudl_count('tc', 'p(X, Y)')" 2>&1 || true)
grep -q <<<"$err" "out of device memory" || { echo "expected out of device memory, got: $err"; exit 1; }
auto=$(q -c "SET gpudl.device = auto" -c "SET gpudl.device_memory_limit = 1" -c "SELECT gpudl_count('tc', 'p(X, Y)')" \
         -c "SELECT value FROM gpudl_stats() WHERE name = 'cpu_fallbacks'" | tail -2 | paste -sd' ')
echo "auto with 1 MB of device memory: $auto (count, cpu_fallbacks)"
[ "$auto" = "$cpu 1" ] || { echo "expected a CPU fallback"; exit 1; }
# tables pinned with gpudl_load live on the device: a query moves none of
# their rows (only the text-id map), gives the CPU's answer, sees changes,
# and unloading gives the device memory back
q -q <<'SQL'
CREATE TABLE kin AS SELECT 'p' || (random() * 2000)::int AS a, 'p' || (random() * 2000)::int AS b,
                          (random() * 5)::int AS w FROM generate_series(1, 200000);
SELECT gpudl_create_program('kin', 'r(X, Y) :- kin(X, Y, W), W > 1. r(X, Z) :- r(X, Y), kin(Y, Z, _).');
SQL
ref=$(q -c "SET gpudl.device = cpu" -c "SELECT gpudl_count('kin', 'r(X, Y)')" | tail -1)
out=$(q -c "SET gpudl.device = gpu" \
  -c "SELECT 'free0 ' || memory_free FROM gpudl_device_info() WHERE backend = 'cuda'" \
  -c "SELECT gpudl_count('kin', 'r(X, Y)')" \
  -c "SELECT 'cold ' || value FROM gpudl_stats() WHERE name = 'bytes_to_device'" \
  -c "SELECT 'rows ' || gpudl_load('kin')" \
  -c "SELECT 'where ' || device || ' ' || bytes FROM gpudl_cache_status()" \
  -c "SELECT 'free1 ' || memory_free FROM gpudl_device_info() WHERE backend = 'cuda'" \
  -c "SELECT 'warm ' || gpudl_count('kin', 'r(X, Y)')" \
  -c "SELECT 'moved ' || value FROM gpudl_stats() WHERE name = 'bytes_to_device'" \
  -c "SELECT 'dreads ' || value FROM gpudl_stats() WHERE name = 'device_cache_reads'" \
  -c "SELECT 'launches ' || value FROM gpudl_stats() WHERE name = 'last_launches'" \
  -c "UPDATE kin SET w = 0 WHERE a < 'p5'" \
  -c "SELECT 'changed ' || gpudl_count('kin', 'r(X, Y)')" \
  -c "SET gpudl.device = cpu" \
  -c "SELECT 'changed_cpu ' || gpudl_count('kin', 'r(X, Y)')" \
  -c "SELECT gpudl_unload('kin')" \
  -c "SELECT 'free2 ' || memory_free FROM gpudl_device_info() WHERE backend = 'cuda'")
echo "$out" | grep -v '^$'
v() { echo "$out" | grep "^$1 " | head -1 | cut -d' ' -f2-; }
[ "$(v warm)" = "$ref" ] || { echo "resident run differs from the CPU: $(v warm) vs $ref"; exit 1; }
[ "$(v where | cut -d' ' -f1)" = gpu ] || { echo "loaded table is not on the device: $(v where)"; exit 1; }
[ "$(v dreads)" -ge 1 ] || { echo "no read from the device copy"; exit 1; }
[ "$(v launches)" -gt 0 ] || { echo "no kernel launches counted"; exit 1; }
[ "$(v changed)" = "$(v changed_cpu)" ] || { echo "stale device copy: $(v changed) vs $(v changed_cpu)"; exit 1; }
cold=$(v cold); moved=$(( $(v moved) - cold ))
echo "bytes to the device: first run (table uploaded) $cold, run on the loaded table $moved"
[ "$moved" -lt $(( cold / 4 )) ] || { echo "the loaded table was uploaded again"; exit 1; }
held=$(( $(v free0) - $(v free1) )); back=$(( $(v free2) - $(v free1) ))
echo "device memory: loading took $held bytes, unloading gave back $back"
[ "$back" -ge $(( 200000 * 3 * 8 )) ] || { echo "unload did not free the device copy"; exit 1; }
# loaded while runs were on the CPU: the first GPU run puts it on the device
out2=$(q -c "SET gpudl.device = cpu" -c "SELECT gpudl_load('kin')" \
  -c "SELECT 'where0 ' || device FROM gpudl_cache_status()" \
  -c "SET gpudl.device = gpu" -c "SELECT 'n ' || gpudl_count('kin', 'r(X, Y)')" \
  -c "SELECT 'where1 ' || device FROM gpudl_cache_status()" -c "SELECT gpudl_unload('kin')")
w() { echo "$out2" | grep "^$1 " | head -1 | cut -d' ' -f2-; }
echo "loaded on the CPU: $(w where0), after a GPU run: $(w where1), count $(w n)"
[ "$(w where0)" = cpu ] && [ "$(w where1)" = gpu ] || { echo "the table did not move to the device"; exit 1; }
[ "$(w n)" = "$(v changed_cpu)" ] || { echo "wrong count from the moved table: $(w n)"; exit 1; }
# rule mining on the GPU through SQL: the same rules and measures as the
# CPU's, counted by the GPU service when it runs (else by the session), and
# four sessions mining at once all on the GPU with the same rules
q -q <<'SQL'
CREATE TABLE m1 AS SELECT (random() * 400)::int AS a, (random() * 400)::int AS b FROM generate_series(1, 4000);
CREATE TABLE m2 AS SELECT b AS a, a AS b FROM m1 WHERE random() < 0.7
  UNION SELECT (random() * 400)::int, (random() * 400)::int FROM generate_series(1, 600);
CREATE TABLE m3 AS SELECT DISTINCT x.a, y.b FROM m1 x JOIN m2 y ON x.b = y.a WHERE random() < 0.05;
CREATE TABLE m4 AS SELECT DISTINCT x.a, y.b FROM m3 x JOIN m1 y ON x.b = y.a WHERE random() < 0.01;
SELECT gpudl_create_program('kgm');
SELECT gpudl_bind('kgm', 'm1', 'm1'); SELECT gpudl_bind('kgm', 'm2', 'm2');
SELECT gpudl_bind('kgm', 'm3', 'm3'); SELECT gpudl_bind('kgm', 'm4', 'm4');
SQL
rules="SELECT target, rule, support, head_coverage, std_confidence, pca_confidence, body_size, pca_body_size FROM gpudl_mine('kgm', NULL, max_body => 3) ORDER BY 1, 2"
mcpu=$(q -c "SET gpudl.device = cpu" -c "$rules")
mgpu=$(q -c "SET gpudl.device = gpu" -c "$rules")
echo "mining: $(echo "$mcpu" | grep -c .) rules on the CPU, $(echo "$mgpu" | grep -c .) on the GPU"
[ "$(echo "$mcpu" | grep -c .)" -gt 10 ] || { echo "too few mined rules to compare: $mcpu"; exit 1; }
[ "$mcpu" = "$mgpu" ] || { echo "GPU mining differs from the CPU's"; diff <(echo "$mcpu") <(echo "$mgpu") | head; exit 1; }
dev=$(q -c "SET gpudl.device = gpu" -c "SELECT count(*) FROM gpudl_mine('kgm', 'm3', max_body => 3, commit => true)" \
        -c "SELECT DISTINCT params->>'device' FROM gpudl.mined_rules WHERE program = 'kgm'" | tail -1)
[ "$dev" = gpu ] || { echo "mining did not run on the GPU: device $dev"; exit 1; }
for i in 1 2 3 4; do
  q -q -c "SELECT gpudl_create_program('kgm$i')" -c "SELECT gpudl_bind('kgm$i', 'm' || k, 'm' || k) FROM generate_series(1, 4) k" >/dev/null
done
pids=()
for i in 1 2 3 4; do
  q -c "SET gpudl.device = gpu" -c "SELECT count(*) FROM gpudl_mine('kgm$i', 'm3', max_body => 3, commit => true)" \
    >"/tmp/gpudl_mine_$i.out" 2>&1 & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "a concurrent GPU mining failed"; cat /tmp/gpudl_mine_*.out; exit 1; }; done
same=$(q -c "SELECT count(DISTINCT program) || ' ' || count(DISTINCT params->>'device') || ' ' || min(params->>'device')
              FROM gpudl.mined_rules WHERE program LIKE 'kgm_'" \
         -c "SELECT count(*) FROM (SELECT rule, support, body_size, pca_body_size, count(*) FROM gpudl.mined_rules
              WHERE program LIKE 'kgm%' GROUP BY 1, 2, 3, 4 HAVING count(*) <> 5) x")
echo "four sessions mining at once: $(echo "$same" | paste -sd' ') (programs, devices, device, rules not in all 5)"
[ "$same" = "$(printf '4 1 gpu\n0')" ] || { echo "concurrent GPU mining differs"; cat /tmp/gpudl_mine_*.out; exit 1; }
# rule learning on the GPU through SQL (trained and covered by the GPU
# service when it runs): the same rules as on the CPU, the run recorded as
# a GPU one, and two sessions learning at once
q -q <<'SQL'
CREATE TABLE par AS SELECT DISTINCT (random() * 300)::int AS p, (random() * 300)::int AS c FROM generate_series(1, 900);
CREATE TABLE gp_ex AS SELECT DISTINCT x.p, y.c FROM par x JOIN par y ON x.c = y.p;
SELECT gpudl_create_program('fam', 'anc(X, Y) :- par(X, Y).');
SQL
learn="SELECT rule FROM gpudl_learn('fam', 'gp', 'gp_ex', max_rules => 3) ORDER BY rank"
lcpu=$(q -c "SET gpudl.device = cpu" -c "$learn" | grep -v '^SET$')
lgpu=$(q -c "SET gpudl.device = gpu" -c "$learn" | grep -v '^SET$')
ldev=$(q -c "SELECT device FROM gpudl.learn_runs ORDER BY id DESC LIMIT 1")
echo "learning: CPU [$(echo "$lcpu" | paste -sd';')], GPU [$(echo "$lgpu" | paste -sd';')] on $ldev"
grep -q <<<"$lcpu" "^gp(X, Y) :- " || { echo "nothing learned on the CPU"; exit 1; }
[ "$lcpu" = "$lgpu" ] || { echo "GPU learning differs from the CPU's"; exit 1; }
[ "$ldev" = gpu ] || { echo "learning did not train on the GPU"; exit 1; }
pids=()
for i in 1 2; do q -c "SET gpudl.device = gpu" -c "$learn" 2>&1 | grep -v '^SET$' >"/tmp/gpudl_learn_$i.out" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || { echo "a concurrent GPU learning failed"; cat /tmp/gpudl_learn_*.out; exit 1; }; done
for i in 1 2; do [ "$(cat /tmp/gpudl_learn_$i.out)" = "$lgpu" ] || { echo "concurrent learning $i differs"; exit 1; }; done
[ "$(q -c "SELECT count(*) FROM (SELECT device FROM gpudl.learn_runs ORDER BY id DESC LIMIT 2) x WHERE device = 'gpu'")" = 2 ] \
  || { echo "concurrent learning did not run on the GPU"; exit 1; }
dropdb $db
echo "gpu: ok"

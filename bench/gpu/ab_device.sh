#!/usr/bin/env bash
# bench/gpu/ab_device.sh — an A/B of one CUDA-backend switch on the GPU
# machine, in one call: builds the CUDA module, bench_engine and the unit
# tests there; runs test_cuda_backend and test_engine on the GPU (with the
# B setting, the one under test); then bench_engine on every graph and
# program with A and B alternated ROUNDS times (each a --repeat REPEAT
# process; the first run of a process includes CUDA start-up and is
# dropped), so both see the same machine state.  Medians per phase in
# $OUT/ab.txt, raw lines in $OUT/engine.txt.
#
#   bash .device/run.sh 'A="" B="GDL_CUDA_ABSENT=tiles" bash bench/gpu/ab_device.sh'
#
# A and B are environment assignments ("" = the default build's behaviour).
set -uo pipefail
OUT="${OUT:-out}"; mkdir -p "$OUT"
GRAPH_DIR="${GRAPH_DIR:-$PWD/.device/graphs}"
GRAPHS="${GRAPHS:-CA-HepTh p2p-Gnutella04 p2p-Gnutella31}"
PROGRAMS="${PROGRAMS:-tc sg}"
ROUNDS="${ROUNDS:-3}"
REPEAT="${REPEAT:-3}"
A="${A:-}"; B="${B:-}"
log() { echo "== $(date +%T) $*" | tee -a "$OUT/ab.txt"; }
nvidia-smi -L >>"$OUT/ab.txt" 2>&1
log "build"
make -s cuda/gpudl_cuda.so >"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
make -s -C bench/engine CFLAGS="-O3 -g" >>"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
make -s -C test/unit bin/test_cuda_backend bin/test_engine >>"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
export GDL_CUDA_LIB="$PWD/cuda/gpudl_cuda.so"
if [ -z "${NO_TESTS:-}" ]; then
  log "tests on the GPU with B ($B)"
  env $B timeout 300 test/unit/bin/test_cuda_backend >"$OUT/t1.txt" 2>&1; echo "rc=$?" >>"$OUT/t1.txt"
  tail -2 "$OUT/t1.txt" | tee -a "$OUT/ab.txt"
  env $B GDL_TEST_DEVICE=gpu timeout 300 test/unit/bin/test_engine >"$OUT/t2.txt" 2>&1; echo "rc=$?" >>"$OUT/t2.txt"
  tail -2 "$OUT/t2.txt" | tee -a "$OUT/ab.txt"
fi
# one process: its runs after the first, tagged with the side
run_side() {
  local side="$1" setting="$2" g="$3" p="$4"
  env $setting bench/engine/bench_engine --program "$p" --device gpu --cuda-lib "$GDL_CUDA_LIB" \
    --repeat "$REPEAT" "$GRAPH_DIR/$g.txt" 2>&1 | grep '^graph=' | tail -n +2 | sed "s/^/side=$side /" \
    | tee -a "$OUT/engine.txt" >/dev/null
}
for g in $GRAPHS; do
  for p in $PROGRAMS; do
    log "$g $p"
    for r in $(seq "$ROUNDS"); do
      run_side A "$A" "$g" "$p"
      run_side B "$B" "$g" "$p"
    done
  done
done
# medians per graph, program and side
python3 - "$OUT/engine.txt" <<'EOF' | tee -a "$OUT/ab.txt"
import re, sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    kv = dict(re.findall(r'(\w+)=(\S+)', line))
    rows.setdefault((kv['graph'], kv['program'], kv['side']), []).append(kv)
print("graph program side n tuples seconds join dedup difference merge peak_mb (medians; ms)")
for (g, p, s), rs in sorted(rows.items()):
    med = lambda k: st.median(float(r[k]) for r in rs)
    print(g, p, s, len(rs), rs[0]['tuples'], "%.3f" % med('seconds'),
          *("%.0f" % med(k) for k in ('join_ms', 'dedup_ms', 'difference_ms', 'merge_ms', 'backend_peak_mb')))
EOF
log "done"

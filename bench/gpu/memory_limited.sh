#!/usr/bin/env bash
# bench/gpu/memory_limited.sh — issue 13's limited runs on the GPU machine in
# one short call, from a folder staged as memory_device.sh describes
# (test_engine, test_cuda_backend, bench_engine, gpudl_cuda.so, memory.sh,
# graphs/): test_cuda_backend; TC p2p-Gnutella31 at a third of its peak and
# SG CA-HepTh / p2p-Gnutella04 at a half and a third (the peaks of
# BENCHMARKS.md's sorted-runs table, fixed here so no unlimited pass is
# needed first); the unlimited times of p2p-Gnutella31 (TC --repeat 3, SG)
# and of the two small graphs; test_engine on the GPU.  Writes
# $OUT/summary.txt (tcb.txt, te.txt: the tests' output).
#   cd D && bash memory_limited.sh      (LIMIT_TIMEOUT: 45 s a limited run)
set -uo pipefail
D="$(pwd)"; OUT="${OUT:-$D/out}"; mkdir -p "$OUT"
export GDL_CUDA_LIB="$D/gpudl_cuda.so"
S="$OUT/summary.txt"
s() { echo "== $(date +%T) $*" | tee -a "$S"; }
m() { BENCH="$D/bench_engine" CUDA_LIB="$D/gpudl_cuda.so" GRAPH_DIR="$D/graphs" NL_GRAPHS= bash "$D/memory.sh"; }
nvidia-smi -L >>"$S" 2>&1
s "1 test_cuda_backend"
timeout 100 "$D/test_cuda_backend" >"$OUT/tcb.txt" 2>&1; echo "rc=$?" >>"$OUT/tcb.txt"; tail -3 "$OUT/tcb.txt" >>"$S"
s "6 limited runs"
for gpl in "p2p-Gnutella31 tc 3293" "CA-HepTh sg 561" "CA-HepTh sg 374" "p2p-Gnutella04 sg 767" "p2p-Gnutella04 sg 511"; do
  set -- $gpl
  echo "$1 $2 --memory-limit $3:" >>"$S"
  GRAPHS=$1 PROGRAMS=$2 LIMIT_MB=$3 TIMEOUT=${LIMIT_TIMEOUT:-45} m 2>&1 | tail -1 >>"$S"
done
s "3 unlimited p2p-Gnutella31"
GRAPHS=p2p-Gnutella31 PROGRAMS=tc EXTRA="--repeat 3" TIMEOUT=40 m 2>&1 | tail -1 >>"$S"
GRAPHS=p2p-Gnutella31 PROGRAMS=sg TIMEOUT=40 m 2>&1 | tail -1 >>"$S"
GRAPHS="CA-HepTh p2p-Gnutella04" PROGRAMS="tc sg" TIMEOUT=40 m 2>&1 | tail -4 >>"$S"
s "2 test_engine gpu"
GDL_TEST_DEVICE=gpu timeout 150 "$D/test_engine" >"$OUT/te.txt" 2>&1; echo "rc=$?" >>"$OUT/te.txt"
grep -E "FAIL|out of device|memory-limited" "$OUT/te.txt" | head -8 >>"$S"; tail -2 "$OUT/te.txt" >>"$S"
s done

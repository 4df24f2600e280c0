#!/usr/bin/env bash
# bench/maintain/device.sh — issue 24's maintained tables on the GPU machine,
# in one call of the staged PostgreSQL (shared/tools/device/stage.sh, graphs
# copied into .device/graphs):
#   bash .device/run.sh 'bash bench/maintain/device.sh'
# Runs bench/maintain/maintain.sh once per line of RUNS_SPEC ("DEVICE EDGES
# GRAPHS WORKLOADS SIZES RUNS"), each under STEP_TIMEOUT seconds, and (TESTS=1)
# test_engine on the GPU and the maintained-table regression suites with
# gpudl.device = gpu first.  Everything goes to $OUT/maintain.txt.
set -uo pipefail
OUT="${OUT:-out}"; mkdir -p "$OUT"
export GRAPH_DIR="${GRAPH_DIR:-$PWD/.device/graphs}"
log() { echo "== $(date +%T) $*" | tee -a "$OUT/maintain.txt"; }
nvidia-smi -L >>"$OUT/maintain.txt" 2>&1
if [ "${TESTS:-1}" = 1 ]; then
  log "test_engine on the GPU"
  make -s -j16 -C test/unit bin/test_engine >"$OUT/build.txt" 2>&1 || tail -20 "$OUT/build.txt"
  GDL_CUDA_LIB="$(pg_config --pkglibdir)/gpudl_cuda.so" GDL_TEST_DEVICE=gpu timeout 200 test/unit/bin/test_engine \
    >"$OUT/test_engine_gpu.txt" 2>&1; echo "rc=$?" >>"$OUT/test_engine_gpu.txt"
  grep -E "sorted runs|checks|rc=" "$OUT/test_engine_gpu.txt" | tee -a "$OUT/maintain.txt"
  log "60_maintain, 61_maintain_random with gpudl.device = gpu"
  mkdir -p test/out
  PGOPTIONS="-c gpudl.device=gpu" timeout 200 make -s installcheck with_llvm=no NVCC= REGRESS="60_maintain 61_maintain_random" \
    >"$OUT/regress_gpu.txt" 2>&1; echo "rc=$?" >>"$OUT/regress_gpu.txt"
  grep -E "^(test|ok|not ok)|tests|rc=" "$OUT/regress_gpu.txt" | tee -a "$OUT/maintain.txt"
fi
while read -r dev edges graphs workloads sizes runs; do
  [ -n "$dev" ] || continue
  log "maintain.sh DEVICE=$dev EDGES=$edges GRAPHS=$graphs WORKLOADS=$workloads SIZES=$sizes RUNS=$runs"
  DEVICE=$dev EDGES=$edges GRAPHS=$graphs WORKLOADS=$workloads SIZES="${sizes//,/ }" RUNS=$runs \
    MESSAGES=debug1 timeout "${STEP_TIMEOUT:-240}" bash bench/maintain/maintain.sh \
    >>"$OUT/maintain.txt" 2>>"$OUT/maintain_debug.txt"
  echo "rc=$?" | tee -a "$OUT/maintain.txt"
done <<<"${RUNS_SPEC:-gpu random p2p-Gnutella04 tc 1,100 3}"

#!/usr/bin/env bash
# tools/test.sh — run every test of gpudl: build (warnings are errors, CUDA
# module too where nvcc exists), the source layout (tools/layers.py), the standalone core tests (also built with
# AddressSanitizer + UBSan), a short parser
# fuzz, pg_regress + pgTAP suites (make installcheck) and the shell tests of
# test/t/ against this checkout's private cluster.  Ends with PASS or FAIL.
#
#   bash tools/test.sh            # FUZZ_SECONDS=60 for a longer fuzz
source "$(dirname "$0")/pgenv.sh"
set +e
cd "$GPUDL_ROOT"
failed=()

step() { echo; echo "=== $*"; }

step "prerequisites"
gpudl_check_prereqs test || exit 1

step "build"
make -s -j2 || { echo "build failed"; exit 1; }

step "source layout (tools/layers.py: folders in layer order, none over 25 C files)"
python3 tools/layers.py || failed+=("layers")

step "standalone core tests (test/unit)"
make -s -C test/unit check || failed+=("unit")

step "standalone core tests with AddressSanitizer + UBSan (make -C test/unit check-asan)"
make -s -C test/unit check-asan || failed+=("unit-asan")

step "parser fuzz (${FUZZ_SECONDS:-20} s, gcc build, random mutations)"
if ls test/unit/fuzz_parse.c >/dev/null 2>&1; then
  make -s -C test/unit bin/fuzz_parse_standalone >/dev/null && \
    GDL_FUZZ_SECONDS="${FUZZ_SECONDS:-20}" test/unit/bin/fuzz_parse_standalone test/unit/corpus/* \
    || failed+=("fuzz")
fi

step "install and start the private cluster"
gpudl_build_install || { echo "install failed"; exit 1; }
pg_start || { echo "server start failed"; exit 1; }

# pg_regress + pgTAP against the running cluster; a failure is recorded as $1.
run_installcheck() {
  rm -rf test/out; mkdir -p test/out
  [ "$(id -u)" = 0 ] && chmod -R a+rwX test/out
  if ! make -s installcheck; then
    failed+=("$1")
    echo "----- test/out/regression.diffs"
    cat test/out/regression.diffs 2>/dev/null
  fi
}

step "pg_regress and pgTAP (make installcheck)"
run_installcheck installcheck

step "shell tests (test/t)"
for t in test/t/*.sh; do
  [ -e "$t" ] || continue
  echo "--- $t"
  if bash "$t"; then echo "ok: $t"; else echo "FAILED: $t"; failed+=("$t"); fi
done

# The same suites in a cluster that does not preload gpudl (no
# shared_preload_libraries at all), as a DBA's existing cluster may be:
# everything but the service, the cluster's memory budget and other
# sessions' progress works there, and the tests that need those skip them.
step "without shared_preload_libraries: pg_regress and pgTAP (make installcheck)"
pg_stop
export GPUDL_PRELOAD=no
source "$GPUDL_ROOT/tools/pgenv.sh"
set +e
if pg_start; then
  run_installcheck installcheck-no-preload
  step "without shared_preload_libraries: shell tests (test/t)"
  for t in test/t/*.sh; do
    case "$t" in *18_no_preload.sh) continue;; esac   # runs its own such cluster
    echo "--- $t (no preload)"
    if bash "$t"; then echo "ok: $t (no preload)"; else echo "FAILED: $t (no preload)"; failed+=("$t (no preload)"); fi
  done
  pg_stop
else
  echo "server start without preloading failed"; failed+=("no-preload-start")
fi

echo
if [ ${#failed[@]} -eq 0 ]; then
  echo "gpudl tests: PASS"
else
  echo "gpudl tests: FAIL (${failed[*]})"
  exit 1
fi

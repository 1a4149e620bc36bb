#!/usr/bin/env bash
# Builds mesh and runs the whole test suite, as CI does:
#   1. the regular build (warnings are errors), all tests: unit, integration
#      with real gRPC servers on 127.0.0.1, install + find_package consumer,
#      and the README example compiled;
#   2. an ASan+UBSan build running the unit and integration tests;
#   3. the libFuzzer target for the Linkerd conversion, for a bounded time
#      (MESH_FUZZ_SECONDS, default 30; scripts/fuzz.sh runs it longer);
#   4. a TSan build running the concurrency tests.
# Installs its Debian packages first (idempotent). Build trees go to build/.
# MESH_SANITIZERS=0 skips steps 2 to 4 (a quicker local loop).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
jobs=$(nproc)
export CTEST_OUTPUT_ON_FAILURE=1

step() { printf '\n== %s\n' "$*"; }

step "build (RelWithDebInfo, -Werror)"
cmake -S . -B build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMESH_WERROR=ON >/dev/null
cmake --build build/test -j"$jobs"

step "tests"
ctest --test-dir build/test -j"$jobs"

if [ "${MESH_SANITIZERS:-1}" != 0 ]; then
  step "ASan+UBSan build"
  cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DMESH_WERROR=ON \
    -DMESH_SANITIZE=address,undefined -DMESH_BUILD_EXAMPLES=OFF \
    -DMESH_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build build/asan -j"$jobs"
  step "tests under ASan+UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    ctest --test-dir build/asan -j"$jobs" -LE install

  step "fuzz the Linkerd conversion (${MESH_FUZZ_SECONDS:-30} s)"
  FUZZ_SECONDS="${MESH_FUZZ_SECONDS:-30}" FUZZ_BUILD_JOBS="$jobs" scripts/fuzz.sh

  # Last, so that the suite's closing line is ctest's.
  step "TSan build (concurrency tests)"
  cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMESH_WERROR=ON \
    -DMESH_SANITIZE=thread -DMESH_BUILD_EXAMPLES=OFF \
    -DMESH_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build build/tsan -j"$jobs" --target balance_test metrics_test tap_test \
    sync_test
  step "tests under TSan"
  TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build/tsan -j"$jobs" -L concurrency

fi

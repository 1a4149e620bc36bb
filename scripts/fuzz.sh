#!/usr/bin/env bash
# Builds the libFuzzer targets with clang++ (ASan + UBSan) in build/fuzz and
# runs the Linkerd conversion fuzzer on a generated seed corpus.
#
#   scripts/fuzz.sh                  # 60 s
#   FUZZ_SECONDS=600 scripts/fuzz.sh
#
# Inputs libFuzzer finds interesting accumulate in build/fuzz/corpus across
# runs; a crash is written to build/fuzz/artifacts/ and fails the script.
# Reproduce one with: build/fuzz/tests/fuzz/linkerd_convert_fuzz FILE
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${root}/build/fuzz"
seconds="${FUZZ_SECONDS:-60}"
jobs="${FUZZ_BUILD_JOBS:-2}"

"${root}/scripts/install-deps.sh"

cmake -S "${root}" -B "${build}" \
  -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMESH_BUILD_FUZZERS=ON \
  -DMESH_BUILD_TESTS=ON \
  -DMESH_BUILD_EXAMPLES=OFF \
  -DMESH_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "${build}" -j"${jobs}" \
  --target linkerd_convert_fuzz linkerd_convert_seeds

fuzzer="${build}/tests/fuzz/linkerd_convert_fuzz"
seeds="${build}/seeds"
corpus="${build}/corpus"
artifacts="${build}/artifacts"
rm -rf "${seeds}"
mkdir -p "${seeds}" "${corpus}" "${artifacts}"
"${build}/tests/fuzz/linkerd_convert_seeds" "${seeds}"

# New inputs go to the first directory (corpus); seeds are read only.
"${fuzzer}" "${corpus}" "${seeds}" \
  -max_total_time="${seconds}" \
  -timeout=10 \
  -rss_limit_mb=2048 \
  -print_final_stats=1 \
  -artifact_prefix="${artifacts}/"

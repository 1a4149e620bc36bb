#!/usr/bin/env bash
# What one plain-HTTP request costs the calling process through mesh::curl
# and through the same libcurl handles alone: instructions per request over
# all of the client's threads, counted by valgrind's callgrind (which does
# not swing with the machine's load). The backend is nghttpd, started by
# mesh_curl_bench itself.
#
#   scripts/curl-cost.sh              installs valgrind and nghttpd, builds
#                                     Release in build/bench, runs (about
#                                     a minute after the build)
#   scripts/curl-cost.sh BENCH_DIR    runs BENCH_DIR/mesh_curl_bench
#
# For each variant and in-flight count, callgrind runs one round of
# $HIGH requests (default 3000) and one of $LOW (default 500); the program
# warms up with a tenth of them first (at least 50), so the two runs differ
# by 1.1 * HIGH - (LOW + max(50, LOW / 10)) requests, and the difference of
# their instruction counts divided by that is one request's instructions,
# start-up and connection set-up cancelled. Prints a Markdown table with
# mesh's ratio to curl alone. docs/benchmarks.md section 11 explains the
# figures. Not part of the test command.
set -euo pipefail
cd "$(dirname "$0")/.."
high="${HIGH:-3000}"
low="${LOW:-500}"
if [ $# -eq 0 ]; then
  scripts/install-deps.sh valgrind
  cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DMESH_BUILD_TESTS=OFF \
    -DMESH_BUILD_EXAMPLES=OFF -DMESH_BUILD_TOOLS=OFF \
    -DMESH_BUILD_BENCHMARKS=ON >/dev/null
  timeout 900 cmake --build build/bench -j"$(nproc)" \
    --target mesh_curl_bench >/dev/null
  bin=build/bench/bench/mesh_curl_bench
else
  bin="$1/mesh_curl_bench"
fi
[ -x "$bin" ] || { echo "$0: no $bin" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "$0: valgrind is missing" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Instructions of the whole client process for one run.
instructions() {
  timeout 600 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$bin" --out "$work" --rounds 1 "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

warm() { local n=$1; echo $(( n / 10 > 50 ? n / 10 : 50 )); }
between=$(( high + $(warm "$high") - low - $(warm "$low") ))

printf '| in flight | curl alone | through mesh | ratio |\n'
printf '|---|---|---|---|\n'
for inflight in 1 8; do
  declare -A per=()
  for variant in curl mesh; do
    ir_low=$(instructions --only "$variant" --concurrency "$inflight" \
      --requests "$low")
    ir_high=$(instructions --only "$variant" --concurrency "$inflight" \
      --requests "$high")
    [ -n "$ir_low" ] && [ -n "$ir_high" ] || {
      echo "$0: callgrind printed no count for $variant" >&2
      exit 1
    }
    per[$variant]=$(( (ir_high - ir_low) / between ))
  done
  ratio=$(awk -v a="${per[mesh]}" -v b="${per[curl]}" \
    'BEGIN { printf "%.3f", a / b }')
  printf '| %s | %s | %s | %s |\n' "$inflight" "${per[curl]}" "${per[mesh]}" \
    "$ratio"
done

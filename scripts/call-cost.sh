#!/usr/bin/env bash
# What one unary call costs the calling process, through mesh and directly:
# instructions per call over all of the client's threads (valgrind's
# callgrind, which does not swing with the machine's load) and voluntary
# context switches and CPU time per call (getrusage, a native run). The
# backend is mesh_call_cost_bench --serve, in another process.
#
#   scripts/call-cost.sh              installs valgrind, builds Release in
#                                     build/bench, runs (about 2 minutes)
#   scripts/call-cost.sh BENCH_DIR    runs BENCH_DIR/mesh_call_cost_bench
#
# For each variant and in-flight count: callgrind runs the client with
# --calls 0 and --calls $CALLS (default 1000); (Ir(N) - Ir(0)) / N is one
# call's instructions, set-up and warm-up cancelled. Prints a Markdown
# table with each variant's ratio to the same calls on a direct channel
# (direct_stub). docs/benchmarks.md section 10 explains the figures. Not
# part of the test command.
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${CALLS:-1000}"
native_calls="${NATIVE_CALLS:-3000}"
if [ $# -eq 0 ]; then
  scripts/install-deps.sh valgrind
  cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DMESH_BUILD_TESTS=OFF \
    -DMESH_BUILD_EXAMPLES=OFF -DMESH_BUILD_TOOLS=OFF \
    -DMESH_BUILD_BENCHMARKS=ON >/dev/null
  timeout 900 cmake --build build/bench -j"$(nproc)" \
    --target mesh_call_cost_bench >/dev/null
  bin=build/bench/bench/mesh_call_cost_bench
else
  bin="$1/mesh_call_cost_bench"
fi
[ -x "$bin" ] || { echo "$0: no $bin" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "$0: valgrind is missing" >&2; exit 1; }

work=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" --serve "$work/addr" &
server=$!
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.1; done
[ -s "$work/addr" ] || { echo "$0: the backend did not start" >&2; exit 1; }
backend=$(cat "$work/addr")

# Instructions of the whole client process for one run.
instructions() {
  timeout 600 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$bin" --backend "$backend" --warmup 50 "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '| call | in flight | instructions / call | vs direct | ctx switches / call | CPU us / call |\n'
printf '|---|---|---|---|---|---|\n'
for inflight in 1 8; do
  direct_ir=""
  for variant in direct_stub direct_stub_mixed direct_generic mesh_callraw mesh_call mesh_stub; do
    if [ "$inflight" = 8 ] && [ "$variant" != direct_stub ] &&
      [ "$variant" != mesh_stub ] && [ "$variant" != mesh_callraw ]; then
      continue
    fi
    ir0=$(instructions --variant "$variant" --calls 0 --concurrency "$inflight")
    irn=$(instructions --variant "$variant" --calls "$calls" --concurrency "$inflight")
    per=$(( (irn - ir0) / calls ))
    [ "$variant" = direct_stub ] && direct_ir=$per
    native=$("$bin" --backend "$backend" --variant "$variant" \
      --calls "$native_calls" --concurrency "$inflight")
    nvcsw=$(sed -n 's/.*nvcsw_per_call=\([0-9.]*\).*/\1/p' <<<"$native")
    cpu=$(sed -n 's/.*cpu_us_per_call=\([0-9.]*\).*/\1/p' <<<"$native")
    ratio=$(awk -v a="$per" -v b="$direct_ir" 'BEGIN { printf "%.2f", a / b }')
    printf '| %s | %s | %s | %s× | %s | %s |\n' "$variant" "$inflight" "$per" \
      "$ratio" "$nvcsw" "$cpu"
  done
done

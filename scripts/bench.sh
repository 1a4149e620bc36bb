#!/usr/bin/env bash
# Runs every benchmark of docs/benchmarks.md on this machine, one after the
# other, and regenerates that document's figures, goal table and plots:
#
#   scripts/bench.sh           the full run (about 6 minutes on 2 cores,
#                              a clean Release build included); rewrites
#                              the generated parts of docs/benchmarks.md and
#                              docs/img/*.png
#   scripts/bench.sh --quick   every program with short runs (about 2
#                              minutes): checks the pipeline; writes
#                              results/benchmarks.md, leaves docs/ alone
#
# Raw results go to results/ (git-ignored): micro.json (Google Benchmark),
# NAME.csv and NAME.md per program (tail_latency, overhead, memory, churn,
# tap_load, stub, tls, hedge_tail),
# NAME_goals.md (goal rows), the plots, machine.md. Installs its Debian
# packages first (idempotent), builds Release in build/bench
# (MESH_BENCH_JOBS sets -j, default nproc). Every step has a time limit.
# Not part of the test command.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

scripts/install-deps.sh
jobs="${MESH_BENCH_JOBS:-$(nproc)}"
out=results
bin=build/bench/bench
rm -rf "$out"
mkdir -p "$out"
began=$(date +%s)

step() { printf '\n== %s (%d s in)\n' "$1" $(($(date +%s) - began)); }

step "build (Release) in build/bench"
cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DMESH_BUILD_TESTS=OFF \
  -DMESH_BUILD_EXAMPLES=OFF -DMESH_BUILD_TOOLS=OFF -DMESH_BUILD_BENCHMARKS=ON >/dev/null
timeout 600 cmake --build build/bench -j"$jobs" --target mesh_micro_bench \
  mesh_tail_latency_bench mesh_overhead_bench mesh_memory_bench \
  mesh_churn_bench mesh_tap_load_bench mesh_stub_bench mesh_tls_bench \
  mesh_curl_bench mesh_admin_bench mesh_hedge_bench

if [[ $quick == 1 ]]; then
  micro=(--benchmark_min_time=0.01 --benchmark_repetitions=2)
  tail=(--duration 1.5 --warmup 0.3)
  overhead=(--calls 300 --rounds 1 --warmup 100 --many 10)
  memory=(--endpoints 1000,10000)
  churn=(--rounds 1 --phase_seconds 1 --warmup_seconds 0.2)
  tap_load=(--calls 300 --rounds 1 --warmup 100)
  stub=(--calls 300 --rounds 1 --warmup 100 --messages 2000)
  tls=(--calls 300 --rounds 1 --warmup 100 --connects 3)
  http=(--requests 300 --rounds 2)
  admin=(--calls 300 --rounds 1 --warmup 100)
  hedge=(--duration 1.5 --warmup 0.3)
else
  micro=(--benchmark_repetitions=3)
  tail=()
  overhead=()
  memory=()
  churn=()
  tap_load=()
  stub=()
  tls=()
  http=()
  admin=()
  hedge=()
fi

step "machine facts"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
git diff --quiet HEAD 2>/dev/null || commit+=" with uncommitted changes"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"

step "micro-benchmarks (Google Benchmark)"
timeout 300 "$bin/mesh_micro_bench" "${micro[@]}" \
  --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/micro.json" --benchmark_out_format=json

step "tail latency with a slow backend"
timeout 240 "$bin/mesh_tail_latency_bench" --out "$out" "${tail[@]}"

step "overhead against raw gRPC and an nghttpx hop"
timeout 240 "$bin/mesh_overhead_bench" --out "$out" "${overhead[@]}"

step "memory per endpoint"
timeout 120 "$bin/mesh_memory_bench" --out "$out" "${memory[@]}"

step "churn: calls while discovery updates 10,000 endpoints"
timeout 180 "$bin/mesh_churn_bench" --out "$out" "${churn[@]}"

step "tap: calls with 100 subscribers that never read"
timeout 120 "$bin/mesh_tap_load_bench" --out "$out" "${tap_load[@]}"

step "generated stubs over Mesh::NewGrpcChannel against a direct channel"
timeout 240 "$bin/mesh_stub_bench" --out "$out" "${stub[@]}"

step "mutual TLS against plaintext, through mesh"
timeout 240 "$bin/mesh_tls_bench" --out "$out" "${tls[@]}"

step "plain HTTP through mesh::curl against curl alone and an nghttpx hop"
timeout 240 "$bin/mesh_curl_bench" --out "$out" "${http[@]}"

step "the admin page: none, served idle, open in one browser with a live tap"
timeout 240 "$bin/mesh_admin_bench" --out "$out" "${admin[@]}"

step "hedged requests when 5 % of requests stall on any backend"
timeout 240 "$bin/mesh_hedge_bench" --out "$out" "${hedge[@]}"

cpu="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
mhz="$(awk '/^cpu MHz/ {printf "%.0f MHz", $4; exit}' /proc/cpuinfo)"
os="$(. /etc/os-release && echo "$PRETTY_NAME")"
{
  echo "- \`scripts/bench.sh$([[ $quick == 1 ]] && echo ' --quick')\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit \`$commit\`, $(($(date +%s) - began)) s in all"
  echo "- $(nproc) CPUs: $cpu, $mhz; $(free -g | awk '/^Mem:/ {print $2}') GiB of memory"
  echo "- $os; $(g++ --version | head -1); gRPC $(pkg-config --modversion grpc++ 2>/dev/null || echo '?'); Google Benchmark $(dpkg-query -W -f='${Version}' libbenchmark-dev 2>/dev/null || echo '?'); $(nghttpx --version 2>/dev/null | head -1 || echo 'no nghttpx')"
  echo "- load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
} >"$out/machine.md"
cat "$out/machine.md"

step "report"
if [[ $quick == 1 ]]; then
  cp docs/benchmarks.md "$out/benchmarks.md"
  timeout 60 scripts/bench/report.sh "$out" "$out/benchmarks.md" "$out/img"
else
  timeout 60 scripts/bench/report.sh "$out" docs/benchmarks.md docs/img
fi
cat "$out/goals.md"
step "done"

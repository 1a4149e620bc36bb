#!/usr/bin/env bash
# Runs the benchmarks of docs/benchmarks.md on this machine and writes the
# raw results and plots under results/ (git-ignored):
#   results/micro.json           mesh_micro_bench (Google Benchmark, JSON)
#   results/tail_latency.csv     per balancer: calls, success, p50..max
#   results/tail_latency_curve.csv  latency by percentile, one column each
#   results/tail_latency.png     that curve, log x axis (gnuplot)
#   results/overhead.csv         per variant: p50/p90/p99/max us, calls/s
#   results/overhead_ratios.csv  mesh/raw gRPC ratios, proxy/mesh added p50
#   results/memory.csv           RSS before/after N endpoints, bytes each
#   results/machine.txt          nproc, CPU model, date, commit
# Installs its Debian packages first (scripts/install-deps.sh plus
# gnuplot-nox, and nghttp2-proxy for nghttpx; idempotent), builds Release
# in build/bench. Not part of the test command. Bounded: every step has a
# time limit (about 15 minutes in all on 2 cores from a clean tree).
#
#   scripts/bench.sh [mesh_tail_latency_bench flags, e.g. --duration 5]
#
# MESH_BENCH_JOBS sets the build's parallelism (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh gnuplot-nox nghttp2-proxy
jobs="${MESH_BENCH_JOBS:-$(nproc)}"
out=results
mkdir -p "$out"

step() { printf '\n== %s\n' "$*"; }

step "build (Release) in build/bench"
cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DMESH_BUILD_TESTS=OFF \
  -DMESH_BUILD_EXAMPLES=OFF -DMESH_BUILD_BENCHMARKS=ON >/dev/null
timeout 600 cmake --build build/bench -j"$jobs" \
  --target mesh_micro_bench mesh_tail_latency_bench \
  mesh_overhead_bench mesh_memory_bench

step "machine facts"
{
  echo "nproc: $(nproc)"
  echo "cpu: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(
    git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt"

step "micro-benchmarks"
timeout 300 build/bench/bench/mesh_micro_bench \
  --benchmark_format=json --benchmark_out="$out/micro.json" \
  --benchmark_out_format=json >/dev/null
echo "wrote $out/micro.json"

step "tail latency with a slow backend"
timeout 240 build/bench/bench/mesh_tail_latency_bench --out "$out" "$@" |
  tee "$out/tail_latency.txt"

step "overhead against raw gRPC and an nghttpx hop"
timeout 180 build/bench/bench/mesh_overhead_bench --out "$out" |
  tee "$out/overhead.txt"

step "memory per endpoint"
timeout 180 build/bench/bench/mesh_memory_bench --out "$out" |
  tee "$out/memory.txt"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"

step "plot"
# Columns 3.. of the curve file are the balancers; x is 1/(1-p), so the
# tail spreads out on a log axis as in Buoyant's "Beyond Round Robin" plot.
timeout 60 gnuplot <<EOF
set terminal pngcairo size 1000,600 noenhanced
set output "$out/tail_latency.png"
set datafile separator ","
set key autotitle columnhead top left
set logscale x
set logscale y
set xrange [1:10000]
set xtics ("p0" 1, "p50" 2, "p90" 10, "p99" 100, "p99.9" 1000, "p99.99" 10000)
set xlabel "percentile"
set ylabel "latency (ms, log)"
set grid
set title "Tail latency with one slow backend (open loop; see machine.txt)"
ncols = system("head -1 $out/tail_latency_curve.csv | awk -F, '{print NF}'") + 0
plot for [i=3:ncols] "$out/tail_latency_curve.csv" using 2:i with lines lw 2
EOF
echo "wrote $out/tail_latency.png"

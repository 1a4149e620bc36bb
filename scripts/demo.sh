#!/usr/bin/env bash
# Builds and runs the quickstart: N echo backends on loopback, one of them
# slow, called through a P2C channel and a round-robin channel.
# Usage: scripts/demo.sh [--backends=N] [--calls=N] [--concurrency=N]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "demo: checking build dependencies"
scripts/install-deps.sh

echo "demo: configuring a Release build in build/demo"
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=Release \
  -DMESH_BUILD_TESTS=OFF -DMESH_BUILD_BENCHMARKS=OFF >/dev/null

echo "demo: building mesh-quickstart"
cmake --build build/demo --target mesh-quickstart -j "$(nproc)"

echo "demo: running mesh-quickstart $*"
exec build/demo/examples/mesh-quickstart "$@"

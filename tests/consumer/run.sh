#!/usr/bin/env bash
# Installs the mesh built in $1 into a fresh prefix, then configures, builds
# and runs tests/consumer against it with find_package(mesh).
set -euo pipefail
build_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/mesh/mesh.h"
# Nothing internal is installed.
if find "$work/prefix" -path '*src/*' | grep -q .; then
  echo "internal sources were installed" >&2
  exit 1
fi
cmake -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" -j2 >/dev/null
"$work/build/consumer"

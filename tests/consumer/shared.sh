#!/usr/bin/env bash
# Builds the library alone as a shared library (BUILD_SHARED_LIBS=ON) from
# SOURCE_DIR in a temporary tree, then checks its install with run.sh: the
# SONAME, and programs built with find_package(mesh) and with pkg-config.
#
# Usage: shared.sh SOURCE_DIR SONAME [CMAKE_ARGUMENT...]
set -euo pipefail
source_dir=$1
soname=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake -S "$source_dir" -B "$work" -DBUILD_SHARED_LIBS=ON \
  -DMESH_BUILD_TESTS=OFF -DMESH_BUILD_EXAMPLES=OFF -DMESH_BUILD_TOOLS=OFF \
  -DMESH_BUILD_BENCHMARKS=OFF "$@" >/dev/null
start=$SECONDS
# Every library (mesh, mesh_xds, and mesh_curl when libcurl is found).
cmake --build "$work" -j2 >/dev/null
echo "shared libraries built in $((SECONDS - start)) s"
"$here/run.sh" "$work" "$soname"

#!/usr/bin/env bash
# Installs the mesh built in BUILD_DIR into a fresh prefix, then builds
# tests/consumer/main.cc (and xds_main.cc against mesh_xds, curl_main.cc
# against mesh_curl when the build has it) against it twice, as an outside
# project would: with CMake (find_package(mesh),
# tests/consumer/CMakeLists.txt) and with a plain compiler command line from
# `pkg-config --cflags --libs mesh` (mesh_xds, mesh_curl); runs them. Also
# builds the greeter and plain-HTTP examples on their own.
#
# Usage: run.sh BUILD_DIR [SONAME]
# With SONAME the build is a shared library: the installed libmesh.so must
# carry that SONAME and both programs must load it from the prefix. Without,
# it is a static one: no libmesh.so is installed and neither program needs one.
set -euo pipefail
build_dir=$1
soname=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
test -f "$prefix/include/mesh/mesh.h" || fail "include/mesh/mesh.h not installed"
# Nothing internal is installed.
if find "$prefix" -path '*src/*' | grep -q .; then
  fail "internal sources were installed"
fi
pc=$(find "$prefix" -path '*/pkgconfig/mesh.pc')
test -n "$pc" || fail "mesh.pc not installed"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
test -f "$libdir/cmake/mesh/meshConfig.cmake" || fail "CMake package not beside mesh.pc"

if [[ -n $soname ]]; then
  test -L "$libdir/libmesh.so" || fail "no libmesh.so link for the linker"
  test -e "$libdir/$soname" || fail "$soname not installed"
  test ! -e "$libdir/libmesh.a" || fail "libmesh.a installed by a shared build"
  actual=$(readelf -d "$libdir/libmesh.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
  [[ $actual == "$soname" ]] || fail "SONAME is '$actual', expected '$soname'"
  echo "SONAME: $actual"
  # Hidden visibility: of mesh's internals (mesh::internal::...) a shared
  # libmesh exports only what src/ marks MESH_INTERNAL_EXPORT (the class or
  # function named on the marked line or the next); templates of the
  # standard library made for internal types are not counted.
  marked=$(grep -rh -A1 --include='*.h' 'MESH_INTERNAL_EXPORT' "$here/../../src" |
    grep -v '^#define\|^--$' |
    grep -oE '(class MESH_INTERNAL_EXPORT [A-Za-z_0-9]+|[A-Za-z_0-9]+\()' |
    sed -e 's/^class MESH_INTERNAL_EXPORT //' -e 's/($//' | sort -u)
  exported=$(nm -D --defined-only -C "$libdir/$soname" |
    sed -n 's/^[0-9a-f]* [A-Za-z] \([a-zA-Z ]* for \)\{0,1\}mesh::internal::\([A-Za-z_0-9]*\).*/\2/p' |
    sort -u)
  extra=$(comm -23 <(echo "$exported") <(echo "$marked"))
  [[ -z $extra ]] || fail "libmesh.so exports internals not marked MESH_INTERNAL_EXPORT: $(echo $extra)"
  echo "internals exported: $(echo "$exported" | grep -c .) ($(echo $exported))"
else
  test -f "$libdir/libmesh.a" || fail "libmesh.a not installed"
  if compgen -G "$libdir/libmesh.so*" >/dev/null; then
    fail "a static build installed a shared library"
  fi
fi

# Which libmesh a program loads at run time (empty: none).
loaded_mesh() {
  ldd "$1" | sed -n 's/^[[:space:]]*libmesh\.so[^ ]* => \([^ ]*\) .*/\1/p'
}
check_program() {
  local program=$1
  "$program"
  check_loaded "$program"
}
check_loaded() {
  local program=$1
  local loaded
  loaded=$(loaded_mesh "$program")
  if [[ -n $soname ]]; then
    [[ -n $loaded && $(realpath "$loaded") == $(realpath "$libdir/$soname") ]] ||
      fail "$program loads '${loaded}', not $libdir/$soname"
  else
    [[ -z $loaded ]] || fail "$program needs a shared libmesh ($loaded)"
  fi
}

# 1. CMake: find_package(mesh). CMake gives the program the run path of the
# installed library.
cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" -j2 >/dev/null
check_program "$work/cmake/consumer"
check_program "$work/cmake/xds_consumer"
# mesh_curl is installed when the build found libcurl.
has_curl=0
[[ -f $pcdir/mesh_curl.pc ]] && has_curl=1
if [[ $has_curl == 1 ]]; then
  check_program "$work/cmake/curl_consumer"
  # The plain-HTTP example on its own (examples/http_client): its demo
  # (scripts/demo.sh) runs it against servers; here it must build.
  http_src=$(cd "$here/../../examples/http_client" && pwd)
  cmake -S "$http_src" -B "$work/http_client" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$work/http_client" -j2 >/dev/null
  check_loaded "$work/http_client/mesh-http-client"
fi

# 1b. The greeter example on its own (examples/greeter): its own protoc
# step and a generated stub whose channel comes from Mesh::NewGrpcChannel,
# against two of its servers on 127.0.0.1.
greeter_src=$(cd "$here/../../examples/greeter" && pwd)
cmake -S "$greeter_src" -B "$work/greeter" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/greeter" -j2 >/dev/null
servers=()
addresses=()
for name in alpha beta; do
  "$work/greeter/mesh-greeter-server" "$name" >"$work/$name.out" &
  servers+=($!)
done
trap 'kill "${servers[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
for name in alpha beta; do
  for _ in $(seq 1 100); do
    grep -q '^listening on ' "$work/$name.out" && break
    sleep 0.05
  done
  addresses+=("$(sed -n 's/^listening on //p' "$work/$name.out")")
  [[ -n ${addresses[-1]} ]] || fail "mesh-greeter-server $name did not start"
done
greeter_out=$("$work/greeter/mesh-greeter-client" "${addresses[0]},${addresses[1]}") ||
  fail "mesh-greeter-client failed: $greeter_out"
grep -q '^SayHellos -> Hello #3, stream!' <<<"$greeter_out" ||
  fail "mesh-greeter-client: no stream reply in: $greeter_out"
check_loaded "$work/greeter/mesh-greeter-client"
kill "${servers[@]}"
wait "${servers[@]}" 2>/dev/null || true

# 2. pkg-config: one compiler command line. A shared libmesh is found at run
# time through a run path to pkg-config's libdir.
export PKG_CONFIG_PATH=$pcdir
pkg-config --exists --print-errors mesh
echo "pkg-config --modversion mesh: $(pkg-config --modversion mesh)"
echo "pkg-config --libs mesh: $(pkg-config --libs mesh)"
flags=$(pkg-config --cflags --libs mesh)
rpath=()
if [[ -n $soname ]]; then
  rpath=("-Wl,-rpath,$(pkg-config --variable=libdir mesh)")
fi
# $flags is split into words on purpose: it is a list of compiler arguments.
# shellcheck disable=SC2086
"${CXX:-c++}" -std=c++17 "$here/main.cc" -o "$work/consumer-pc" $flags "${rpath[@]}"
check_program "$work/consumer-pc"
# The xDS source: mesh_xds.pc on top of mesh.pc.
pkg-config --exists --print-errors mesh_xds
xds_flags=$(pkg-config --cflags --libs mesh_xds)
# shellcheck disable=SC2086
"${CXX:-c++}" -std=c++17 "$here/xds_main.cc" -o "$work/xds-consumer-pc" \
  $xds_flags "${rpath[@]}"
check_program "$work/xds-consumer-pc"
# Plain HTTP: mesh_curl.pc on top of mesh.pc and libcurl's.
if [[ $has_curl == 1 ]]; then
  pkg-config --exists --print-errors mesh_curl
  curl_flags=$(pkg-config --cflags --libs mesh_curl)
  # shellcheck disable=SC2086
  "${CXX:-c++}" -std=c++17 "$here/curl_main.cc" -o "$work/curl-consumer-pc" \
    $curl_flags "${rpath[@]}"
  check_program "$work/curl-consumer-pc"
fi

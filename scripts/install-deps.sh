#!/usr/bin/env bash
# Installs the Debian packages mesh needs to build, test and run its demo.
# Idempotent: packages already present are skipped, and apt-get runs only
# when something is missing. Usage: scripts/install-deps.sh [extra-package...]
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libc-ares-dev libabsl-dev libre2-dev libssl-dev
  # The admin page's HTTP/1.1 server, and its TLS library (client
  # certificates with MeshOptions::admin_tls).
  libmicrohttpd-dev libgnutls28-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev clang-format
  # lld links the test command's builds (scripts/test.sh).
  lld
  openssl python3
  # The DNS discovery tests' DNS server.
  dnsmasq-base
  # Plain HTTP through libcurl (mesh_curl), and its tests' HTTP/2 servers
  # (libnghttp2, the HTTP/2 library libcurl uses).
  libcurl4-openssl-dev libnghttp2-dev
  # The benchmarks and their smoke test: plots, the proxy hop, JSON, the
  # plain-HTTP backend (nghttpd).
  gnuplot-nox nghttp2-proxy nghttp2-server jq
  # The admin page's browser test: headless Chromium and its WebDriver.
  chromium chromium-driver
  # The Bazel build (scripts/bazel.sh, docs/bazel.md): Debian's Bazel 4.
  bazel-bootstrap
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Builds the libFuzzer targets with clang++ (ASan + UBSan) in build/fuzz and
# runs each for a bounded time:
#   linkerd_convert_fuzz       Linkerd wire messages -> the model (seeded
#                              with valid messages, linkerd_convert_seeds)
#   control_plane_config_fuzz  mesh-control-plane's config reader (seeded
#                              with tools/mesh-control-plane/sample.json)
#   route_table_fuzz           the route table builder and matcher
#   xds_convert_fuzz           xDS resources -> the client's values, on to
#                              a route match and the endpoints to serve
#                              (seeded with valid resources, xds_convert_seeds)
#   xds_bootstrap_fuzz         the xDS bootstrap reader (seeded with a
#                              bootstrap in gRPC's form)
#   dns_answer_fuzz            a DNS server's answer -> the CNAME chain and
#                              addresses (seeded with an answer to A and a
#                              CNAME loop)
#   tap_match_fuzz             an Observe request's bytes -> the tap match,
#                              within its bounds, evaluated on requests
#
#   scripts/fuzz.sh                         # 60 s each
#   FUZZ_SECONDS=600 scripts/fuzz.sh        # longer
#   FUZZ_RUNS=10000000 scripts/fuzz.sh      # a number of inputs each instead
#   FUZZ_TARGETS=route_table_fuzz scripts/fuzz.sh
#   FUZZ_PARALLEL=1 scripts/fuzz.sh         # one at a time (default: as
#                                           # many at once as cores)
#   FUZZ_BUILD_DIR=build/asan-clang scripts/fuzz.sh
#                                           # in an existing clang tree (the
#                                           # test command's ASan tree: no
#                                           # second build of the protos)
#
# Inputs libFuzzer finds interesting accumulate in build/fuzz/corpus/TARGET
# (in FUZZ_BUILD_DIR if set) across runs; a crash is written to
# build/fuzz/artifacts/ and fails the script. Reproduce one with:
# build/fuzz/tests/fuzz/TARGET FILE
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-${root}/build/fuzz}"
seconds="${FUZZ_SECONDS:-60}"
runs="${FUZZ_RUNS:-}"
jobs="${FUZZ_BUILD_JOBS:-2}"
read -r -a targets <<<"${FUZZ_TARGETS:-linkerd_convert_fuzz control_plane_config_fuzz route_table_fuzz xds_convert_fuzz xds_bootstrap_fuzz dns_answer_fuzz tap_match_fuzz}"

"${root}/scripts/install-deps.sh"

if [[ -n "${FUZZ_BUILD_DIR:-}" ]]; then
  # The tree keeps its own settings; the fuzzers are added to it.
  cmake -S "${root}" -B "${build}" -DMESH_BUILD_FUZZERS=ON >/dev/null
else
  cmake -S "${root}" -B "${build}" \
    -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DMESH_BUILD_FUZZERS=ON \
    -DMESH_BUILD_TESTS=ON \
    -DMESH_BUILD_EXAMPLES=OFF -DMESH_BUILD_TOOLS=OFF \
    -DMESH_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build "${build}" -j"${jobs}" --target "${targets[@]}" \
  linkerd_convert_seeds xds_convert_seeds

artifacts="${build}/artifacts"
logs="${build}/fuzz-logs"
mkdir -p "${artifacts}" "${logs}"
# Each fuzzer runs on one core: FUZZ_PARALLEL of them at a time (default:
# the number of cores), each one's output printed when it ends.
parallel="${FUZZ_PARALLEL:-$(nproc)}"
running=()
failed=()
finish_one() {
  local pid=${running[0]%%:*} target=${running[0]#*:}
  running=("${running[@]:1}")
  if wait "${pid}"; then :; else failed+=("${target}"); fi
  cat "${logs}/${target}.log"
}
for target in "${targets[@]}"; do
  seeds="${build}/seeds/${target}"
  corpus="${build}/corpus/${target}"
  rm -rf "${seeds}"
  mkdir -p "${seeds}" "${corpus}"
  case "${target}" in
    linkerd_convert_fuzz)
      "${build}/tests/fuzz/linkerd_convert_seeds" "${seeds}" ;;
    control_plane_config_fuzz)
      cp "${root}/tools/mesh-control-plane/sample.json" "${seeds}/"
      cp "${root}/tools/mesh-control-plane/sample-policy.json" "${seeds}/" ;;
    xds_convert_fuzz)
      "${build}/tests/fuzz/xds_convert_seeds" "${seeds}" ;;
    dns_answer_fuzz)
      # A type byte (0: A), then a DNS message: a.test A 127.0.0.1; and
      # a.test CNAME b.test, b.test CNAME a.test.
      printf '\x00\x00\x01\x81\x80\x00\x01\x00\x01\x00\x00\x00\x00\x01a\x04test\x00\x00\x01\x00\x01\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x7f\x00\x00\x01' \
        >"${seeds}/a.bin"
      printf '\x00\x00\x02\x81\x80\x00\x01\x00\x02\x00\x00\x00\x00\x01a\x04test\x00\x00\x01\x00\x01\xc0\x0c\x00\x05\x00\x01\x00\x00\x00\x3c\x00\x08\x01b\x04test\x00\xc0\x24\x00\x05\x00\x01\x00\x00\x00\x3c\x00\x02\xc0\x0c' \
        >"${seeds}/loop.bin" ;;
    xds_bootstrap_fuzz)
      # gRPC's form, with TLS channel creds and a file_watcher provider.
      printf '%s' '{"xds_servers": [{"server_uri": "dns:///cp.test:15010", "channel_creds": [{"type": "tls", "config": {"ca_certificate_file": "/ca.pem"}}], "server_features": ["xds_v3"]}], "node": {"id": "n", "locality": {"zone": "z"}, "metadata": {"GENERATOR": "grpc", "L": [1, [2, {"a": null}]]}}, "certificate_providers": {"d": {"plugin_name": "file_watcher", "config": {"certificate_file": "/c", "private_key_file": "/k", "refresh_interval": "60s"}}}}' \
        >"${seeds}/grpc.json" ;;
  esac
  if [[ -n "${runs}" ]]; then limit=(-runs="${runs}"); else limit=(-max_total_time="${seconds}"); fi
  if ((${#running[@]} >= parallel)); then finish_one; fi
  # New inputs go to the first directory (corpus); seeds are read only.
  {
    echo "== ${target}: ${runs:-${seconds} s}${runs:+ inputs}"
    "${build}/tests/fuzz/${target}" "${corpus}" "${seeds}" \
      "${limit[@]}" \
      -timeout=10 \
      -rss_limit_mb=2048 \
      -print_final_stats=1 \
      -artifact_prefix="${artifacts}/${target}-"
  } >"${logs}/${target}.log" 2>&1 &
  running+=("$!:${target}")
done
while ((${#running[@]} > 0)); do finish_one; done
if ((${#failed[@]} > 0)); then
  echo "fuzz: failed: ${failed[*]} (inputs in ${artifacts})" >&2
  exit 1
fi

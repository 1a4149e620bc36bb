#!/usr/bin/env bash
# The demo, in seven parts:
#   1. the quickstart: 5 echo backends on loopback, one slow, called through
#      a P2C channel and a round-robin channel (static discovery);
#   2. Linkerd discovery: mesh-control-plane serving a config file, three
#      mesh-echo-server processes, and mesh-call sending traffic through it
#      while this script edits the file — adding a backend, then removing
#      one — so each second's line shows the traffic follow; mesh-tap shows
#      three live requests through mesh-call's tap server, mesh-call's
#      admin page answers, and mesh-call ends with the per-route metrics;
#   3. the same file over xDS: gRPC's own xDS client (an "xds:///" channel,
#      no mesh library) configured by the same control plane, with the
#      control plane's log of that ADS stream — Listener, routes, Cluster,
#      endpoints, each ACKed;
#   4. mesh's own xDS client: mesh-call --xds-bootstrap, P2C over the
#      endpoints the control plane sends, following an edit of the file,
#      then splitting traffic by weight and routing a header to a canary;
#   5. generated stubs: examples/greeter's client, an ordinary gRPC stub
#      whose channel comes from Mesh::NewGrpcChannel, against two greeter
#      servers (unary calls spread over both, then a server stream);
#   6. identity: certificates made with openssl, three mesh-echo-server
#      processes serving mutual TLS — two with the identity mesh-call
#      expects, one impostor of the same CA — and mesh-call with its own
#      certificate: every call is served by the two, the impostor is
#      refused at the handshake with both identities named; then the same
#      over xDS, the control plane sending a TLS cluster and mesh-call
#      taking its certificate from its bootstrap's certificate_providers;
#   7. Linkerd's OutboundPolicies: the control plane serves a GRPCRoute from
#      its file that splits echo.local 3:1 between two backend services and
#      retries UNAVAILABLE; one backend endpoint fails every call, and
#      mesh-call --linkerd-policy shows the split, the retries and all
#      calls OK;
#   8. plain HTTP through libcurl: two nghttpd HTTP/2 servers behind the
#      control plane, examples/http_client (an ordinary libcurl loop whose
#      curl_easy_perform became mesh::curl::Perform) sending 100 GETs over
#      HTTP/2, then mesh-call --http spreading 400 with 8 in flight and
#      counting them by HTTP status.
# Usage: scripts/demo.sh [quickstart flags: --backends=N --calls=N --concurrency=N]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "demo: checking build dependencies"
scripts/install-deps.sh

echo "demo: configuring a Release build in build/demo"
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=Release \
  -DMESH_BUILD_TESTS=OFF -DMESH_BUILD_BENCHMARKS=OFF >/dev/null

echo "demo: building"
cmake --build build/demo -j "$(nproc)" --target mesh-quickstart \
  mesh-control-plane mesh-call mesh-echo-server mesh-tap mesh-grpc-xds-client \
  mesh-greeter-server mesh-greeter-client mesh-http-client

bin=build/demo/tools
echo
echo "demo: part 1 — P2C vs round robin (mesh-quickstart $*)"
build/demo/examples/mesh-quickstart "$@"

echo
echo "demo: part 2 — Linkerd discovery through the local control plane"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Starts a process whose first stdout line is wanted; sets $line to it.
start() {
  local name=$1
  shift
  : >"$work/$name.out" # exists before the child's redirection opens it
  "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=("$!")
  line=""
  for _ in $(seq 100); do
    line=$(head -n 1 "$work/$name.out" || true)
    [ -n "$line" ] && return 0
    sleep 0.1
  done
  echo "demo: $name did not start: $(cat "$work/$name.err")" >&2
  exit 1
}

backends=()
for i in 1 2 3; do
  start "backend$i" "$bin/mesh-echo-server" --port 0 --delay-ms 2 --jitter-ms 1
  backends+=("$line")
done

config="$work/mesh.json"
write_config() {
  local endpoints="" address
  for address in "$@"; do
    [ -n "$endpoints" ] && endpoints+=", "
    endpoints+="{\"address\": \"$address\"}"
  done
  # Written whole and renamed, so the control plane never reads half a file.
  # One route, Say: retried on failure, 3 s for all its attempts (gRPC 1.51's
  # xDS client applies a route timeout 1-2 s short, docs/xds.md).
  printf '{\n  "targets": {\n    "echo.local:7000": {"endpoints": [%s],\n      "profile": {"routes": [{"name": "Say", "path_regex": "^/demo[.]Echo/Say$", "timeout_ms": 3000, "retryable": true}]}}\n  }\n}\n' \
    "$endpoints" >"$config.tmp"
  mv "$config.tmp" "$config"
}

# Moves $config.tmp over the config, then waits (5 s at most) for the control
# plane, which looks at the file every 200 ms, to apply it.
install_config() {
  local applied
  applied=$(grep -c 'changed; applied' "$work/control-plane.err" || true)
  mv "$config.tmp" "$config"
  for _ in $(seq 50); do
    [ "$(grep -c 'changed; applied' "$work/control-plane.err" || true)" -gt "$applied" ] && break
    sleep 0.1
  done
}

write_config "${backends[0]}" "${backends[1]}"
start control-plane "$bin/mesh-control-plane" --config="$config" --listen=127.0.0.1:0 --verbose
port=${line##*:}
port=${port%% *}
echo "demo: $line"
echo "demo: backends A=${backends[0]} B=${backends[1]} C=${backends[2]}; the config lists A and B"

"$bin/mesh-call" --linkerd "127.0.0.1:$port" --target echo.local:7000 \
  --method /demo.Echo/Say --duration 6 --interval 1 --concurrency 8 \
  --deadline 1000 --metrics --tap 127.0.0.1:0 --admin 127.0.0.1:0 \
  2>"$work/call.err" &
call=$!
# What sed script $1 prints from mesh-call's log, once it prints
# something (5 s at most; empty if it never does).
from_call_log() {
  local found=""
  for _ in $(seq 50); do
    found=$(sed -n "$1" "$work/call.err")
    [ -n "$found" ] && break
    sleep 0.1
  done
  echo "$found"
}
# mesh-call serves Linkerd's tap API while it runs: watch three requests.
tap_port=$(from_call_log 's/.*tap (Observe) on .*, port \([0-9]*\).*/\1/p')
# And its admin page (docs/admin.md): a browser opened on it while the
# run lasts shows the endpoints, routes and live tap.
admin_url=$(from_call_log 's/.*admin page on \(http:[^ ]*\).*/\1/p')
if [ -n "$admin_url" ]; then
  echo "demo: mesh-call's admin page: $admin_url (docs/admin.md); its /healthz says:" \
    "$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + "healthz", timeout=5).read().decode().strip())' "$admin_url")"
fi
if [ -n "$tap_port" ]; then
  echo "demo: mesh-tap 127.0.0.1:$tap_port --limit 3 (live requests of mesh-call):"
  "$bin/mesh-tap" "127.0.0.1:$tap_port" --limit 3 --timeout 5 | sed 's/^/  /'
else
  echo "demo: mesh-call did not report its tap port: $(cat "$work/call.err")" >&2
fi
sleep 1
echo "demo: editing the config: add C"
write_config "${backends[0]}" "${backends[1]}" "${backends[2]}"
sleep 2
echo "demo: editing the config: remove A"
write_config "${backends[1]}" "${backends[2]}"
wait "$call"

echo
echo "demo: part 3 — the same file over xDS, to gRPC's own client (xds:///echo.local:7000)"
echo "demo: the config now lists B and C; mesh-grpc-xds-client makes 100 calls"
build/demo/examples/mesh-grpc-xds-client "127.0.0.1:$port" echo.local:7000 \
  /demo.Echo/Say 100 | sed 's/^/  /'
echo "demo: the control plane's log of that ADS stream (--verbose):"
grep -E 'ads stream [0-9]+ (opened|node=)' "$work/control-plane.err" | head -n 12 |
  sed -e 's/^mesh-control-plane: /  /' -e 's/ node="[^"]*"//'
if grep -q 'NACK from' "$work/control-plane.err"; then
  echo "demo: the client NACKed a response:" >&2
  grep 'NACK from' "$work/control-plane.err" >&2
  exit 1
fi

echo
echo "demo: part 4 — mesh's own xDS client: mesh-call --xds-bootstrap (xds:///echo.local:7000)"
bootstrap="$work/bootstrap.json"
printf '{"xds_servers": [{"server_uri": "127.0.0.1:%s", "channel_creds": [{"type": "insecure"}], "server_features": ["xds_v3"]}],\n "node": {"id": "demo-mesh-call", "metadata": {"GENERATOR": "grpc"}}}\n' \
  "$port" >"$bootstrap"
echo "demo: the config lists B and C; after 2 s the script adds A back"
"$bin/mesh-call" --xds-bootstrap "$bootstrap" --target xds:///echo.local:7000 \
  --method /demo.Echo/Say --duration 4 --interval 1 --concurrency 8 \
  --deadline 1000 2>"$work/xds-call.err" | sed 's/^/  /' &
call=$!
sleep 2
write_config "${backends[0]}" "${backends[1]}" "${backends[2]}"
wait "$call"

# A canary: echo.local:7000 splits 3:1 between its own endpoints (A, B) and
# echo-canary.local:7000 (C); calls with "x-canary: 1" all go to the canary.
printf '{\n  "targets": {\n    "echo-canary.local:7000": {"endpoints": [{"address": "%s"}]},\n    "echo.local:7000": {"endpoints": [{"address": "%s"}, {"address": "%s"}],\n      "profile": {"routes": [{"name": "canary", "path_regex": "^/demo[.]Echo/.*$", "headers": [{"name": "x-canary", "exact": "1"}], "dst_overrides": [{"authority": "echo-canary.local:7000", "weight": 1}]}],\n        "dst_overrides": [{"authority": "echo.local:7000", "weight": 3}, {"authority": "echo-canary.local:7000", "weight": 1}]}}\n  }\n}\n' \
  "${backends[2]}" "${backends[0]}" "${backends[1]}" >"$config.tmp"
mv "$config.tmp" "$config"
echo "demo: the config now splits echo.local:7000 3:1 with echo-canary.local:7000 (C); 400 calls:"
"$bin/mesh-call" --xds-bootstrap "$bootstrap" --target xds:///echo.local:7000 \
  --method /demo.Echo/Say --count 400 --concurrency 8 --deadline 1000 \
  2>>"$work/xds-call.err" | sed 's/^/  /'
echo "demo: with the header x-canary: 1, 100 calls all go to the canary (C):"
"$bin/mesh-call" --xds-bootstrap "$bootstrap" --target xds:///echo.local:7000 \
  --method /demo.Echo/Say --count 100 --concurrency 8 --deadline 1000 \
  --header 'x-canary: 1' 2>>"$work/xds-call.err" | sed 's/^/  /'
if grep -q 'NACK from' "$work/control-plane.err"; then
  echo "demo: mesh's xDS client NACKed a response:" >&2
  grep 'NACK from' "$work/control-plane.err" >&2
  exit 1
fi

echo
echo "demo: part 5 — a generated gRPC stub over Mesh::NewGrpcChannel (examples/greeter)"
greeters=()
for name in alpha beta; do
  start "greeter-$name" build/demo/examples/greeter/mesh-greeter-server "$name"
  greeters+=("${line#listening on }")
done
echo "demo: greeter servers alpha=${greeters[0]} beta=${greeters[1]}"
build/demo/examples/greeter/mesh-greeter-client "${greeters[0]},${greeters[1]}" |
  sed 's/^/  /'

echo
echo "demo: part 6 — identity: mutual TLS, and an impostor refused"
identity=books.ns.serviceaccount.identity.mesh.demo
scripts/make-demo-certs.sh "$work/pki" "$identity"
pki="$work/pki"
tls_backends=()
for name in server server impostor; do
  start "tls-$name-${#tls_backends[@]}" "$bin/mesh-echo-server" --port 0 \
    --tls-cert "$pki/$name.pem" --tls-key "$pki/$name.key" --tls-ca "$pki/ca.pem"
  tls_backends+=("$line")
done
echo "demo: TLS backends A=${tls_backends[0]} B=${tls_backends[1]} carry DNS:$identity;"
echo "demo: the impostor I=${tls_backends[2]} carries DNS:impostor.$identity (same CA)"
tls=(--tls-cert "$pki/client.pem" --tls-key "$pki/client.key" --tls-ca "$pki/ca.pem")
echo "demo: mesh-call expects $identity of all three: 60 calls"
"$bin/mesh-call" --static "${tls_backends[0]},${tls_backends[1]},${tls_backends[2]}" \
  --static-identity "$identity" "${tls[@]}" --target books.local:7000 \
  --method /demo.Echo/Say --count 60 --concurrency 4 | sed 's/^/  /'
echo "demo: the impostor alone:"
"$bin/mesh-call" --static "${tls_backends[2]}" --static-identity "$identity" \
  "${tls[@]}" --target books.local:7000 --method /demo.Echo/Say --count 1 \
  2>&1 | sed 's/^/  /' || true

echo "demo: the same backends over xDS: mesh-control-plane sends books.local:7000 as a"
echo "demo: cluster with an UpstreamTlsContext (SAN DNS:$identity, provider 'default');"
echo "demo: mesh-call's bootstrap names the client files as that file_watcher provider"
printf '{"targets": {"books.local:7000": {"endpoints": [{"address": "%s", "tls_identity": "%s"}, {"address": "%s", "tls_identity": "%s"}, {"address": "%s", "tls_identity": "%s"}]}}}\n' \
  "${tls_backends[0]}" "$identity" "${tls_backends[1]}" "$identity" \
  "${tls_backends[2]}" "$identity" >"$config.tmp"
install_config
tls_bootstrap="$work/bootstrap-tls.json"
printf '{"xds_servers": [{"server_uri": "127.0.0.1:%s", "channel_creds": [{"type": "insecure"}], "server_features": ["xds_v3"]}],\n "node": {"id": "demo-mesh-call-tls"},\n "certificate_providers": {"default": {"plugin_name": "file_watcher", "config": {"certificate_file": "%s", "private_key_file": "%s", "ca_certificate_file": "%s", "refresh_interval": "60s"}}}}\n' \
  "$port" "$pki/client.pem" "$pki/client.key" "$pki/ca.pem" >"$tls_bootstrap"
"$bin/mesh-call" --xds-bootstrap "$tls_bootstrap" --target xds:///books.local:7000 \
  --method /demo.Echo/Say --count 60 --concurrency 4 --deadline 3000 \
  2>"$work/xds-tls-call.err" | sed 's/^/  /'
if grep -q 'NACK from' "$work/control-plane.err"; then
  echo "demo: mesh's xDS client NACKed a TLS cluster:" >&2
  grep 'NACK from' "$work/control-plane.err" >&2
  exit 1
fi

echo
echo "demo: part 7 — Linkerd's OutboundPolicies: a GRPCRoute split and retries from the file"
start flaky "$bin/mesh-echo-server" --port 0 --fail-status UNAVAILABLE
flaky=$line
echo "demo: echo-v1.local:7000 = A, B and F=$flaky (F answers every call UNAVAILABLE);"
echo "demo: echo-v2.local:7000 = C. echo.local:7000's policy (mesh-control-plane's"
echo "demo: OutboundPolicies API) has one GRPCRoute: demo.Echo split 3:1 between"
echo "demo: v1 and v2, retried on UNAVAILABLE up to 2 times"
printf '{"targets": {\n  "echo-v1.local:7000": {"endpoints": [{"address": "%s"}, {"address": "%s"}, {"address": "%s"}]},\n  "echo-v2.local:7000": {"endpoints": [{"address": "%s"}]},\n  "echo.local:7000": {"endpoints": [{"address": "%s"}], "policy": {"protocol": "grpc",\n    "routes": [{"name": "echo-split", "rules": [{"matches": [{"service": "demo.Echo"}],\n      "backends": [{"authority": "echo-v1.local:7000", "weight": 3}, {"authority": "echo-v2.local:7000", "weight": 1}],\n      "timeout_ms": 3000, "retry": {"max_retries": 2, "codes": ["UNAVAILABLE"]}}]}]}}\n}}\n' \
  "${backends[0]}" "${backends[1]}" "$flaky" "${backends[2]}" "${backends[0]}" >"$config.tmp"
install_config
echo "demo: mesh-call --linkerd-policy: 400 calls (A and B carry v1's 3/4, C v2's 1/4;"
echo "demo: F's failures are retried elsewhere and P2C learns to avoid it):"
"$bin/mesh-call" --linkerd "127.0.0.1:$port" --linkerd-policy "127.0.0.1:$port" \
  --source-workload '{"ns":"demo","pod":"demo-0"}' --target echo.local:7000 \
  --method /demo.Echo/Say --count 400 --concurrency 8 --deadline 3000 \
  --metrics 2>"$work/policy-call.err" >"$work/policy-call.out"
sed -n '/^endpoint/,/^status/p' "$work/policy-call.out" | sed 's/^/  /'
grep -E '^  route_(request|retry)_total\{.*route="echo-split"' "$work/policy-call.out"

echo
echo "demo: part 8 — plain HTTP through the application's own libcurl (examples/http_client)"
mkdir -p "$work/www/books"
printf 'book one' >"$work/www/books/1"
# nghttpd (Debian's nghttp2-server): start_nghttpd sets `address`.
. scripts/nghttpd.sh
start_nghttpd "$work/www" || { echo "demo: nghttpd did not start" >&2; exit 1; }
web1=$address
start_nghttpd "$work/www" || { echo "demo: nghttpd did not start" >&2; exit 1; }
web2=$address
echo "demo: books.local:7001 = nghttpd at $web1 and $web2 (HTTP/2, as the control"
echo "demo: plane's Destination answer says)"
printf '{"targets": {"books.local:7001": {"endpoints": [{"address": "%s"}, {"address": "%s"}]}}}\n' \
  "$web1" "$web2" >"$config.tmp"
install_config
echo "demo: mesh-http-client: 100 GETs of /books/1, one at a time (P2C sends each to"
echo "demo: the faster of two; idle, equal servers may see unequal shares):"
build/demo/examples/http_client/mesh-http-client "127.0.0.1:$port" \
  books.local:7001 /books/1 100 | sed 's/^/  /'
echo "demo: mesh-call --http GET:/books/1: 400 requests, 8 in flight:"
"$bin/mesh-call" --linkerd "127.0.0.1:$port" --target books.local:7001 \
  --http GET:/books/1 --count 400 --concurrency 8 --deadline 3000 \
  2>"$work/http-call.err" >"$work/http-call.out"
sed -n '/^endpoint/,/^status/p' "$work/http-call.out" | sed 's/^/  /'

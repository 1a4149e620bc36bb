#!/usr/bin/env bash
# mesh-call with an identity (--tls-*) against mesh-echo-server processes
# serving mutual TLS, with certificates made by scripts/make-demo-certs.sh
# (the `openssl` command):
#
#   tests/cli/mesh_call_tls_test.sh BUILD_DIR
#
# Two servers with the identity mesh-call expects and one impostor (same
# CA, another name): 30 calls all succeed and none reaches the impostor;
# alone, the impostor is refused naming both identities; a server with
# --tls-ca refuses a client certificate of another CA; mesh-control-plane over
# mutual TLS serves Linkerd discovery to mesh-call --linkerd-identity (and
# not under another identity); --tls-ca alone (no client certificate)
# serves a server that does not ask for one, checking its identity, and
# not one that requires one; bad TLS flags exit 2.
# The processes are killed on exit, whatever happens.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$1/tools"
call="$bin/mesh-call"
server="$bin/mesh-echo-server"
for b in "$call" "$server"; do
  [[ -x "$b" ]] || { echo "FAIL: $b not built" >&2; exit 1; }
done
command -v openssl >/dev/null ||
  { echo "FAIL: the openssl command is not installed (scripts/install-deps.sh)" >&2; exit 1; }

tmp="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

identity=books.ns.serviceaccount.identity.mesh.test
"$here/../../scripts/make-demo-certs.sh" "$tmp/pki" "$identity"
pki="$tmp/pki"

# Starts a TLS echo server presenting NAME's certificate and requiring
# client certificates (without them when a second argument is "open");
# sets `address`.
start_server() {
  local name=$1 out="$tmp/$1.out" client_ca=(--tls-ca "$pki/ca.pem")
  [[ "${2:-}" == open ]] && client_ca=()
  : >"$out"
  "$server" --port 0 --tls-cert "$pki/$name.pem" --tls-key "$pki/$name.key" \
    "${client_ca[@]}" >"$out" 2>"$tmp/$name.err" &
  pids+=("$!")
  address=""
  for _ in $(seq 100); do
    address="$(head -n 1 "$out" || true)"
    [[ -n "$address" ]] && return 0
    sleep 0.1
  done
  fail "$name printed no address: $(cat "$tmp/$name.err")"
}
start_server server
good1="$address"
cp "$pki/server.pem" "$pki/server2.pem"
cp "$pki/server.key" "$pki/server2.key"
start_server server2
good2="$address"
start_server impostor
impostor="$address"
echo "servers: $good1 $good2, impostor $impostor"

tls=(--tls-cert "$pki/client.pem" --tls-key "$pki/client.key" --tls-ca "$pki/ca.pem")
method=(--target books.local:7000 --method /demo.Echo/Say)

"$call" --static "$good1,$good2,$impostor" --static-identity "$identity" \
  "${tls[@]}" "${method[@]}" --count 30 --json >"$tmp/report.json" ||
  fail "mesh-call exited $?: $(cat "$tmp/report.json")"
python3 - "$tmp/report.json" "$good1" "$good2" "$impostor" <<'PY' ||
import json, sys
report = json.load(open(sys.argv[1]))
assert report["status"] == {"OK": 30}, report["status"]
used = {e["address"]: e["calls"] for e in report["endpoints"] if e["calls"]}
assert sum(used.get(a, 0) for a in sys.argv[2:4]) == 30, used
PY
  fail "report: $(cat "$tmp/report.json")"
echo "ok: 30 calls over mutual TLS, none to the impostor"

# (mesh-call reports failed calls in its table and exits 0.)
"$call" --static "$impostor" --static-identity "$identity" "${tls[@]}" \
  "${method[@]}" --count 1 >"$tmp/impostor.out" 2>&1 ||
  fail "mesh-call exited $?: $(cat "$tmp/impostor.out")"
grep -qF "expected '$identity'" "$tmp/impostor.out" ||
  fail "impostor alone: $(cat "$tmp/impostor.out")"
grep -qF "DNS:impostor.$identity" "$tmp/impostor.out" ||
  fail "impostor alone: $(cat "$tmp/impostor.out")"
echo "ok: the impostor alone is refused, both identities named"

# A client certificate from another CA: the servers (--tls-ca) refuse it,
# though mesh-call accepts them.
"$here/../../scripts/make-demo-certs.sh" "$tmp/other" "$identity"
"$call" --static "$good1" --static-identity "$identity" \
  --tls-cert "$tmp/other/client.pem" --tls-key "$tmp/other/client.key" \
  --tls-ca "$pki/ca.pem" "${method[@]}" --count 1 --deadline 2000 \
  >"$tmp/stranger.out" 2>&1 || fail "mesh-call exited $?: $(cat "$tmp/stranger.out")"
grep -q "status: OK" "$tmp/stranger.out" &&
  fail "a client certificate of another CA was served: $(cat "$tmp/stranger.out")"
grep -q "status: UNAVAILABLE 1" "$tmp/stranger.out" ||
  fail "stranger: $(cat "$tmp/stranger.out")"
echo "ok: a client certificate the servers do not trust is not served"

# --tls-ca alone: TLS without a client certificate, to a server that does
# not ask for one, checked against the CA and --static-identity; the files
# read again every --tls-refresh seconds.
cp "$pki/server.pem" "$pki/open.pem"
cp "$pki/server.key" "$pki/open.key"
start_server open open
open="$address"
"$call" --static "$open" --static-identity "$identity" --tls-ca "$pki/ca.pem" \
  --tls-refresh 0.5 "${method[@]}" --count 5 --json >"$tmp/open.json" ||
  fail "mesh-call --tls-ca alone exited $?: $(cat "$tmp/open.json")"
python3 - "$tmp/open.json" <<'PY' || fail "--tls-ca alone: $(cat "$tmp/open.json")"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["status"] == {"OK": 5}, report["status"]
PY
# Another identity expected of it: refused, both named.
"$call" --static "$open" --static-identity "other.$identity" \
  --tls-ca "$pki/ca.pem" "${method[@]}" --count 1 >"$tmp/open-other.out" 2>&1 ||
  fail "mesh-call exited $?: $(cat "$tmp/open-other.out")"
grep -qF "DNS:$identity" "$tmp/open-other.out" ||
  fail "--tls-ca alone, other identity: $(cat "$tmp/open-other.out")"
# A server that requires a client certificate refuses the connection.
"$call" --static "$good1" --tls-ca "$pki/ca.pem" "${method[@]}" --count 1 \
  --deadline 2000 >"$tmp/open-strict.out" 2>&1 ||
  fail "mesh-call exited $?: $(cat "$tmp/open-strict.out")"
grep -q "status: UNAVAILABLE 1" "$tmp/open-strict.out" ||
  fail "--tls-ca alone to a server requiring a certificate: $(cat "$tmp/open-strict.out")"
echo "ok: --tls-ca alone serves TLS without a client certificate"

# Linkerd discovery over mutual TLS: mesh-control-plane with the server's
# certificate, mesh-call checking it carries the identity.
cat >"$tmp/mesh.json" <<JSON
{"targets": {"books.local:7000": {"endpoints": [
  {"address": "$good1", "tls_identity": "$identity"},
  {"address": "$impostor", "tls_identity": "$identity"}]}}}
JSON
: >"$tmp/cp.out"
"$bin/mesh-control-plane" --config="$tmp/mesh.json" --listen=127.0.0.1:0 \
  --tls-cert "$pki/server.pem" --tls-key "$pki/server.key" \
  --tls-ca "$pki/ca.pem" >"$tmp/cp.out" 2>"$tmp/cp.err" &
pids+=("$!")
cp_address=""
for _ in $(seq 100); do
  cp_address="$(sed -n 's/.* on \(127\.0\.0\.1:[0-9]*\) .*/\1/p' "$tmp/cp.out" || true)"
  [[ -n "$cp_address" ]] && break
  sleep 0.1
done
[[ -n "$cp_address" ]] || fail "control plane printed no address: $(cat "$tmp/cp.err")"
grep -qF "over mutual TLS" "$tmp/cp.out" || fail "control plane: $(cat "$tmp/cp.out")"
"$call" --linkerd "$cp_address" --linkerd-identity "$identity" "${tls[@]}" \
  "${method[@]}" --count 20 --json >"$tmp/linkerd.json" ||
  fail "mesh-call --linkerd exited $?: $(cat "$tmp/linkerd.json")"
python3 - "$tmp/linkerd.json" "$good1" <<'PY' || fail "linkerd report: $(cat "$tmp/linkerd.json")"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["status"] == {"OK": 20}, report["status"]
used = {e["address"]: e["calls"] for e in report["endpoints"] if e["calls"]}
assert used == {sys.argv[2]: 20}, used
PY
echo "ok: Linkerd discovery over mutual TLS, endpoints' identities checked"
# Another identity for the destination service: no discovery.
got=0
"$call" --linkerd "$cp_address" --linkerd-identity "other.$identity" \
  "${tls[@]}" "${method[@]}" --count 1 --wait 1 >/dev/null 2>"$tmp/other.err" || got=$?
[[ "$got" -eq 1 ]] || fail "wrong --linkerd-identity exited $got, want 1"
echo "ok: a destination service with another identity is not used"

expect_exit() {
  local want="$1" got=0
  shift
  timeout 20 "$@" >/dev/null 2>"$tmp/stderr" || got=$?
  [[ "$got" -eq "$want" ]] || fail "$* exited $got, want $want"
  [[ -s "$tmp/stderr" ]] || fail "$* printed no message"
}
expect_exit 2 "$call" --static "$good1" "${method[@]}" --tls-cert "$pki/client.pem"
expect_exit 2 "$call" --static "$good1" "${method[@]}" --static-identity "$identity"
expect_exit 2 "$call" --linkerd "$cp_address" "${method[@]}" --tls-ca "$pki/ca.pem"
grep -qF -- "--tls-ca alone" "$tmp/stderr" || fail "--tls-ca alone with --linkerd: $(cat "$tmp/stderr")"
expect_exit 2 "$call" --static "$good1" "${method[@]}" --tls-refresh 5
expect_exit 2 "$call" --static "$good1" "${method[@]}" --tls-ca "$pki/ca.pem" --tls-refresh 0.001
expect_exit 2 "$call" --static "$good1" "${method[@]}" --tls-ca "$pki/ca.pem" --tls-refresh soon
expect_exit 2 "$server" --tls-cert "$pki/client.pem" --tls-key "$pki/server.key"
expect_exit 2 "$server" --tls-cert "$pki/client.pem"
# A key of another certificate fails set-up naming the problem.
expect_exit 1 "$call" --static "$good1" "${method[@]}" \
  --tls-cert "$pki/client.pem" --tls-key "$pki/server.key" --tls-ca "$pki/ca.pem"
grep -qF "is not the key of the certificate" "$tmp/stderr" ||
  fail "mismatched key: $(cat "$tmp/stderr")"
echo "ok: bad TLS flags and files are refused"
echo PASS

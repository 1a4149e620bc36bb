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
# --tls-ca refuses a client without a certificate; bad TLS flags exit 2.
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
# client certificates; sets `address`.
start_server() {
  local name=$1 out="$tmp/$1.out"
  : >"$out"
  "$server" --port 0 --tls-cert "$pki/$name.pem" --tls-key "$pki/$name.key" \
    --tls-ca "$pki/ca.pem" >"$out" 2>"$tmp/$name.err" &
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

got=0
"$call" --static "$impostor" --static-identity "$identity" "${tls[@]}" \
  "${method[@]}" --count 1 >"$tmp/impostor.out" 2>&1 || got=$?
grep -qF "expected '$identity'" "$tmp/impostor.out" ||
  fail "impostor alone: $(cat "$tmp/impostor.out")"
grep -qF "DNS:impostor.$identity" "$tmp/impostor.out" ||
  fail "impostor alone: $(cat "$tmp/impostor.out")"
echo "ok: the impostor alone is refused, both identities named"

# No identity of its own: plaintext to a TLS server, which never answers it.
"$call" --static "$good1" "${method[@]}" --count 1 --deadline 2000 \
  >"$tmp/plain.out" 2>&1 || true
grep -q "status: OK" "$tmp/plain.out" && fail "plaintext call succeeded: $(cat "$tmp/plain.out")"
echo "ok: a client without a certificate is not served"

expect_exit() {
  local want="$1" got=0
  shift
  "$@" >/dev/null 2>"$tmp/stderr" || got=$?
  [[ "$got" -eq "$want" ]] || fail "$* exited $got, want $want"
  [[ -s "$tmp/stderr" ]] || fail "$* printed no message"
}
expect_exit 2 "$call" --static "$good1" "${method[@]}" --tls-cert "$pki/client.pem"
expect_exit 2 "$call" --static "$good1" "${method[@]}" --static-identity "$identity"
expect_exit 2 "$server" --tls-cert "$pki/client.pem" --tls-key "$pki/server.key"
expect_exit 2 "$server" --tls-cert "$pki/client.pem"
# A key of another certificate fails set-up naming the problem.
expect_exit 1 "$call" --static "$good1" "${method[@]}" \
  --tls-cert "$pki/client.pem" --tls-key "$pki/server.key" --tls-ca "$pki/ca.pem"
grep -qF "is not the key of the certificate" "$tmp/stderr" ||
  fail "mismatched key: $(cat "$tmp/stderr")"
echo "ok: bad TLS flags and files are refused"
echo PASS

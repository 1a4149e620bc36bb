#!/usr/bin/env bash
# End-to-end test of mesh-call against two mesh-echo-server processes.
#
#   tests/cli/mesh_call_test.sh BUILD_DIR
#
# Starts two echo servers on ephemeral ports, sends 50 calls through
# `mesh-call --static ... --json` and checks the report (50 calls, all OK,
# both endpoints used); checks that a bad flag exits 2 and that a target with
# no reachable control plane fails set-up with 1. Then through
# mesh-control-plane: `--wait 0` calls at once and the calls wait for
# discovery, a GRPCRoute from its OutboundPolicies API splits and answers
# calls, a target that does not exist is named as such, and an oversized
# config file is refused. The processes are killed on exit, whatever
# happens.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
bin="$1/tools"
call="$bin/mesh-call"
server="$bin/mesh-echo-server"
for b in "$call" "$server"; do
  [[ -x "$b" ]] || { echo "FAIL: $b not built" >&2; exit 1; }
done

tmp="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Starts a server; sets `address` to the "127.0.0.1:PORT" it prints.
start_server() {
  local out="$tmp/server$1.out"
  : >"$out" # exists before the child's redirection opens it
  "$server" --port 0 --delay-ms 1 >"$out" 2>"$tmp/server$1.err" &
  pids+=("$!")
  address=""
  for _ in $(seq 100); do
    address="$(head -n 1 "$out" || true)"
    [[ -n "$address" ]] && return 0
    sleep 0.1
  done
  fail "echo server $1 printed no address: $(cat "$tmp/server$1.err")"
}

start_server 1
a="$address"
start_server 2
b="$address"
echo "echo servers at $a and $b"

common=(--static "$a,$b" --target echo.local:7000 --method /demo.Echo/Say)

"$call" "${common[@]}" --count 50 --concurrency 4 --data 68656c6c6f \
  --header 'X-Test: yes' --deadline 5000 --json >"$tmp/report.json" ||
  fail "mesh-call exited $?"
python3 - "$tmp/report.json" "$a" "$b" <<'EOF' || fail "bad JSON report: $(cat "$tmp/report.json")"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["target"] == "echo.local:7000", report["target"]
assert report["calls"] == 50, report["calls"]
assert report["not_finished"] == 0, report["not_finished"]
assert report["status"] == {"OK": 50}, report["status"]
used = {e["address"]: e["calls"] for e in report["endpoints"]}
assert set(used) == set(sys.argv[2:4]), used
assert all(n > 0 for n in used.values()), used
assert sum(used.values()) == 50, used
for key in ("p50", "p90", "p99", "p99.9", "max"):
    assert report["latency_ms"][key] >= 0, key
assert report["wall_seconds"] > 0 and report["calls_per_second"] > 0
EOF
echo "ok: 50 calls, all OK, both endpoints"

# The table form runs too.
"$call" "${common[@]}" --count 10 >"$tmp/table.txt" || fail "table run exited $?"
grep -q "status: OK 10" "$tmp/table.txt" || fail "table: $(cat "$tmp/table.txt")"
echo "ok: table"

# --metrics: the per-route counters agree with the calls made.
"$call" "${common[@]}" --count 12 --metrics >"$tmp/metrics.txt" ||
  fail "metrics run exited $?"
grep -qF 'route_request_total{authority="echo.local:7000",route="[default]"} 12' \
  "$tmp/metrics.txt" || fail "metrics: $(cat "$tmp/metrics.txt")"
grep -qF 'route_response_total{authority="echo.local:7000",route="[default]",classification="success",grpc_status="0"} 12' \
  "$tmp/metrics.txt" || fail "metrics: $(cat "$tmp/metrics.txt")"
echo "ok: per-route metrics"

# Each of these exits within seconds; one that does not is named (timeout
# gives 124) rather than left to ctest's timeout for the whole script.
expect_exit() {
  local want="$1"
  shift
  local got=0
  timeout 60 "$call" "$@" >/dev/null 2>"$tmp/stderr" || got=$?
  [[ "$got" -ne 124 ]] ||
    fail "mesh-call $* did not exit within 60 s; it said: $(cat "$tmp/stderr")"
  [[ "$got" -eq "$want" ]] || fail "mesh-call $* exited $got, want $want"
  [[ -s "$tmp/stderr" ]] || fail "mesh-call $* printed no message"
}
expect_exit 2 "${common[@]}" --no-such-flag
expect_exit 2 "${common[@]}" --count 0
expect_exit 2 "${common[@]}" --metrics --json
expect_exit 2 --static "$a" --target echo.local:7000  # no --method
# Nothing listens on port 1: discovery never answers within --wait.
expect_exit 1 --linkerd 127.0.0.1:1 --target echo.local:7000 \
  --method /demo.Echo/Say --wait 0.5
# A port gRPC would wrap (99999 - 65536 = 34463) is a bad flag, named.
expect_exit 2 --linkerd 127.0.0.1:99999 --target echo.local:7000 \
  --method /demo.Echo/Say --wait 0.5
grep -q "must be 1..65535" "$tmp/stderr" ||
  fail "--linkerd 127.0.0.1:99999 did not name the port: $(cat "$tmp/stderr")"
echo "ok: exit codes"

# The local control plane, serving a file.
cp_bin="$bin/mesh-control-plane"
[[ -x "$cp_bin" ]] || fail "$cp_bin not built"
# split.local:7000 has one endpoint of its own, and a GRPCRoute that splits
# demo.Echo between echo-a and echo-b, or answers PERMISSION_DENIED for a
# request with x-fault: 1.
cat >"$tmp/mesh.json" <<JSON
{"targets": {
  "echo.local:7000": {"endpoints": [{"address": "$a"}, {"address": "$b"}]},
  "echo-a.local:7000": {"endpoints": [{"address": "$a"}]},
  "echo-b.local:7000": {"endpoints": [{"address": "$b"}]},
  "split.local:7000": {"endpoints": [{"address": "$a"}], "policy": {
    "protocol": "grpc",
    "routes": [{"name": "echo-split", "rules": [
      {"matches": [{"service": "demo.Echo", "method": "Say",
                    "headers": [{"name": "x-fault", "exact": "1"}]}],
       "failure_injector": {"code": 7, "message": "refused by the policy"}},
      {"matches": [{"service": "demo.Echo"}],
       "backends": [{"authority": "echo-a.local:7000", "weight": 1},
                    {"authority": "echo-b.local:7000", "weight": 1}]}]}]}}
}}
JSON
: >"$tmp/cp.out"
"$cp_bin" --config="$tmp/mesh.json" --listen=127.0.0.1:0 >"$tmp/cp.out" \
  2>"$tmp/cp.err" &
pids+=("$!")
cp_address=""
for _ in $(seq 100); do
  cp_address="$(sed -n 's/.* on \(127\.0\.0\.1:[0-9]*\) .*/\1/p' "$tmp/cp.out" || true)"
  [[ -n "$cp_address" ]] && break
  sleep 0.1
done
[[ -n "$cp_address" ]] || fail "control plane printed no address: $(cat "$tmp/cp.err")"

# --wait 0: no wait before the first call; the calls wait for discovery.
"$call" --linkerd "$cp_address" --target echo.local:7000 --method /demo.Echo/Say \
  --wait 0 --count 20 --json >"$tmp/wait0.json" || fail "--wait 0 exited $?"
python3 - "$tmp/wait0.json" <<'EOF' || fail "--wait 0 report: $(cat "$tmp/wait0.json")"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["status"] == {"OK": 20}, report["status"]
EOF
echo "ok: --wait 0 calls at once and the calls wait for discovery"

# --linkerd-policy: the control plane's GRPCRoute splits split.local's calls
# between echo-a and echo-b (without it all go to split.local's one
# endpoint), and its failure injector answers x-fault requests.
policy=(--linkerd "$cp_address" --linkerd-policy "$cp_address"
  --source-workload '{"ns":"demo","pod":"cli-0"}' --target split.local:7000
  --method /demo.Echo/Say --wait 0)
"$call" "${policy[@]}" --count 40 --json >"$tmp/policy.json" ||
  fail "--linkerd-policy exited $?"
python3 - "$tmp/policy.json" "$a" "$b" <<'EOF' || fail "--linkerd-policy report: $(cat "$tmp/policy.json")"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["status"] == {"OK": 40}, report["status"]
used = {e["address"]: e["calls"] for e in report["endpoints"]}
assert set(used) == set(sys.argv[2:4]), used
EOF
"$call" "${policy[@]}" --count 5 --header 'x-fault: 1' --json \
  >"$tmp/fault.json" || fail "--linkerd-policy with x-fault exited $?"
python3 - "$tmp/fault.json" <<'EOF' || fail "x-fault report: $(cat "$tmp/fault.json")"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["status"] == {"PERMISSION_DENIED": 5}, report["status"]
EOF
# No policy server listening: the first failure of its stream lets the calls
# go by the profile (split.local's own endpoint) rather than wait.
"$call" --linkerd "$cp_address" --linkerd-policy 127.0.0.1:1 \
  --target split.local:7000 \
  --method /demo.Echo/Say --wait 0 --count 10 --json >"$tmp/fallback.json" ||
  fail "--linkerd-policy fallback exited $?"
python3 - "$tmp/fallback.json" "$a" <<'EOF' || fail "fallback report: $(cat "$tmp/fallback.json")"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["status"] == {"OK": 10}, report["status"]
used = {e["address"] for e in report["endpoints"]}
assert used == {sys.argv[2]}, used
EOF
expect_exit 2 --linkerd-policy 127.0.0.1:1 --static 127.0.0.1:1 \
  --target echo.local:7000 --method /demo.Echo/Say
grep -qF -- "--linkerd-policy: only goes with --linkerd" "$tmp/stderr" ||
  fail "--linkerd-policy without --linkerd: $(cat "$tmp/stderr")"
echo "ok: --linkerd-policy: the GRPCRoute split and injector; the profile without a policy server"

# A target the control plane says does not exist: named as such, at once.
got=0
"$call" --linkerd "$cp_address" --target nowhere.local:80 \
  --method /demo.Echo/Say --wait 30 >/dev/null 2>"$tmp/nowhere.err" || got=$?
[[ "$got" -eq 1 ]] || fail "nowhere.local:80 exited $got, want 1"
grep -qF "target 'nowhere.local:80' does not exist" "$tmp/nowhere.err" ||
  fail "nowhere.local:80: $(cat "$tmp/nowhere.err")"
echo "ok: a target that does not exist is named"

# A config file over --max-config-bytes is refused at start, naming the limit.
got=0
"$cp_bin" --config="$tmp/mesh.json" --listen=127.0.0.1:0 \
  --max-config-bytes=10 >/dev/null 2>"$tmp/big.err" || got=$?
[[ "$got" -eq 1 ]] || fail "oversized config exited $got, want 1"
grep -qF "over the limit of 10 (--max-config-bytes)" "$tmp/big.err" ||
  fail "oversized config: $(cat "$tmp/big.err")"
got=0
"$cp_bin" --config="$tmp/mesh.json" --max-config-bytes=lots \
  >/dev/null 2>"$tmp/flag.err" || got=$?
[[ "$got" -eq 2 ]] || fail "bad --max-config-bytes exited $got, want 2"
echo "ok: mesh-control-plane refuses oversized files"
echo PASS

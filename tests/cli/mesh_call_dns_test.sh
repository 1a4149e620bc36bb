#!/usr/bin/env bash
# End-to-end test of `mesh-call --dns` against dnsmasq: the example of
# docs/dns.md, run.
#
#   tests/cli/mesh_call_dns_test.sh BUILD_DIR
#
# Starts dnsmasq (Debian's dnsmasq-base) on a free loopback UDP port,
# authoritative for mesh.test with a TTL of 1 s, answering from a hosts file
# it reads again on SIGHUP, and two mesh-echo-server processes on 127.0.0.1
# and 127.0.0.2 at one port. mesh-call --dns --dns-server calls
# echo.mesh.test while its record moves from 127.0.0.1 to 127.0.0.2: the
# per-second lines show the calls follow it with no error. Then a name that
# does not exist fails set-up naming it, and --dns-server without --dns or
# --linkerd is a bad flag. Every wait is bounded; the processes are killed
# on exit, whatever happens (mesh-call runs under `timeout`, so the script
# ends well within ctest's limit).
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
dnsmasq=""
for d in /usr/sbin/dnsmasq /usr/bin/dnsmasq; do
  [[ -x "$d" ]] && dnsmasq="$d" && break
done
[[ -n "$dnsmasq" ]] || { echo "FAIL: dnsmasq not installed (dnsmasq-base; scripts/install-deps.sh)" >&2; exit 1; }

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

# Waits (up to 10 s) until FILE has a line matching the extended regex.
wait_for_line() {
  local file="$1" regex="$2"
  for _ in $(seq 100); do
    grep -qE "$regex" "$file" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# dnsmasq on a free UDP port (taken between the probe and its bind: retried).
hosts="$tmp/hosts"
: >"$hosts"
dns_port=""
for attempt in 1 2 3 4 5; do
  port="$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  : >"$tmp/dns.log"
  "$dnsmasq" --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
    --no-poll --bind-interfaces --listen-address=127.0.0.1 --port="$port" \
    --addn-hosts="$hosts" --local=/mesh.test/ --local-ttl=1 \
    --pid-file="$tmp/dns.pid" --user="$(id -un)" --log-facility="$tmp/dns.log" \
    2>"$tmp/dns.err" &
  dns_pid=$!
  started=""
  for _ in $(seq 100); do
    grep -q "read $hosts" "$tmp/dns.log" 2>/dev/null && started=yes && break
    kill -0 "$dns_pid" 2>/dev/null || break # exited: the port was taken
    sleep 0.1
  done
  if [[ -n "$started" ]]; then
    pids+=("$dns_pid")
    dns_port="$port"
    break
  fi
  kill "$dns_pid" 2>/dev/null || true
  wait "$dns_pid" 2>/dev/null || true
done
[[ -n "$dns_port" ]] || fail "dnsmasq did not start: $(cat "$tmp/dns.err")"

# Points echo.mesh.test at $1 and waits until dnsmasq has read it.
set_record() {
  local before
  before="$(grep -c "read $hosts" "$tmp/dns.log" || true)"
  echo "$1 echo.mesh.test" >"$hosts.new"
  mv "$hosts.new" "$hosts"
  kill -HUP "$dns_pid"
  for _ in $(seq 100); do
    [[ "$(grep -c "read $hosts" "$tmp/dns.log" || true)" -gt "$before" ]] && return 0
    sleep 0.1
  done
  fail "dnsmasq did not read its hosts file again"
}

# Echo servers on 127.0.0.1 and 127.0.0.2 at one port.
start_server() {
  local out="$tmp/server-$1.out"
  : >"$out"
  "$server" --host "$1" --port "$2" >"$out" 2>"$tmp/server-$1.err" &
  pids+=("$!")
  wait_for_line "$out" ":[0-9]+$" || fail "echo server on $1: $(cat "$tmp/server-$1.err")"
}
start_server 127.0.0.1 0
echo_port="$(head -n 1 "$tmp/server-127.0.0.1.out" | sed 's/.*://')"
start_server 127.0.0.2 "$echo_port"
echo "dnsmasq on 127.0.0.1:$dns_port; echo servers on 127.0.0.1 and 127.0.0.2 at $echo_port"

set_record 127.0.0.1
timeout 60 "$call" --dns --dns-server "127.0.0.1:$dns_port" \
  --target "echo.mesh.test:$echo_port" --method /demo.Echo/Say \
  --duration 50 --interval 0.5 --concurrency 2 --deadline 5000 \
  >"$tmp/follow.out" 2>"$tmp/follow.err" &
call_pid=$!
pids+=("$call_pid")
wait_for_line "$tmp/follow.out" "127\.0\.0\.1:$echo_port" ||
  fail "no call reached 127.0.0.1: $(cat "$tmp/follow.out" "$tmp/follow.err")"
lines_before="$(wc -l <"$tmp/follow.out")"
set_record 127.0.0.2
# Within the TTL (1 s) plus the refresh floor (1 s): every call of a line
# goes to 127.0.0.2.
followed=""
for _ in $(seq 100); do
  # Read whole, then matched: no pipe whose writer could die of SIGPIPE.
  later="$(tail -n +"$((lines_before + 1))" "$tmp/follow.out")"
  if grep -qE "^\[ *[0-9.]+s\]  127\.0\.0\.2:$echo_port 100%" <<<"$later"; then
    followed=yes
    break
  fi
  sleep 0.1
done
kill -INT "$call_pid" 2>/dev/null || true
got=0
wait "$call_pid" || got=$?
[[ "$got" -eq 0 ]] || fail "mesh-call exited $got: $(cat "$tmp/follow.err")"
[[ -n "$followed" ]] || fail "the calls did not follow the record: $(cat "$tmp/follow.out")"
lines="$(grep -E "^\[" "$tmp/follow.out" || true)"
if grep -vqE "\(([0-9]+) calls, 0 errors\)" <<<"$lines"; then
  fail "calls failed while the record moved: $(cat "$tmp/follow.out")"
fi
cat "$tmp/follow.out"
echo "ok: the calls followed echo.mesh.test from 127.0.0.1 to 127.0.0.2, no error"

# A name that does not exist: set-up fails, naming it.
got=0
timeout 30 "$call" --dns --dns-server "127.0.0.1:$dns_port" \
  --target "missing.mesh.test:$echo_port" --method /demo.Echo/Say \
  --wait 10 >/dev/null 2>"$tmp/missing.err" || got=$?
[[ "$got" -eq 1 ]] || fail "missing.mesh.test exited $got, want 1"
grep -qF "target 'missing.mesh.test:$echo_port' does not exist" "$tmp/missing.err" ||
  fail "missing.mesh.test: $(cat "$tmp/missing.err")"
echo "ok: a name that does not exist is named"

got=0
"$call" --static "127.0.0.1:$echo_port" --dns-server "127.0.0.1:$dns_port" \
  --target a:1 --method /demo.Echo/Say >/dev/null 2>"$tmp/flag.err" || got=$?
[[ "$got" -eq 2 ]] || fail "--dns-server with --static exited $got, want 2"
grep -qF -- "--dns-server: goes with --dns or --linkerd" "$tmp/flag.err" ||
  fail "--dns-server with --static: $(cat "$tmp/flag.err")"
echo "ok: --dns-server alone is a bad flag"
echo PASS

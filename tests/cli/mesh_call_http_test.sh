#!/usr/bin/env bash
# End-to-end test of `mesh-call --http` (plain HTTP through libcurl and
# mesh::curl) against two nghttpd processes (Debian's nghttp2-server: real
# HTTP/2 servers over cleartext) serving one document root.
#
#   tests/cli/mesh_call_http_test.sh BUILD_DIR
#
# Sends 40 GETs through `mesh-call --static ... --http2 --http GET:/books/1
# --json` and checks the report (40 answers, all HTTP 200, both endpoints
# used); a missing document is reported as 404; a POST with --body gets its
# answer; `mesh-tap` shows the HTTP requests of a run with --tap (method,
# path, :status); bad flag combinations exit 2. The processes are killed on
# exit, whatever happens.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
bin="$1/tools"
call="$bin/mesh-call"
tap="$bin/mesh-tap"
for b in "$call" "$tap"; do
  [[ -x "$b" ]] || { echo "FAIL: $b not built" >&2; exit 1; }
done
command -v nghttpd >/dev/null || { echo "FAIL: nghttpd missing (Debian: nghttp2-server)" >&2; exit 1; }

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

mkdir -p "$tmp/www/books"
printf 'book one' >"$tmp/www/books/1"

# start_nghttpd DOCROOT: sets `address` to "127.0.0.1:PORT".
. "$(dirname "$0")/../../scripts/nghttpd.sh"
start_server() { start_nghttpd "$tmp/www" || fail "nghttpd did not start"; }

start_server
a="$address"
start_server
b="$address"
echo "nghttpd at $a and $b"

common=(--static "$a,$b" --http2 --target books:7001)

"$call" "${common[@]}" --http GET:/books/1 --count 40 --concurrency 4 \
  --json >"$tmp/report.json" || fail "mesh-call exited $?"
python3 - "$tmp/report.json" "$a" "$b" <<'EOF' || fail "report: $(cat "$tmp/report.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["method"] == "GET /books/1", r["method"]
assert r["finished"] == 40, r
assert r["statuses"] == {"200": 40}, r["statuses"]
calls = {e["address"]: e["calls"] for e in r["endpoints"]}
assert set(calls) == {sys.argv[2], sys.argv[3]}, calls
assert all(n > 0 for n in calls.values()), calls
EOF

"$call" "${common[@]}" --http GET:/books/404 --count 5 --json \
  >"$tmp/missing.json" || fail "mesh-call exited $?"
grep -q '"statuses":{"404":5}' "$tmp/missing.json" ||
  fail "404s not reported: $(cat "$tmp/missing.json")"

# nghttpd answers a POST to a document as a GET; the body goes out with it.
"$call" "${common[@]}" --http POST:/books/1 --body 'hello' --count 3 --json \
  >"$tmp/post.json" || fail "mesh-call exited $?"
grep -q '"statuses":{"200":3}' "$tmp/post.json" ||
  fail "POST not answered: $(cat "$tmp/post.json")"

# mesh-tap shows the requests of a run that serves tap.
"$call" "${common[@]}" --http GET:/books/1 --duration 6 --rate 20 \
  --tap 127.0.0.1:0 >"$tmp/tapped.out" 2>"$tmp/tapped.err" &
pids+=("$!")
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*port \([0-9][0-9]*\)$/\1/p' "$tmp/tapped.err")
  [[ -n "$port" ]] && break
  sleep 0.05
done
[[ -n "$port" ]] || fail "mesh-call --tap printed no port: $(cat "$tmp/tapped.err")"
timeout 10 "$tap" "127.0.0.1:$port" --limit 3 >"$tmp/tap.out" 2>&1 ||
  fail "mesh-tap exited $?: $(cat "$tmp/tap.out")"
grep -q '^req .*:method=GET :authority=books:7001 :path=/books/1' "$tmp/tap.out" ||
  fail "no request line: $(cat "$tmp/tap.out")"
grep -q '^rsp .*:status=200' "$tmp/tap.out" || fail "no response line: $(cat "$tmp/tap.out")"
grep -q '^end .*response-length=8B' "$tmp/tap.out" || fail "no end line: $(cat "$tmp/tap.out")"

expect_bad() {
  if "$call" "$@" >/dev/null 2>"$tmp/bad.err"; then
    fail "mesh-call $* succeeded"
  else
    got=$?
  fi
  [[ "$got" -eq 2 ]] || fail "mesh-call $* exited $got, want 2"
}
expect_bad "${common[@]}" --http GET:/x --method /a.B/C
expect_bad "${common[@]}" --http books
expect_bad --static "$a" --target books:7001 --method /a.B/C --body x
expect_bad --static "$a" --target books:7001 --method /a.B/C --http2

echo "PASS"

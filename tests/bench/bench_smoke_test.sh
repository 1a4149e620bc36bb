#!/usr/bin/env bash
# Smoke test of the benchmark pipeline (scripts/bench.sh's programs and
# scripts/bench/report.sh), with tiny settings: no figure is judged, only
# that every program runs, writes what the report needs, and that the report
# fills every generated part of a copy of docs/benchmarks.md without
# touching the rest.
#
#   tests/bench/bench_smoke_test.sh BENCH_BIN_DIR SOURCE_DIR
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BENCH_BIN_DIR SOURCE_DIR" >&2
  exit 2
fi
bin="$1" src="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
out="$tmp/results"
mkdir -p "$out"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# A bad flag is refused by name, and nothing is measured.
if "$bin/mesh_memory_bench" --bogus 1 2>"$tmp/err"; then
  fail "mesh_memory_bench accepted --bogus"
fi
grep -q "unknown flag --bogus" "$tmp/err" || fail "no 'unknown flag' message: $(cat "$tmp/err")"
if "$bin/mesh_overhead_bench" --concurrency 0 2>"$tmp/err"; then
  fail "mesh_overhead_bench accepted --concurrency 0"
fi
grep -q "bad value for --concurrency" "$tmp/err" || fail "no 'bad value' message: $(cat "$tmp/err")"

timeout 60 "$bin/mesh_micro_bench" --benchmark_min_time=0.001 \
  --benchmark_repetitions=2 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/micro.json" --benchmark_out_format=json \
  >/dev/null 2>"$tmp/micro.err" || fail "mesh_micro_bench: $(cat "$tmp/micro.err")"
timeout 60 "$bin/mesh_tail_latency_bench" --out "$out" --rate 200 \
  --duration 0.6 --warmup 0.1 >/dev/null
timeout 60 "$bin/mesh_overhead_bench" --out "$out" --calls 100 --rounds 1 \
  --warmup 20 --many 3 --concurrency 1,2 >/dev/null
timeout 60 "$bin/mesh_memory_bench" --out "$out" --endpoints 100,1000 >/dev/null
timeout 60 "$bin/mesh_churn_bench" --out "$out" --endpoints 2000 --rounds 1 \
  --phase_seconds 0.5 --warmup_seconds 0.1 >/dev/null
timeout 60 "$bin/mesh_tap_load_bench" --out "$out" --calls 50 --rounds 1 \
  --warmup 10 --subscribers 5 >/dev/null
timeout 60 "$bin/mesh_stub_bench" --out "$out" --calls 40 --rounds 1 \
  --warmup 10 --messages 200 --concurrency 1,2 >/dev/null
timeout 60 "$bin/mesh_tls_bench" --out "$out" --calls 40 --rounds 1 \
  --warmup 10 --connects 2 --concurrency 1,2 >/dev/null
# Plain HTTP through mesh::curl against curl alone and the proxy hop, when
# the build has mesh_curl: every variant at both concurrencies.
if [[ -x "$bin/mesh_curl_bench" ]]; then
  timeout 60 "$bin/mesh_curl_bench" --out "$out" --requests 40 --rounds 1 \
    --concurrency 1,2 >/dev/null || fail "mesh_curl_bench failed"
  for variant in curl mesh proxy_hop; do
    for c in 1 2; do
      grep -qE "^\| $c \| $variant \| 40 \|" "$out/curl_overhead.md" ||
        fail "curl_overhead.md has no row for '$variant' at $c in flight"
    done
  done
fi
# The admin page's cost: the three variants, each a row.
timeout 60 "$bin/mesh_admin_bench" --out "$out" --calls 40 --rounds 1 \
  --warmup 10 >/dev/null || fail "mesh_admin_bench failed"
for variant in "none (no admin page)" "idle (page served" "open (one browser"; do
  grep -qF "| $variant" "$out/admin.md" || fail "admin.md has no row '$variant'"
done
# Hedging: the four runs, each a row.
timeout 60 "$bin/mesh_hedge_bench" --out "$out" --rate 200 --duration 0.6 \
  --warmup 0.1 >/dev/null || fail "mesh_hedge_bench failed"
for run in "no stalls, no hedging | 120 |" "stalls, no hedging | 120 |" \
  "stalls, hedged after " "stalls, hedged, budget empty | 120 |"; do
  grep -qF "| $run" "$out/hedge_tail.md" || fail "hedge_tail.md has no row '$run'"
done
# Big configurations, small: every step is ACKed (a NACK or a missing ACK
# ends the program non-zero) and printed.
timeout 60 "$bin/mesh_big_config_bench" --vhosts 3 --routes 2 --endpoints 10 \
  --nested 40 >"$out/big_config.md" || fail "mesh_big_config_bench failed"

# What each program reports, by the rows it must have.
expect() { # file, fixed string
  grep -qF -- "$2" "$out/$1" || fail "$1 has no '$2'"
}
# mesh_call_cost_bench (scripts/call-cost.sh's program, run there under
# callgrind): its backend in another process, each variant a few calls.
"$bin/mesh_call_cost_bench" --serve "$tmp/cost.addr" &
cost_server=$!
for _ in $(seq 100); do [[ -s "$tmp/cost.addr" ]] && break; sleep 0.1; done
[[ -s "$tmp/cost.addr" ]] || fail "mesh_call_cost_bench --serve wrote no address"
for variant in direct_stub direct_stub_mixed direct_generic mesh_callraw \
  mesh_call mesh_stub; do
  line=$(timeout 60 "$bin/mesh_call_cost_bench" --backend "$(cat "$tmp/cost.addr")" \
    --variant "$variant" --calls 20 --warmup 5 --concurrency 2) ||
    { kill "$cost_server"; fail "mesh_call_cost_bench --variant $variant failed"; }
  grep -q "^variant=$variant calls=20 in_flight=2 nvcsw_per_call=" <<<"$line" ||
    { kill "$cost_server"; fail "mesh_call_cost_bench printed: $line"; }
done
kill "$cost_server"
wait "$cost_server" 2>/dev/null || true

expect big_config.md "| RDS 3 x 2 routes ("
expect big_config.md "| bootstrap nesting 40 '[' (refused) |"
for balancer in "mesh P2C Peak-EWMA" 'gRPC `round_robin`' 'gRPC `pick_first`' \
  "mesh round robin" "mesh P2C, all healthy"; do
  expect tail_latency.md "| $balancer | 120 | 100.00 % |"
done
for variant in 'raw `grpc::Channel`' '`mesh::Channel`, 1 endpoint' \
  '`mesh::Channel`, 3 endpoints' 'gRPC `round_robin`, 3 endpoints' \
  'nghttpx h2c hop'; do
  for c in 1 2; do
    grep -F "| $variant" "$out/overhead.md" | grep -qF " | $c | 100 | 100.00 % |" ||
      fail "overhead.md has no row for '$variant' at concurrency $c"
  done
done
expect memory.md "| static | 1,000 |"
expect memory.md "| xDS | 1,000 |"
expect churn.md "| quiet (no updates) |"
expect churn.md "| churn: Linkerd Destination stream"
expect tap_load.md "| 5 | **"
for api in sync callback; do
  for c in 1 2; do
    expect stub.md "| $api unary p50 (ms) | $c |"
    expect stub.md "| $api unary calls/s | $c |"
  done
done
expect stub.md "| bidi messages/s | 1 stream |"
for c in 1 2; do
  expect tls.md "| unary p50 (ms), established connection | $c |"
  expect tls.md "| unary calls/s | $c |"
done
expect tls.md "| first call on a new connection (ms) | 1 |"
expect tls.md "| of which TLS: credentials and handshake (ms) | 1 |"
[[ $(grep -c '^| `BM_' <(jq -r -f "$src/scripts/bench/micro.jq" "$out/micro.json")) -eq \
  $("$bin/mesh_micro_bench" --benchmark_list_tests | wc -l) ]] ||
  fail "micro.jq does not list every benchmark"

# The report over a copy of the document (scripts/bench.sh writes
# machine.md itself).
echo "- smoke test" >"$out/machine.md"
cp "$src/docs/benchmarks.md" "$tmp/doc.md"
"$src/scripts/bench/report.sh" "$out" "$tmp/doc.md" "$tmp/img" >/dev/null
# Goal rows: 10 micro, 2 tail latency, 3 per overhead concurrency, 2 memory
# (static, xDS), 4 per churn mode (churn, reset), 1 tap load, 2 per stub
# API and concurrency and 1 bidi, 1 per TLS concurrency, 4 hedging; each
# with a verdict.
rows=$(tail -n +3 "$out/goals.md" | wc -l)
[[ $rows -eq 44 ]] || fail "goals.md has $rows rows, not 44"
bad=$(tail -n +3 "$out/goals.md" |
  grep -cvE '\| (met|\*\*missed\*\* by -?[0-9.]+(×| points)|\*\*missed\*\*: [^|]+) \|$' || true)
[[ $bad -eq 0 ]] || fail "goals.md has $bad rows without a verdict"
for name in machine goals micro tail_latency overhead memory churn tap_load stub tls \
  hedge_tail; do
  section=$(sed -n "/^<!-- bench:$name begin -->\$/,/^<!-- bench:$name end -->\$/p" "$tmp/doc.md")
  [[ $(printf '%s\n' "$section" | wc -l) -gt 3 ]] || fail "section $name left empty"
  printf '%s\n' "$section" | grep -qF -- "$(head -1 "$out/$name.md")" ||
    fail "section $name does not hold $name.md"
done
outside() { sed '/^<!-- bench:[a-z_]* begin -->$/,/^<!-- bench:[a-z_]* end -->$/d' "$1"; }
diff <(outside "$src/docs/benchmarks.md") <(outside "$tmp/doc.md") >/dev/null ||
  fail "the report changed text outside the generated sections"
for plot in tail_latency overhead churn hedge_tail; do
  [[ $(head -c 4 "$tmp/img/$plot.png" | od -An -tx1 | tr -d ' ') == 89504e47 ]] ||
    fail "$plot.png is not a PNG"
done
# Regenerating is idempotent: a second report over the result changes
# nothing.
cp "$tmp/doc.md" "$tmp/doc2.md"
"$src/scripts/bench/report.sh" "$out" "$tmp/doc2.md" "$tmp/img" >/dev/null
cmp -s "$tmp/doc.md" "$tmp/doc2.md" || fail "a second report changed the document"

# A document that lost an end marker is refused and left as it was.
grep -vx '<!-- bench:churn end -->' "$src/docs/benchmarks.md" >"$tmp/broken.md"
cp "$tmp/broken.md" "$tmp/broken_before.md"
if "$src/scripts/bench/report.sh" "$out" "$tmp/broken.md" "$tmp/img" 2>"$tmp/err"; then
  fail "report accepted a document without its churn end marker"
fi
grep -q "bench:churn end" "$tmp/err" || fail "the refusal does not name the marker: $(cat "$tmp/err")"
cmp -s "$tmp/broken.md" "$tmp/broken_before.md" || fail "a refused report changed the document"

echo "bench smoke: the programs, report and plots OK"

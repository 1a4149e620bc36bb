# Google Benchmark JSON (run with --benchmark_repetitions=N
# --benchmark_report_aggregates_only=true) -> Markdown for docs/benchmarks.md.
#   jq -r -f micro.jq micro.json                    the table of medians
#   jq -r --arg part goals -f micro.jq micro.json   the goal rows
# Times are medians over the repetitions; "cv" is the coefficient of
# variation of real time across them.

def ns: .real_time * ({"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[.time_unit]);
def cpu_ns: .cpu_time * ({"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[.time_unit]);
def fmt: if . >= 1e6 then "\(. / 1e4 | round / 100) ms"
         elif . >= 1e3 then "\(. / 10 | round / 100) µs"
         elif . >= 100 then "\(round) ns"
         else "\(. * 10 | round / 10) ns" end;

[.benchmarks[] | select(.run_type == "aggregate")] as $aggregates
| ($aggregates | map(select(.aggregate_name == "median"))
   | map({key: .run_name, value: .}) | from_entries) as $median
| ($aggregates | map(select(.aggregate_name == "cv"))
   | map({key: .run_name, value: .real_time}) | from_entries) as $cv
| def t($name): $median[$name] | ns;
  def row($goal; $measured; $met; $by):
    "| micro: \($goal) | \($measured) | " +
    (if $met then "met" else "**missed** by \($by)" end) + " |";
  def ratio($a; $b): ($a / $b * 10 | round / 10 | tostring) + "×";
  if ($ARGS.named.part // "table") == "goals" then
    (t("BM_PickRelease/P2C/1000/real_time/threads:1")) as $pick
    | (t("BM_PickRelease/P2C/10/real_time/threads:1")) as $pick10
    | (t("BM_PickRelease/P2C/100000/real_time/threads:1")) as $pick100k
    | (t("BM_RingHashPick/1000/real_time/threads:1")) as $ring
    | ([t("BM_ResetApply10k/disjoint:0"), t("BM_ResetApply10k/disjoint:1")]
       | max) as $reset
    | (t("BM_TapNoSubscriber") - t("BM_TapBareInner")) as $tap_idle
    | ([t("BM_TapRejectingSubscriber/match:0"),
        t("BM_TapRejectingSubscriber/match:1"),
        t("BM_TapRejectingSubscriber/match:2")] | max) as $tap_reject
    | ([t("BM_TapMatchingSubscriber/headers:0"),
        t("BM_TapMatchingSubscriber/headers:1")] | max) as $tap_match
    | (t("BM_XdsEdsPushOverStream/10000/real_time")) as $eds_push
    | (t("BM_XdsEdsApply10k")) as $xds_apply
    | (t("BM_XdsRouteMatch10thOf10")) as $xds_route
    | "| goal | measured | verdict |", "|---|---|---|",
      row("P2C pick + release ≤ 50 ns at 1,000 endpoints"; "**\($pick | fmt)**";
          $pick <= 50; ratio($pick; 50)),
      row("P2C pick + release flat in endpoint count (100k ≤ 1.5 × 10)";
          "\($pick10 | fmt) → \($pick100k | fmt) = **\(ratio($pick100k; $pick10))**";
          $pick100k <= 1.5 * $pick10; ratio($pick100k; 1.5 * $pick10)),
      row("ring hash pick (hash given) + release ≤ 100 ns at 1,000 endpoints";
          "**\($ring | fmt)**"; $ring <= 100; ratio($ring; 100)),
      row("Reset of 10,000 endpoints ≤ 10 ms"; "**\($reset | fmt)** (worse of two)";
          $reset <= 1e7; ratio($reset; 1e7)),
      row("tap with nobody watching (TapSwitch) ≤ 5 ns over the bare call";
          "**\($tap_idle | fmt)** over"; $tap_idle <= 5; ratio($tap_idle; 5)),
      row("tap, one subscriber that does not match ≤ 100 ns";
          "**\($tap_reject | fmt)** (worst of three matches)";
          $tap_reject <= 100; ratio($tap_reject; 100)),
      row("tap, one matching subscriber ≤ 1 µs per request";
          "**\($tap_match | fmt)** (worse of two)"; $tap_match <= 1000;
          ratio($tap_match; 1000)),
      row("EDS push of a 10,000-endpoint target ≤ 50 ms (SetConfig to the ADS client's read)";
          "**\($eds_push | fmt)**"; $eds_push <= 5e7; ratio($eds_push; 5e7)),
      row("xDS client: EDS update of 10,000 endpoints applied ≤ 10 ms (wire bytes to the balancer)";
          "**\($xds_apply | fmt)**"; $xds_apply <= 1e7; ratio($xds_apply; 1e7)),
      row("xDS client: route match of the 10th of 10 routes with header matchers ≤ 1 µs";
          "**\($xds_route | fmt)**"; $xds_route <= 1000; ratio($xds_route; 1000))
  else
    "| benchmark | real time | CPU time | cv | label |", "|---|---|---|---|---|",
    ($aggregates | map(select(.aggregate_name == "median"))[]
     | "| `\(.run_name)` | \(ns | fmt) | \(cpu_ns | fmt) | " +
       "\(($cv[.run_name] // 0) * 1000 | round / 10) % | \(.label // "") |")
  end

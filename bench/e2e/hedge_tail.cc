// mesh_hedge_bench: the tail that hedged requests cut, side by side.
//
// In one process: 10 EchoBackends on 127.0.0.1 answer after `--delay_ms`
// plus up to `--jitter_ms` of uniform jitter, and every request, whichever
// backend it reaches, stalls `--stall_ms` more with probability `--stall`
// (a GC pause, a cold cache: slowness per request, which no choice of
// endpoint avoids). An open-loop load at `--rate` calls per second runs
// through a fresh mesh::Channel per run, after `--warmup` unmeasured
// seconds. The runs:
//   stall_free      no stalls, no hedging (the baseline)
//   no_hedging      stalls, no hedging
//   hedged          stalls; a hedge (2 attempts at most) after the stall-free
//                   run's 95th percentile
//   budget_empty    the same policy under a retry budget that allows none
// Every request a backend received is counted: the requests beyond the
// calls are the hedges' cost. Prints a table and the goal rows; writes
// hedge_tail.csv, hedge_tail_curve.csv, hedge_tail.md and
// hedge_tail_goals.md into `--out`. scripts/bench.sh runs it and plots.
//
//   mesh_hedge_bench --out results/ [--rate 500] [--duration 10]
//
// Exits 1 if a backend cannot start or a run cannot be set up.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/grpc_caller.h"
#include "bench/e2e/latency_stats.h"
#include "bench/e2e/open_loop.h"
#include "mesh/mesh.h"
#include "tools/common/echo_backend.h"

namespace mesh::bench {
namespace {

struct Flags {
  std::string out = "results";
  double rate = 500;         // calls started per second
  double duration_s = 10;    // measured seconds per run
  double warmup_s = 1;       // unmeasured seconds before each run
  int backends = 10;         // echo backends
  double delay_ms = 2;       // service time: delay_ms + U(0, jitter_ms)
  double jitter_ms = 2;      //
  double stall = 0.05;       // each request's chance of a stall
  double stall_ms = 100;     // and its length
  double timeout_ms = 5000;  // per-call deadline
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  ParseFlagsOrDie(
      argc, argv,
      {{"out", "DIR", TextFlag(&f.out)},
       {"rate", "N", RealFlag(&f.rate, Lowest::kZero)},
       {"duration", "SECONDS", RealFlag(&f.duration_s, Lowest::kZero)},
       {"warmup", "SECONDS", RealFlag(&f.warmup_s, Lowest::kZero)},
       {"backends", "N", IntFlag(&f.backends)},
       {"delay_ms", "MS", RealFlag(&f.delay_ms, Lowest::kZero)},
       {"jitter_ms", "MS", RealFlag(&f.jitter_ms, Lowest::kZero)},
       {"stall", "P", RealFlag(&f.stall, Lowest::kZero)},
       {"stall_ms", "MS", RealFlag(&f.stall_ms, Lowest::kZero)},
       {"timeout_ms", "MS", RealFlag(&f.timeout_ms, Lowest::kZero)}});
  if (f.rate <= 0 || f.duration_s <= 0 || f.backends < 2 || f.stall > 1 ||
      f.timeout_ms <= 0) {
    DieOfFlags(
        "need --rate > 0, --duration > 0, --backends >= 2, --stall <= 1, "
        "--timeout_ms > 0");
  }
  return f;
}

struct Outcome {
  LatencyStats stats;
  int64_t requests = 0;  // received by the backends during the measured run

  // The requests beyond the calls, as a share of the calls.
  double Extra() const {
    return stats.calls() > 0 ? static_cast<double>(requests - stats.calls()) /
                                   static_cast<double>(stats.calls())
                             : 0;
  }
};

std::string ResultsTable(const std::vector<Outcome>& runs,
                         const std::vector<std::string>& labels) {
  MarkdownTable table({"run", "calls", "success", "p50", "p90", "p95", "p99",
                       "p99.9", "requests sent", "extra"});
  auto ms = [](double v) { return absl::StrFormat("%.2f ms", v); };
  for (size_t i = 0; i < runs.size(); ++i) {
    const LatencyStats& s = runs[i].stats;
    table.AddRow({labels[i], Thousands(s.calls()),
                  absl::StrFormat("%.2f %%", 100.0 * s.success_rate()),
                  ms(s.Percentile(50)), ms(s.Percentile(90)),
                  ms(s.Percentile(95)), ms(s.Percentile(99)),
                  ms(s.Percentile(99.9)), Thousands(runs[i].requests),
                  absl::StrFormat("%+.1f %%", 100 * runs[i].Extra())});
  }
  return table.ToString();
}

std::string GoalRows(const Outcome& stall_free, const Outcome& none,
                     const Outcome& hedged, const Outcome& empty) {
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  const double free_p99 = stall_free.stats.Percentile(99);
  const double none_p99 = none.stats.Percentile(99);
  const double hedged_p99 = hedged.stats.Percentile(99);
  const double vs_none = ratio(hedged_p99, none_p99);
  const double vs_free = ratio(hedged_p99, free_p99);
  const double extra = hedged.Extra();
  const int64_t empty_extra = empty.requests - empty.stats.calls();
  MarkdownTable rows({"goal", "measured", "verdict"});
  rows.AddRow(
      {"hedging: p99 ≤ 0.2× without hedging (5 % of requests stall "
       "100 ms)",
       absl::StrFormat("%.2f / %.2f ms = **%.3f×**", hedged_p99, none_p99,
                       vs_none),
       Verdict(vs_none <= 0.2, absl::StrFormat("%.1f×", vs_none / 0.2))});
  rows.AddRow({"hedging: p99 ≤ 3× the stall-free p99",
               absl::StrFormat("%.2f / %.2f ms = **%.2f×**", hedged_p99,
                               free_p99, vs_free),
               Verdict(vs_free <= 3, absl::StrFormat("%.1f×", vs_free / 3))});
  rows.AddRow({"hedging: ≤ 10 % extra requests",
               absl::StrFormat("**%.1f %%**", 100 * extra),
               Verdict(extra <= 0.10, absl::StrFormat("%.1f×", extra / 0.10))});
  rows.AddRow({"hedging: none with the retry budget empty",
               absl::StrFormat("**%s** extra requests", Thousands(empty_extra)),
               Verdict(empty_extra == 0, "some sent")});
  return rows.ToString();
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  using tools::EchoBackend;
  std::vector<std::unique_ptr<EchoBackend>> backends;
  std::vector<Endpoint> endpoints;
  for (int i = 0; i < flags.backends; ++i) {
    absl::StatusOr<std::unique_ptr<EchoBackend>> b = EchoBackend::Start();
    if (!b.ok()) Die(absl::StrCat("backend ", i, ": ", b.status().ToString()));
    (*b)->set_delay(absl::Milliseconds(flags.delay_ms));
    (*b)->set_jitter(absl::Milliseconds(flags.jitter_ms));
    endpoints.emplace_back((*b)->address());
    backends.push_back(*std::move(b));
  }
  auto set_stall = [&](bool on) {
    for (auto& b : backends) {
      b->set_stall(on ? flags.stall : 0, absl::Milliseconds(flags.stall_ms));
    }
  };
  auto requests = [&] {
    int64_t n = 0;
    for (const auto& b : backends) n += b->calls_received();
    return n;
  };
  std::printf(
      "%d backends (delay %.1f ms + U(0, %.1f ms)), each request stalling "
      "%.0f ms with probability %.3f; %.0f calls/s open loop, %.1f s per run "
      "after %.1f s warm-up\n",
      flags.backends, flags.delay_ms, flags.jitter_ms, flags.stall_ms,
      flags.stall, flags.rate, flags.duration_s, flags.warmup_s);

  auto discovery = StaticDiscovery::Create();
  MeshOptions mesh_options;
  mesh_options.discovery = discovery;
  absl::StatusOr<std::unique_ptr<Mesh>> mesh = Mesh::Create(mesh_options);
  if (!mesh.ok()) Die(mesh.status().ToString());

  // One run: a fresh destination (its own channel, budget and route) with
  // `hedge` on its one route, under `budget`.
  auto run = [&](const std::string& name, std::optional<HedgePolicy> hedge,
                 std::optional<RetryBudget> budget) {
    const std::string target = absl::StrCat(name, ":80");
    absl::Status s = discovery->SetEndpoints(target, endpoints);
    ServiceConfig config;
    RouteBuilder route("Say");
    if (hedge) route.Hedged(*hedge);
    config.routes.push_back(route.Build());
    config.retry_budget = budget;
    if (s.ok()) s = discovery->SetServiceConfig(target, config);
    if (!s.ok()) Die(s.ToString());
    StartCall start = MeshChannelCaller(**mesh, target, ChannelOptions(),
                                        absl::Milliseconds(flags.timeout_ms));
    auto no_phase = [](double) {};
    if (flags.warmup_s > 0) {
      RunOpenLoop(name + " warm-up", start, flags.rate, flags.warmup_s,
                  flags.timeout_ms, no_phase);
    }
    const int64_t before = requests();
    Outcome out{RunOpenLoop(name, start, flags.rate, flags.duration_s,
                            flags.timeout_ms, no_phase),
                0};
    out.requests = requests() - before;
    std::printf("  %-14s done: p95 %.2f ms, p99 %.2f ms, %lld requests\n",
                name.c_str(), out.stats.Percentile(95),
                out.stats.Percentile(99), static_cast<long long>(out.requests));
    std::fflush(stdout);
    return out;
  };

  std::vector<Outcome> results;
  set_stall(false);
  results.push_back(run("stall_free", std::nullopt, std::nullopt));
  const double p95 = results[0].stats.Percentile(95);
  set_stall(true);
  results.push_back(run("no_hedging", std::nullopt, std::nullopt));
  HedgePolicy hedge;
  hedge.max_attempts = 2;
  hedge.delay = absl::Microseconds(static_cast<int64_t>(p95 * 1000));
  results.push_back(run("hedged", hedge, std::nullopt));
  RetryBudget empty;
  empty.retry_ratio = 0;  // calls deposit nothing
  empty.min_retries_per_second = 0;
  results.push_back(run("budget_empty", hedge, empty));

  const std::vector<std::string> labels = {
      "no stalls, no hedging", "stalls, no hedging",
      absl::StrFormat("stalls, hedged after %.2f ms", p95),
      "stalls, hedged, budget empty"};
  const std::string setup = absl::StrFormat(
      "%d backends answering after %.1f ms + U(0, %.1f ms); every request "
      "stalls %.0f ms more with probability %.2f, whichever backend it "
      "reaches; %.0f calls/s open loop for %.1f s per run, after %.1f s of "
      "warm-up; the hedge delay is the stall-free run's p95; \"extra\" is "
      "the requests the backends received beyond the calls.\n\n",
      flags.backends, flags.delay_ms, flags.jitter_ms, flags.stall_ms,
      flags.stall, flags.rate, flags.duration_s, flags.warmup_s);
  const std::string table = ResultsTable(results, labels);
  const std::string goals =
      GoalRows(results[0], results[1], results[2], results[3]);
  std::printf("\n%s\n%s\n", table.c_str(), goals.c_str());
  std::vector<LatencyStats> stats;
  for (const Outcome& o : results) stats.push_back(o.stats);
  WriteResultsOrDie(flags.out, {{"hedge_tail.csv", SummaryCsv(stats)},
                                {"hedge_tail_curve.csv", CurveCsv(stats)},
                                {"hedge_tail.md", setup + table},
                                {"hedge_tail_goals.md", goals}});
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }

// mesh_tail_latency_bench: tail latency with one slow backend, per balancer,
// side by side (issue 6, item 2; the shape of Buoyant's "Beyond Round Robin"
// experiment scaled to one machine).
//
// In one process: 10 EchoBackends on 127.0.0.1 answer after `--delay_ms`
// plus up to `--jitter_ms` of uniform jitter. An open-loop load (calls start
// at a fixed `--rate` whatever is in flight; each latency counts from the
// call's scheduled start, so queueing in the client shows) runs for
// `--duration` seconds through each balancer in turn, after `--warmup`
// seconds that are not measured. During the middle third of each measured
// run backend `--slow_backend` answers `--slow_extra_ms` later. The runs:
//   p2c            mesh::Channel, P2C Peak-EWMA (the default balancer)
//   grpc_rr        one grpc::Channel to "ipv4:a,b,...", LB policy round_robin
//   grpc_pick_first  the same with pick_first
//   mesh_rr        mesh::Channel, BalancerKind::kRoundRobin
//   p2c_healthy    mesh::Channel, P2C, no slow phase (the baseline)
// Prints a table and the goal ratios; writes tail_latency.csv and
// tail_latency_curve.csv into `--out`. scripts/bench.sh runs it and plots.
//
//   mesh_tail_latency_bench --out results/ [--rate 500] [--duration 9]
//
// Exits 1 if a backend cannot start or a run cannot be set up.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
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
  double rate = 500;           // calls started per second
  double duration_s = 9;       // measured seconds per balancer
  double warmup_s = 1;         // unmeasured seconds before each run
  int backends = 10;           // echo backends
  double delay_ms = 2;         // service time: delay_ms + U(0, jitter_ms)
  double jitter_ms = 2;        //
  double slow_extra_ms = 100;  // extra delay of the slow backend
  int slow_backend = 0;        // which one (index into the list)
  double timeout_ms = 5000;    // per-call deadline
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
       {"slow_extra_ms", "MS", RealFlag(&f.slow_extra_ms, Lowest::kZero)},
       {"slow_backend", "I", IntFlag(&f.slow_backend)},
       {"timeout_ms", "MS", RealFlag(&f.timeout_ms, Lowest::kZero)}});
  if (f.rate <= 0 || f.duration_s <= 0 || f.backends < 2 ||
      f.slow_backend >= f.backends || f.timeout_ms <= 0) {
    DieOfFlags(
        "need --rate > 0, --duration > 0, --backends >= 2, "
        "--slow_backend < --backends, --timeout_ms > 0");
  }
  return f;
}

// The runs as a Markdown table; `slow_ms`: the latency from which a call
// counts as served slowly.
std::string ResultsTable(const std::vector<LatencyStats>& runs,
                         const std::vector<std::string>& labels,
                         double slow_ms) {
  MarkdownTable table({"balancer", "calls", "success", "p50", "p90", "p99",
                       "p99.9", "max",
                       absl::StrFormat("calls ≥ %.0f ms", slow_ms)});
  auto ms = [](double v) { return absl::StrFormat("%.2f ms", v); };
  for (size_t i = 0; i < runs.size(); ++i) {
    const LatencyStats& s = runs[i];
    table.AddRow({labels[i], Thousands(s.calls()),
                  absl::StrFormat("%.2f %%", 100.0 * s.success_rate()),
                  ms(s.Percentile(50)), ms(s.Percentile(90)),
                  ms(s.Percentile(99)), ms(s.Percentile(99.9)), ms(s.Max()),
                  Thousands(s.CountAtLeast(slow_ms))});
  }
  return table.ToString();
}

// The two goals, as rows of docs/benchmarks.md's goal table.
std::string GoalRows(const LatencyStats& p2c, const LatencyStats& grpc_rr,
                     const LatencyStats& healthy) {
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  const double rr_p99 = grpc_rr.Percentile(99);
  const double p2c_p99 = p2c.Percentile(99);
  const double rr_over_p2c = ratio(rr_p99, p2c_p99);
  const double slow_p999 = p2c.Percentile(99.9);
  const double healthy_p999 = healthy.Percentile(99.9);
  const double slow_over_healthy = ratio(slow_p999, healthy_p999);
  MarkdownTable rows({"goal", "measured", "verdict"});
  rows.AddRow(
      {"tail latency: P2C p99 ≥ 10× lower than gRPC `round_robin`'s",
       absl::StrFormat("%.2f / %.2f ms = **%.1f×**", rr_p99, p2c_p99,
                       rr_over_p2c),
       Verdict(rr_over_p2c >= 10, absl::StrFormat("%.1f×", 10 / rr_over_p2c))});
  rows.AddRow(
      {"tail latency: P2C p99.9 with the slow backend ≤ 2× an all-healthy "
       "run's",
       absl::StrFormat("%.2f / %.2f ms = **%.2f×**", slow_p999, healthy_p999,
                       slow_over_healthy),
       Verdict(slow_over_healthy <= 2,
               absl::StrFormat("%.1f×", slow_over_healthy / 2))});
  return rows.ToString();
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  using tools::EchoBackend;
  std::vector<std::unique_ptr<EchoBackend>> backends;
  std::vector<std::string> addresses;
  std::vector<Endpoint> endpoints;
  const absl::Duration base_delay = absl::Milliseconds(flags.delay_ms);
  for (int i = 0; i < flags.backends; ++i) {
    absl::StatusOr<std::unique_ptr<EchoBackend>> b = EchoBackend::Start();
    if (!b.ok()) Die(absl::StrCat("backend ", i, ": ", b.status().ToString()));
    (*b)->set_delay(base_delay);
    (*b)->set_jitter(absl::Milliseconds(flags.jitter_ms));
    addresses.push_back((*b)->address());
    Endpoint endpoint;
    endpoint.address = (*b)->address();
    endpoints.push_back(endpoint);
    backends.push_back(*std::move(b));
  }
  EchoBackend& slow = *backends[flags.slow_backend];
  std::printf(
      "%d backends (delay %.1f ms + U(0, %.1f ms)); %s slow (+%.0f ms) "
      "during the middle third; %.0f calls/s open loop, %.1f s per "
      "balancer after %.1f s warm-up\n",
      flags.backends, flags.delay_ms, flags.jitter_ms, slow.address().c_str(),
      flags.slow_extra_ms, flags.rate, flags.duration_s, flags.warmup_s);

  auto discovery = StaticDiscovery::Create();
  MeshOptions mesh_options;
  mesh_options.discovery = discovery;
  absl::StatusOr<std::unique_ptr<Mesh>> mesh = Mesh::Create(mesh_options);
  if (!mesh.ok()) Die(mesh.status().ToString());

  // Each run gets a fresh channel (its own balancer state and connections).
  auto mesh_caller = [&](const std::string& target, BalancerKind kind) {
    absl::Status s = discovery->SetEndpoints(target, endpoints);
    if (!s.ok()) Die(s.ToString());
    ChannelOptions options;
    options.balancer.kind = kind;
    return MeshChannelCaller(**mesh, target, options,
                             absl::Milliseconds(flags.timeout_ms));
  };
  auto grpc_caller = [&](const std::string& policy) {
    auto g = std::make_shared<GrpcCaller>(
        absl::StrCat("ipv4:", absl::StrJoin(addresses, ",")), policy,
        absl::Milliseconds(flags.timeout_ms));
    return StartCall(
        [g](std::function<void(bool)> done) { g->Start(std::move(done)); });
  };

  struct Run {
    std::string name;
    std::string label;  // in the Markdown table
    std::function<StartCall()> make;
    bool slow_phase;
  };
  const std::vector<Run> plan = {
      {"p2c", "mesh P2C Peak-EWMA",
       [&] { return mesh_caller("p2c:80", BalancerKind::kP2cPeakEwma); }, true},
      {"grpc_rr", "gRPC `round_robin`",
       [&] { return grpc_caller("round_robin"); }, true},
      {"grpc_pick_first", "gRPC `pick_first`",
       [&] { return grpc_caller("pick_first"); }, true},
      {"mesh_rr", "mesh round robin",
       [&] { return mesh_caller("mesh-rr:80", BalancerKind::kRoundRobin); },
       true},
      {"p2c_healthy", "mesh P2C, all healthy",
       [&] {
         return mesh_caller("p2c-healthy:80", BalancerKind::kP2cPeakEwma);
       },
       false},
  };
  const absl::Duration slow_delay =
      base_delay + absl::Milliseconds(flags.slow_extra_ms);
  auto no_phase = [](double) {};
  std::vector<LatencyStats> results;
  for (const Run& run : plan) {
    StartCall start = run.make();
    if (flags.warmup_s > 0) {
      RunOpenLoop(run.name + " warm-up", start, flags.rate, flags.warmup_s,
                  flags.timeout_ms, no_phase);
    }
    std::atomic<int> phase{0};  // 0 before, 1 slow, 2 after
    auto slow_phase = [&](double elapsed_s) {
      int want = elapsed_s < flags.duration_s / 3       ? 0
                 : elapsed_s < 2 * flags.duration_s / 3 ? 1
                                                        : 2;
      if (want == phase.load()) return;
      phase.store(want);
      slow.set_delay(want == 1 ? slow_delay : base_delay);
    };
    std::function<void(double)> schedule = no_phase;
    if (run.slow_phase) schedule = slow_phase;
    results.push_back(RunOpenLoop(run.name, start, flags.rate, flags.duration_s,
                                  flags.timeout_ms, schedule));
    slow.set_delay(base_delay);
    std::printf("  %-16s done: p99 %.2f ms\n", run.name.c_str(),
                results.back().Percentile(99));
    std::fflush(stdout);
  }

  std::vector<std::string> labels;
  for (const Run& run : plan) labels.push_back(run.label);
  // Half the slow backend's extra delay: only it can serve that slowly.
  const double slow_ms =
      flags.delay_ms + flags.jitter_ms + flags.slow_extra_ms / 2;
  const std::string setup = absl::StrFormat(
      "%d backends answering after %.1f ms + U(0, %.1f ms); backend %d "
      "%.0f ms slower during the middle third; %.0f calls/s open loop for "
      "%.1f s per balancer, after %.1f s of warm-up.\n\n",
      flags.backends, flags.delay_ms, flags.jitter_ms, flags.slow_backend,
      flags.slow_extra_ms, flags.rate, flags.duration_s, flags.warmup_s);
  const std::string table = ResultsTable(results, labels, slow_ms);
  const std::string goals = GoalRows(results[0], results[1], results[4]);
  std::printf("\n%s\n%s\n", table.c_str(), goals.c_str());
  WriteResultsOrDie(flags.out, {{"tail_latency.csv", SummaryCsv(results)},
                                {"tail_latency_curve.csv", CurveCsv(results)},
                                {"tail_latency.md", setup + table},
                                {"tail_latency_goals.md", goals}});
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }

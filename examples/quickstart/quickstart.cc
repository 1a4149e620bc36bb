// Quickstart: what P2C over Peak-EWMA buys over round robin. Starts N echo
// backends on loopback, one of them slow, and sends the same load through a
// P2C channel (the mesh default) and a round-robin channel; prints how each
// spread the calls and the latency the client saw.
//
//   mesh-quickstart [--backends=5] [--calls=3000] [--concurrency=16]
//
// Exits 0 if every call succeeded, 1 if one failed or a part could not
// start, 2 for a bad flag.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "mesh/mesh.h"
#include "tools/common/echo_backend.h"

namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr char kTarget[] = "echo.local:7000";
constexpr char kMethod[] = "/demo.Echo/Say";
// Every backend answers in 2-3 ms; the slow one takes 100 ms, like a replica
// on a struggling node. Round robin still sends it 1/N of the traffic. P2C
// sees it at its first reply: 100 ms is above the default_rtt (30 ms) every
// endpoint starts at, so the sample replaces the estimate at once. (A backend
// slower than its peers but under default_rtt is found only as estimates
// decay, over `decay` = 10 s; lower default_rtt for such services.)
constexpr absl::Duration kBaseDelay = absl::Milliseconds(2);
constexpr absl::Duration kJitter = absl::Milliseconds(1);
constexpr absl::Duration kSlowDelay = absl::Milliseconds(100);

struct Flags {
  int backends = 5;
  int calls = 3000;
  int concurrency = 16;
};

// Accepts --backends=N, --calls=N and --concurrency=N, each N >= 1.
bool ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    int* value = nullptr;
    if (absl::ConsumePrefix(&arg, "--backends=")) {
      value = &flags->backends;
    } else if (absl::ConsumePrefix(&arg, "--calls=")) {
      value = &flags->calls;
    } else if (absl::ConsumePrefix(&arg, "--concurrency=")) {
      value = &flags->concurrency;
    }
    if (value == nullptr || !absl::SimpleAtoi(arg, value) || *value < 1) {
      std::fprintf(stderr,
                   "bad flag '%s'\nusage: %s [--backends=N] [--calls=N] "
                   "[--concurrency=N]\n",
                   argv[i], argv[0]);
      return false;
    }
  }
  return true;
}

// Caps the calls in flight without sleeping: the sender blocks in Acquire()
// while `limit` calls are outstanding, and each completion callback frees a
// slot with Release(), which never blocks (callbacks must not).
class InFlightLimit {
 public:
  explicit InFlightLimit(int limit) : limit_(limit) {}
  void Acquire() {
    absl::MutexLock lock(&mu_, absl::Condition(this, &InFlightLimit::HasRoom));
    ++in_flight_;
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    --in_flight_;
  }
  void WaitForAll() {
    absl::MutexLock lock(&mu_, absl::Condition(this, &InFlightLimit::Idle));
  }

 private:
  bool HasRoom() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return in_flight_ < limit_;
  }
  bool Idle() const ABSL_SHARED_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; }

  const int limit_;
  absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

struct CallRecord {
  std::string endpoint;  // empty if the call failed before a pick
  double latency_ms = 0;
  absl::Status status;
};

struct RunResult {
  std::vector<CallRecord> records;
  double wall_seconds = 0;
};

double MillisSince(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start)
      .count();
}

// Sends flags.calls unary calls, at most flags.concurrency at a time, and
// records for each who served it and how long the client waited.
RunResult RunLoad(mesh::Channel& channel, const Flags& flags) {
  RunResult run;
  run.records.resize(flags.calls);
  InFlightLimit limit(flags.concurrency);
  SteadyClock::time_point start = SteadyClock::now();
  for (CallRecord& record : run.records) {
    limit.Acquire();
    SteadyClock::time_point sent = SteadyClock::now();
    channel.CallRawAsync(kMethod, "hello", mesh::CallOptions(),
                         [&record, &limit, sent](mesh::CallResult result) {
                           record.latency_ms = MillisSince(sent);
                           record.endpoint = std::move(result.endpoint);
                           record.status = std::move(result.status);
                           limit.Release();  // publishes `record` to main
                         });
  }
  limit.WaitForAll();
  run.wall_seconds = MillisSince(start) / 1000;
  return run;
}

// Nearest-rank percentile; `v` is sorted in place.
double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100 * v.size()));
  return v[std::max<size_t>(rank, 1) - 1];
}

struct Summary {
  double mean_ms = 0;
  double p99_ms = 0;
  double calls_per_second = 0;
  double slow_share = 0;  // percent of calls the slow backend served
  int errors = 0;
};

Summary PrintTable(const char* title, const RunResult& run,
                   const std::vector<mesh::Endpoint>& endpoints,
                   const std::string& slow) {
  // Failed calls count too: they are rare, and any of them fails the run.
  std::map<std::string, std::vector<double>> by_endpoint;
  std::vector<double> all;
  Summary s;
  for (const CallRecord& r : run.records) {
    by_endpoint[r.endpoint].push_back(r.latency_ms);
    all.push_back(r.latency_ms);
    if (!r.status.ok() && s.errors++ == 0) {
      std::fprintf(stderr, "call failed (endpoint '%s'): %s\n",
                   r.endpoint.c_str(), r.status.ToString().c_str());
    }
  }
  const double total = static_cast<double>(run.records.size());
  std::printf("\n%s\n  %-24s %6s %7s %8s %8s\n", title, "endpoint", "calls",
              "share", "p50 ms", "p99 ms");
  for (const mesh::Endpoint& e : endpoints) {
    std::vector<double>& latencies = by_endpoint[e.address];
    double share = 100 * latencies.size() / total;
    if (e.address == slow) s.slow_share = share;
    std::string label = e.address + (e.address == slow ? " (slow)" : "");
    std::printf("  %-24s %6zu %6.1f%% %8.2f %8.2f\n", label.c_str(),
                latencies.size(), share, Percentile(latencies, 50),
                Percentile(latencies, 99));
  }
  for (double ms : all) s.mean_ms += ms / std::max<size_t>(all.size(), 1);
  s.p99_ms = Percentile(all, 99);
  s.calls_per_second = total / run.wall_seconds;
  std::printf(
      "  %-24s %6zu %6.1f%% %8.2f %8.2f   errors %d, mean %.2f ms, "
      "wall %.2f s, %.0f calls/s\n",
      "total", run.records.size(), 100.0, Percentile(all, 50), s.p99_ms,
      s.errors, s.mean_ms, run.wall_seconds, s.calls_per_second);
  return s;
}

int Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) return 2;

  // Declared before the mesh so they outlive it: the mesh's destructor then
  // settles any call in flight against a backend that is still up.
  std::vector<std::unique_ptr<mesh::tools::EchoBackend>> backends;
  std::vector<mesh::Endpoint> endpoints(flags.backends);
  const int slow_index = flags.backends / 2;
  for (int i = 0; i < flags.backends; ++i) {
    auto backend = mesh::tools::EchoBackend::Start();
    if (!backend.ok()) return Fail("starting echo backend", backend.status());
    (*backend)->set_delay(i == slow_index ? kSlowDelay : kBaseDelay);
    (*backend)->set_jitter(kJitter);
    endpoints[i].address = (*backend)->address();
    backends.push_back(*std::move(backend));
  }
  const std::string slow = endpoints[slow_index].address;

  // In a real service the endpoints come from a control plane; here, code.
  auto discovery = mesh::StaticDiscovery::Create();
  if (absl::Status s = discovery->SetEndpoints(kTarget, endpoints); !s.ok()) {
    return Fail("setting endpoints", s);
  }
  mesh::MeshOptions mesh_options;
  mesh_options.discovery = discovery;
  auto mesh = mesh::Mesh::Create(mesh_options);
  if (!mesh.ok()) return Fail("creating mesh", mesh.status());

  // Both channels name the same target, so they share one discovery
  // subscription and one connection per backend; each has its own balancer.
  // The timeout keeps a wedged backend from hanging the demo.
  mesh::ChannelOptions p2c_options;
  p2c_options.default_timeout = absl::Seconds(5);
  mesh::ChannelOptions rr_options = p2c_options;
  rr_options.balancer.kind = mesh::BalancerKind::kRoundRobin;
  auto p2c_channel = (*mesh)->NewChannel(kTarget, p2c_options);
  if (!p2c_channel.ok()) return Fail("P2C channel", p2c_channel.status());
  auto rr_channel = (*mesh)->NewChannel(kTarget, rr_options);
  if (!rr_channel.ok()) return Fail("round-robin channel", rr_channel.status());

  // Open every connection before measuring, so neither run pays for them.
  for (int i = 0; i < 2 * flags.backends; ++i) {
    mesh::CallResult r = (*rr_channel)->CallRaw(kMethod, "warm-up");
    if (!r.status.ok()) return Fail("warm-up call", r.status);
  }

  std::printf(
      "%d echo backends, %d calls per run, %d in flight; %s takes "
      "%.0f ms, the others %.0f-%.0f ms\n",
      flags.backends, flags.calls, flags.concurrency, slow.c_str(),
      absl::ToDoubleMilliseconds(kSlowDelay),
      absl::ToDoubleMilliseconds(kBaseDelay),
      absl::ToDoubleMilliseconds(kBaseDelay + kJitter));
  Summary p2c = PrintTable("P2C + Peak-EWMA (default)",
                           RunLoad(**p2c_channel, flags), endpoints, slow);
  Summary rr =
      PrintTable("Round robin", RunLoad(**rr_channel, flags), endpoints, slow);

  // p99 falls only once the slow backend serves under 1% of calls; the mean
  // and the throughput show the gain before that.
  std::printf(
      "\nP2C vs round robin: p99 %.2f vs %.2f ms, mean %.2f vs %.2f "
      "ms, %.0f vs %.0f calls/s; slow backend share %.1f%% vs %.1f%%\n",
      p2c.p99_ms, rr.p99_ms, p2c.mean_ms, rr.mean_ms, p2c.calls_per_second,
      rr.calls_per_second, p2c.slow_share, rr.slow_share);
  return p2c.errors + rr.errors == 0 ? 0 : 1;
}

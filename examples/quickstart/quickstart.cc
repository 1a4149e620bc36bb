// Quickstart: what P2C over Peak-EWMA buys over round robin.
//
// Starts N echo backends on loopback, makes one of them slow, and sends the
// same load through two channels to the same destination: one balanced by
// P2C + Peak-EWMA (the mesh default), one by round robin. For each it prints
// how the calls spread over the backends and the latency the client saw.
//
//   mesh-quickstart [--backends=5] [--calls=3000] [--concurrency=16]
//
// Exit status: 0 when every call succeeded, 1 when a call failed or a part
// could not start, 2 for a bad flag.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "examples/common/echo_backend.h"
#include "mesh/mesh.h"

namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr char kTarget[] = "echo.local:7000";
constexpr char kMethod[] = "/demo.Echo/Say";
// Every backend answers in 2-3 ms; the slow one takes 25 ms, like a replica
// on a busy node. Round robin still sends it 1/N of the traffic.
constexpr absl::Duration kBaseDelay = absl::Milliseconds(2);
constexpr absl::Duration kJitter = absl::Milliseconds(1);
constexpr absl::Duration kSlowDelay = absl::Milliseconds(25);

struct Flags {
  int backends = 5;
  int calls = 3000;
  int concurrency = 16;
};

bool ParseFlags(int argc, char** argv, Flags* flags) {
  struct IntFlag {
    const char* prefix;
    int* value;
    int min;
  } known[] = {{"--backends=", &flags->backends, 2},
               {"--calls=", &flags->calls, 1},
               {"--concurrency=", &flags->concurrency, 1}};
  for (int i = 1; i < argc; ++i) {
    bool parsed = false;
    for (const IntFlag& f : known) {
      absl::string_view arg = argv[i];
      if (absl::ConsumePrefix(&arg, f.prefix)) {
        parsed = absl::SimpleAtoi(arg, f.value) && *f.value >= f.min;
      }
    }
    if (!parsed) {
      std::fprintf(stderr,
                   "bad flag '%s'\nusage: %s [--backends=N>=2] [--calls=N>=1] "
                   "[--concurrency=N>=1]\n",
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
  bool HasRoom() const { return in_flight_ < limit_; }
  bool Idle() const { return in_flight_ == 0; }

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

// Sends `calls` unary calls with at most `concurrency` outstanding and
// records, per call, who served it and how long the client waited.
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
  double p99_ms = 0;
  double slow_share = 0;  // percent of calls the slow backend served
  int errors = 0;
};

Summary PrintTable(const char* title, const RunResult& run,
                   const std::vector<std::string>& addresses,
                   const std::string& slow) {
  std::map<std::string, std::vector<double>> by_endpoint;  // OK latencies
  std::map<std::string, int> calls;
  std::vector<double> all;
  Summary s;
  for (const CallRecord& r : run.records) {
    ++calls[r.endpoint];
    if (!r.status.ok()) {
      if (s.errors++ == 0) {
        std::fprintf(stderr, "call failed (endpoint '%s'): %s\n",
                     r.endpoint.c_str(), r.status.ToString().c_str());
      }
      continue;
    }
    by_endpoint[r.endpoint].push_back(r.latency_ms);
    all.push_back(r.latency_ms);
  }
  const double total = static_cast<double>(run.records.size());
  std::printf("\n%s\n  %-24s %6s %7s %8s %8s\n", title, "endpoint", "calls",
              "share", "p50 ms", "p99 ms");
  for (const std::string& address : addresses) {
    std::vector<double>& latencies = by_endpoint[address];
    double share = 100 * calls[address] / total;
    if (address == slow) s.slow_share = share;
    std::string label = address + (address == slow ? " (slow)" : "");
    std::printf("  %-24s %6d %6.1f%% %8.2f %8.2f\n", label.c_str(),
                calls[address], share, Percentile(latencies, 50),
                Percentile(latencies, 99));
  }
  s.p99_ms = Percentile(all, 99);
  std::printf("  %-24s %6zu %6.1f%% %8.2f %8.2f   errors %d, wall %.2f s, "
              "%.0f calls/s\n",
              "total", run.records.size(), 100.0, Percentile(all, 50),
              s.p99_ms, s.errors, run.wall_seconds, total / run.wall_seconds);
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

  // Declared before the mesh, so they outlive it: the mesh's destructor
  // settles its calls while the backends still answer.
  std::vector<std::unique_ptr<mesh::examples::EchoBackend>> backends;
  std::vector<mesh::Endpoint> endpoints;
  std::vector<std::string> addresses;
  const int slow_index = flags.backends / 2;
  for (int i = 0; i < flags.backends; ++i) {
    auto backend = mesh::examples::EchoBackend::Start();
    if (!backend.ok()) return Fail("starting echo backend", backend.status());
    (*backend)->set_delay(i == slow_index ? kSlowDelay : kBaseDelay);
    (*backend)->set_jitter(kJitter);
    mesh::Endpoint endpoint;
    endpoint.address = (*backend)->address();
    endpoints.push_back(endpoint);
    addresses.push_back(endpoint.address);
    backends.push_back(*std::move(backend));
  }
  const std::string slow = addresses[slow_index];

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
  auto p2c = (*mesh)->NewChannel(kTarget, p2c_options);
  if (!p2c.ok()) return Fail("creating P2C channel", p2c.status());
  auto rr = (*mesh)->NewChannel(kTarget, rr_options);
  if (!rr.ok()) return Fail("creating round-robin channel", rr.status());

  // Open every connection before measuring, so neither run pays for them.
  for (int i = 0; i < 2 * flags.backends; ++i) {
    mesh::CallResult r = (*rr)->CallRaw(kMethod, "warm-up");
    if (!r.status.ok()) return Fail("warm-up call", r.status);
  }

  std::printf("%d echo backends, %d calls each run, %d in flight; backend %s "
              "takes %lld ms, the others %lld-%lld ms\n",
              flags.backends, flags.calls, flags.concurrency, slow.c_str(),
              static_cast<long long>(absl::ToInt64Milliseconds(kSlowDelay)),
              static_cast<long long>(absl::ToInt64Milliseconds(kBaseDelay)),
              static_cast<long long>(
                  absl::ToInt64Milliseconds(kBaseDelay + kJitter)));
  Summary p2c_summary = PrintTable("P2C + Peak-EWMA (default)",
                                   RunLoad(**p2c, flags), addresses, slow);
  Summary rr_summary = PrintTable("Round robin", RunLoad(**rr, flags),
                                  addresses, slow);

  std::printf("\nP2C p99 %.2f ms vs round robin p99 %.2f ms (%.1fx lower); "
              "the slow backend served %.1f%% of calls under P2C vs %.1f%% "
              "under round robin\n",
              p2c_summary.p99_ms, rr_summary.p99_ms,
              rr_summary.p99_ms / std::max(p2c_summary.p99_ms, 1e-9),
              p2c_summary.slow_share, rr_summary.slow_share);
  return p2c_summary.errors + rr_summary.errors == 0 ? 0 : 1;
}

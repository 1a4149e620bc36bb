// mesh_overhead_bench: what mesh::Channel costs per unary call against a raw
// grpc::Channel, and against a real HTTP/2 proxy hop (issue 6, item 3).
//
// In one process: EchoBackends on 127.0.0.1 with no delay. Closed-loop
// unary calls (`--concurrency` workers, each starting its next call when the
// last one returns; 64-byte requests) through each variant:
//   grpc_raw    one grpc::Channel to the backend, GenericStub callback API
//   mesh_1      mesh::Channel, StaticDiscovery with that one endpoint (P2C)
//   mesh_many   mesh::Channel, StaticDiscovery with `--many` endpoints, all
//               real EchoBackends in this process (default 100)
//   proxy_hop   one grpc::Channel to nghttpx (started here as a child, h2c
//               reverse proxy on loopback, one worker) in front of the
//               backend; skipped, with a line saying so, without nghttpx
// The variants run interleaved: `--rounds` rounds, each running every
// variant for `--calls` calls at every concurrency, so that machine noise
// hits all alike; each variant first gets `--warmup` unmeasured calls.
// Latency is per call, from start to the worker seeing the answer; calls/s
// is the variant's calls over its wall time. The goal ratios (mesh p50 /
// raw p50 <= 1.03, mesh calls/s / raw >= 0.97, the proxy's added p50 >= 20x
// mesh's) are medians of per-round ratios (overhead_report.h). Prints the
// tables; writes overhead.csv, overhead_ratios.csv, overhead.md and
// overhead_goals.md into `--out`. scripts/bench.sh runs it.
//
//   mesh_overhead_bench --out results/ [--calls 2000] [--rounds 12]
//       [--concurrency 1,8] [--many 100] [--nghttpx nghttpx]
//
// Exits 1 if a backend cannot start or a variant cannot be set up.
#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/child_server.h"
#include "bench/e2e/grpc_caller.h"
#include "bench/e2e/latency_stats.h"
#include "bench/e2e/open_loop.h"
#include "bench/e2e/overhead_report.h"
#include "mesh/mesh.h"
#include "tools/common/echo_backend.h"

namespace mesh::bench {
namespace {

struct Flags {
  std::string out = "results";
  int calls = 2000;   // measured calls per variant, round and concurrency
  int rounds = 12;    // interleaved rounds
  int warmup = 1000;  // unmeasured calls per variant before round 1
  int many = 100;     // endpoints (real backends) of mesh_many
  std::vector<int> concurrency = {1, 8};
  std::string nghttpx = "nghttpx";  // the proxy binary; "" skips proxy_hop
  double timeout_ms = 5000;         // per-call deadline
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  ParseFlagsOrDie(argc, argv,
                  {{"out", "DIR", TextFlag(&f.out)},
                   {"calls", "N", IntFlag(&f.calls)},
                   {"rounds", "N", IntFlag(&f.rounds)},
                   {"warmup", "N", IntFlag(&f.warmup)},
                   {"many", "N", IntFlag(&f.many)},
                   {"nghttpx", "PATH", TextFlag(&f.nghttpx)},
                   {"timeout_ms", "MS", RealFlag(&f.timeout_ms, Lowest::kZero)},
                   {"concurrency", "N,...", IntListFlag(&f.concurrency, 1)}});
  if (f.calls < 1 || f.rounds < 1 || f.many < 1 || f.concurrency.empty() ||
      f.timeout_ms <= 0) {
    DieOfFlags(
        "need --calls, --rounds, --many, --timeout_ms >= 1 and a "
        "--concurrency list");
  }
  return f;
}

// Runs `calls` calls with `concurrency` closed-loop workers, appending to
// `samples` (if not null).
void RunClosedLoop(const StartCall& start, int calls, int concurrency,
                   OverheadSamples* samples) {
  using Clock = std::chrono::steady_clock;
  std::atomic<int> next{0};
  std::vector<std::vector<double>> latencies(concurrency);
  std::vector<int64_t> succeeded(concurrency, 0);
  const auto t0 = Clock::now();
  const double cpu0 = ProcessCpuSeconds();
  std::vector<std::thread> workers;
  for (int w = 0; w < concurrency; ++w) {
    workers.emplace_back([&, w] {
      latencies[w].reserve(calls / concurrency + 1);
      while (next.fetch_add(1) < calls) {
        absl::Notification finished;
        bool ok = false;
        const auto began = Clock::now();
        start([&](bool result) {
          ok = result;
          finished.Notify();
        });
        finished.WaitForNotification();
        latencies[w].push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - began)
                .count());
        if (ok) ++succeeded[w];
      }
    });
  }
  for (std::thread& t : workers) t.join();
  if (samples == nullptr) return;
  const double wall_s =
      std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu_s = ProcessCpuSeconds() - cpu0;
  std::vector<double> all;
  int64_t ok = 0;
  for (int w = 0; w < concurrency; ++w) {
    all.insert(all.end(), latencies[w].begin(), latencies[w].end());
    ok += succeeded[w];
  }
  samples->AddRound(all, ok, wall_s, cpu_s);
}

// nghttpx as a plain h2c reverse proxy from 127.0.0.1 to `backend_port`,
// one worker, logs discarded.
std::unique_ptr<ChildServer> StartNghttpx(const std::string& binary,
                                          int backend_port, std::string* why) {
  if (binary.empty()) {
    *why = "--nghttpx is empty";
    return nullptr;
  }
  std::unique_ptr<ChildServer> proxy = ChildServer::Start(
      {binary, "--frontend=127.0.0.1,{port};no-tls",
       absl::StrCat("--backend=127.0.0.1,", backend_port, ";;proto=h2"),
       "--workers=1", "--no-ocsp", "--no-via", "--conf=/dev/null",
       "--accesslog-file=/dev/null", "--errorlog-file=/dev/null"},
      why);
  if (proxy == nullptr && absl::EndsWith(*why, " not found")) {
    absl::StrAppend(why, " (Debian: nghttp2-proxy)");
  }
  return proxy;
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  using tools::EchoBackend;
  std::vector<std::unique_ptr<EchoBackend>> backends;
  std::vector<Endpoint> many;
  for (int i = 0; i < flags.many; ++i) {
    absl::StatusOr<std::unique_ptr<EchoBackend>> b = EchoBackend::Start();
    if (!b.ok()) Die(absl::StrCat("backend ", i, ": ", b.status().ToString()));
    many.push_back(Endpoint((*b)->address()));
    backends.push_back(*std::move(b));
  }
  EchoBackend& backend = *backends[0];

  auto discovery = StaticDiscovery::Create();
  MeshOptions mesh_options;
  mesh_options.discovery = discovery;
  absl::StatusOr<std::unique_ptr<Mesh>> mesh = Mesh::Create(mesh_options);
  if (!mesh.ok()) Die(mesh.status().ToString());
  auto mesh_caller = [&](const std::string& target,
                         std::vector<Endpoint> endpoints) {
    absl::Status s = discovery->SetEndpoints(target, std::move(endpoints));
    if (!s.ok()) Die(s.ToString());
    return MeshChannelCaller(**mesh, target, ChannelOptions(),
                             absl::Milliseconds(flags.timeout_ms));
  };
  auto grpc_caller = [&](const std::string& target, const std::string& policy) {
    auto g = std::make_shared<GrpcCaller>(target, policy,
                                          absl::Milliseconds(flags.timeout_ms));
    return StartCall(
        [g](std::function<void(bool)> done) { g->Start(std::move(done)); });
  };

  struct Variant {
    OverheadVariant about;
    StartCall start;
  };
  std::vector<std::string> addresses;
  for (const Endpoint& e : many) addresses.push_back(e.address);
  std::vector<Variant> variants = {
      {{"grpc_raw", "raw `grpc::Channel`"},
       grpc_caller(backend.address(), "pick_first")},
      {{"mesh_1", "`mesh::Channel`, 1 endpoint"},
       mesh_caller("one:80", {Endpoint(backend.address())})},
      {{"mesh_many",
        absl::StrCat("`mesh::Channel`, ", flags.many, " endpoints")},
       mesh_caller("many:80", many)},
      {{"grpc_rr_many",
        absl::StrCat("gRPC `round_robin`, ", flags.many, " endpoints")},
       grpc_caller(absl::StrCat("ipv4:", absl::StrJoin(addresses, ",")),
                   "round_robin")},
  };
  std::string why;
  std::unique_ptr<ChildServer> proxy =
      StartNghttpx(flags.nghttpx, backend.port(), &why);
  if (proxy != nullptr) {
    variants.push_back(
        {{"proxy_hop", "nghttpx h2c hop (raw gRPC to it)"},
         grpc_caller(absl::StrCat("127.0.0.1:", proxy->port()), "pick_first")});
  } else {
    std::printf("proxy_hop skipped: %s\n", why.c_str());
  }
  std::string names;
  for (const Variant& v : variants) {
    absl::StrAppend(&names, " ", v.about.name);
  }
  std::printf(
      "%d echo backends on 127.0.0.1 (no delay); variants:%s; %d rounds x "
      "%d calls per variant and concurrency, after %d warm-up calls\n",
      flags.many, names.c_str(), flags.rounds, flags.calls, flags.warmup);
  std::fflush(stdout);

  for (const Variant& v : variants) {
    RunClosedLoop(v.start, flags.warmup, flags.concurrency.back(), nullptr);
  }
  // samples[c][variant]
  std::map<int, std::vector<OverheadSamples>> samples;
  for (int c : flags.concurrency) samples[c].resize(variants.size());
  for (int round = 0; round < flags.rounds; ++round) {
    for (int c : flags.concurrency) {
      for (size_t v = 0; v < variants.size(); ++v) {
        RunClosedLoop(variants[v].start, flags.calls, c, &samples[c][v]);
      }
    }
    std::printf("  round %d of %d done\n", round + 1, flags.rounds);
    std::fflush(stdout);
  }

  std::vector<OverheadVariant> described;
  for (const Variant& v : variants) described.push_back(v.about);
  const std::string setup = absl::StrFormat(
      "%d echo backends on 127.0.0.1, no delay; closed loop, %d rounds × "
      "%s calls per variant and concurrency after %s warm-up calls; %s.\n\n",
      flags.many, flags.rounds, Thousands(flags.calls), Thousands(flags.warmup),
      proxy != nullptr ? "nghttpx as the proxy hop"
                       : absl::StrCat("no proxy hop (", why, ")"));
  const OverheadReport report =
      ReportOverhead(described, std::move(samples), setup);
  std::printf("\n%s\n%s\n", report.markdown.c_str(), report.goals.c_str());
  WriteResultsOrDie(flags.out, {{"overhead.csv", report.csv},
                                {"overhead_ratios.csv", report.ratios_csv},
                                {"overhead.md", report.markdown},
                                {"overhead_goals.md", report.goals}});
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }

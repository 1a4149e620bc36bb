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
// is the variant's calls over its summed wall time. Prints a table and the
// goal ratios (mesh p50 / raw p50 <= 1.03, mesh calls/s / raw >= 0.97, the
// proxy's added p50 >= 20x mesh's added p50); writes overhead.csv and
// overhead_ratios.csv into `--out`. scripts/bench.sh runs it.
//
//   mesh_overhead_bench --out results/ [--calls 4000] [--rounds 6]
//       [--concurrency 1,8] [--many 100] [--nghttpx nghttpx]
//
// Exits 1 if a backend cannot start or a variant cannot be set up.
#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/generic/generic_stub.h>
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

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/latency_stats.h"
#include "examples/common/echo_backend.h"
#include "mesh/mesh.h"

namespace mesh::bench {
namespace {

constexpr char kMethod[] = "/mesh.bench.Echo/Call";

struct Flags {
  std::string out = "results";
  int calls = 4000;   // measured calls per variant, round and concurrency
  int rounds = 6;     // interleaved rounds
  int warmup = 1000;  // unmeasured calls per variant before round 1
  int many = 100;     // endpoints (real backends) of mesh_many
  std::vector<int> concurrency = {1, 8};
  std::string nghttpx = "nghttpx";  // the proxy binary; "" skips proxy_hop
  double timeout_ms = 5000;         // per-call deadline
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  ParseFlagsOrDie(argc, argv,
                  {{"--out", TextFlag(&f.out)},
                   {"--calls", IntFlag(&f.calls)},
                   {"--rounds", IntFlag(&f.rounds)},
                   {"--warmup", IntFlag(&f.warmup)},
                   {"--many", IntFlag(&f.many)},
                   {"--nghttpx", TextFlag(&f.nghttpx)},
                   {"--timeout_ms", RealFlag(&f.timeout_ms)},
                   {"--concurrency", IntListFlag(&f.concurrency)}});
  if (f.calls < 1 || f.rounds < 1 || f.many < 1 || f.concurrency.empty() ||
      f.timeout_ms <= 0) {
    Die("need --calls, --rounds, --many, --timeout_ms >= 1 and a "
        "--concurrency list");
  }
  return f;
}

// Starts one call; `done(ok)` runs once, on any thread, and must not block.
using StartCall = std::function<void(std::function<void(bool)> done)>;

// A raw grpc::Channel to one address (pick_first, its own connection), calls
// through the generic stub's callback API as src/transport does.
class GrpcRaw {
 public:
  GrpcRaw(const std::string& address, double timeout_ms)
      : timeout_(absl::Milliseconds(timeout_ms)) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    channel_ = grpc::CreateCustomChannel(
        address, grpc::InsecureChannelCredentials(), args);
  }

  void Start(std::function<void(bool)> done) {
    struct Call {
      grpc::ClientContext context;
      grpc::ByteBuffer request;
      grpc::ByteBuffer response;
    };
    auto* call = new Call;
    call->context.set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
    grpc::Slice slice(std::string(64, 'x'));
    call->request = grpc::ByteBuffer(&slice, 1);
    grpc::GenericStub stub(channel_);
    stub.UnaryCall(&call->context, kMethod, grpc::StubOptions(), &call->request,
                   &call->response,
                   [call, done = std::move(done)](grpc::Status status) {
                     done(status.ok());
                     delete call;
                   });
  }

 private:
  absl::Duration timeout_;
  std::shared_ptr<grpc::Channel> channel_;
};

// The measured calls of one variant at one concurrency, over all rounds.
struct Samples {
  std::vector<double> latency_ms;
  int64_t succeeded = 0;
  double wall_s = 0;
  double cpu_s = 0;  // the whole process's CPU time (client and servers)
};

// CPU time used so far by every thread of this process, in seconds.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Runs `calls` calls with `concurrency` closed-loop workers, appending to
// `samples` (if not null).
void RunClosedLoop(const StartCall& start, int calls, int concurrency,
                   Samples* samples) {
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
  samples->wall_s += std::chrono::duration<double>(Clock::now() - t0).count();
  samples->cpu_s += ProcessCpuSeconds() - cpu0;
  for (int w = 0; w < concurrency; ++w) {
    samples->latency_ms.insert(samples->latency_ms.end(), latencies[w].begin(),
                               latencies[w].end());
    samples->succeeded += succeeded[w];
  }
}

// A free TCP port on 127.0.0.1 (bound and released; racy but fine here).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// nghttpx as a plain h2c reverse proxy from 127.0.0.1:port() to `backend`,
// one worker, logs discarded. Stopped (SIGTERM) on destruction.
class Nghttpx {
 public:
  // Null, with the reason in `why`, if the binary is missing or the proxy
  // does not listen within 5 s.
  static std::unique_ptr<Nghttpx> Start(const std::string& binary,
                                        int backend_port, std::string* why) {
    if (binary.empty()) {
      *why = "--nghttpx is empty";
      return nullptr;
    }
    const int port = FreePort();
    if (port == 0) {
      *why = "no free port";
      return nullptr;
    }
    std::vector<std::string> args = {
        binary,
        absl::StrCat("--frontend=127.0.0.1,", port, ";no-tls"),
        absl::StrCat("--backend=127.0.0.1,", backend_port, ";;proto=h2"),
        "--workers=1",
        "--no-ocsp",
        "--no-via",
        "--conf=/dev/null",
        "--accesslog-file=/dev/null",
        "--errorlog-file=/dev/null",
    };
    pid_t pid = fork();
    if (pid < 0) {
      *why = absl::StrCat("fork: ", std::strerror(errno));
      return nullptr;
    }
    if (pid == 0) {
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      // Its start-up notices would interleave with the table.
      int null_fd = open("/dev/null", O_WRONLY);
      if (null_fd >= 0) {
        dup2(null_fd, STDOUT_FILENO);
        dup2(null_fd, STDERR_FILENO);
      }
      execvp(argv[0], argv.data());
      _exit(127);
    }
    auto proxy = std::unique_ptr<Nghttpx>(new Nghttpx(pid, port));
    for (int i = 0; i < 100; ++i) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        proxy->pid_ = 0;
        *why = WIFEXITED(status) && WEXITSTATUS(status) == 127
                   ? absl::StrCat(binary, " not found (Debian: nghttp2-proxy)")
                   : absl::StrCat(binary, " exited at start");
        return nullptr;
      }
      if (Accepts(port)) return proxy;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    *why = absl::StrCat(binary, " did not listen on port ", port, " in 5 s");
    return nullptr;
  }

  ~Nghttpx() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }

  int port() const { return port_; }

 private:
  Nghttpx(pid_t pid, int port) : pid_(pid), port_(port) {}
  pid_t pid_;
  int port_;
};

double Us(const LatencyStats& s, double p) { return 1000.0 * s.Percentile(p); }

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  using examples::EchoBackend;
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
    absl::StatusOr<std::unique_ptr<Channel>> channel =
        (*mesh)->NewChannel(target);
    if (!channel.ok()) Die(channel.status().ToString());
    s = (*channel)->WaitForEndpoints(absl::Seconds(5));
    if (!s.ok()) Die(absl::StrCat(target, ": ", s.ToString()));
    std::shared_ptr<Channel> shared = *std::move(channel);
    CallOptions call_options;
    call_options.timeout = absl::Milliseconds(flags.timeout_ms);
    return StartCall([shared, call_options](std::function<void(bool)> done) {
      shared->CallRawAsync(
          kMethod, std::string(64, 'x'), call_options,
          [done = std::move(done)](CallResult r) { done(r.status.ok()); });
    });
  };
  auto grpc_caller = [&](const std::string& address) {
    auto g = std::make_shared<GrpcRaw>(address, flags.timeout_ms);
    return StartCall(
        [g](std::function<void(bool)> done) { g->Start(std::move(done)); });
  };

  struct Variant {
    std::string name;
    StartCall start;
  };
  std::vector<Variant> variants = {
      {"grpc_raw", grpc_caller(backend.address())},
      {"mesh_1", mesh_caller("one:80", {Endpoint(backend.address())})},
      {absl::StrCat("mesh_", flags.many), mesh_caller("many:80", many)},
  };
  std::string why;
  std::unique_ptr<Nghttpx> proxy =
      Nghttpx::Start(flags.nghttpx, backend.port(), &why);
  if (proxy != nullptr) {
    variants.push_back(
        {"proxy_hop", grpc_caller(absl::StrCat("127.0.0.1:", proxy->port()))});
  } else {
    std::printf("proxy_hop skipped: %s\n", why.c_str());
  }
  std::string names;
  for (const Variant& v : variants) absl::StrAppend(&names, " ", v.name);
  std::printf(
      "%d echo backends on 127.0.0.1 (no delay); variants:%s; %d rounds x "
      "%d calls per variant and concurrency, after %d warm-up calls\n",
      flags.many, names.c_str(), flags.rounds, flags.calls, flags.warmup);
  std::fflush(stdout);

  for (const Variant& v : variants) {
    RunClosedLoop(v.start, flags.warmup, flags.concurrency.back(), nullptr);
  }
  // samples[c][variant]
  std::map<int, std::vector<Samples>> samples;
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

  std::vector<std::string> labels = {
      "raw `grpc::Channel`", "`mesh::Channel`, 1 endpoint",
      absl::StrCat("`mesh::Channel`, ", flags.many, " endpoints"),
      "nghttpx h2c hop (raw gRPC to it)"};
  labels.resize(variants.size());
  std::string csv =
      "variant,concurrency,calls,success_rate,p50_us,p90_us,p99_us,max_us,"
      "calls_per_s,cpu_us_per_call\n";
  std::string ratios_csv =
      "concurrency,mesh_p50_over_raw,mesh_rate_over_raw,mesh_many_p50_over_raw,"
      "mesh_many_rate_over_raw,proxy_added_over_mesh_added,mesh_cpu_added_us,"
      "proxy_cpu_added_us\n";
  MarkdownTable table({"variant", "concurrency", "calls", "success", "p50",
                       "p90", "p99", "calls/s", "CPU per call"});
  MarkdownTable ratio_table(
      {"concurrency", "mesh p50 / raw", "mesh calls/s / raw",
       absl::StrCat("mesh ", flags.many, " p50 / raw"),
       absl::StrCat("mesh ", flags.many, " calls/s / raw"),
       "added p50: mesh, proxy", "added CPU per call: mesh, proxy"});
  MarkdownTable goals({"goal", "measured", "verdict"});
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  auto us = [](double v) { return absl::StrFormat("%.1f µs", v); };
  for (int c : flags.concurrency) {
    std::vector<LatencyStats> stats;
    std::vector<double> rate;
    std::vector<double> cpu_us;  // process CPU per call
    for (size_t v = 0; v < variants.size(); ++v) {
      Samples& s = samples[c][v];
      rate.push_back(s.wall_s > 0 ? s.latency_ms.size() / s.wall_s : 0.0);
      cpu_us.push_back(
          s.latency_ms.empty() ? 0.0 : 1e6 * s.cpu_s / s.latency_ms.size());
      stats.push_back(LatencyStats::From(variants[v].name,
                                         std::move(s.latency_ms), s.succeeded));
      const LatencyStats& st = stats.back();
      absl::StrAppendFormat(
          &csv, "%s,%d,%d,%.5f,%.1f,%.1f,%.1f,%.1f,%.1f,%.2f\n", st.name(), c,
          st.calls(), st.success_rate(), Us(st, 50), Us(st, 90), Us(st, 99),
          Us(st, 100), rate.back(), cpu_us.back());
      table.AddRow({labels[v], absl::StrCat(c), Thousands(st.calls()),
                    absl::StrFormat("%.2f %%", 100.0 * st.success_rate()),
                    us(Us(st, 50)), us(Us(st, 90)), us(Us(st, 99)),
                    Thousands(static_cast<int64_t>(rate.back())),
                    us(cpu_us.back())});
    }
    const double raw_p50 = Us(stats[0], 50);
    const double mesh_p50 = ratio(Us(stats[1], 50), raw_p50);
    const double mesh_rate = ratio(rate[1], rate[0]);
    const double many_p50 = ratio(Us(stats[2], 50), raw_p50);
    const double many_rate = ratio(rate[2], rate[0]);
    const double mesh_added = Us(stats[1], 50) - raw_p50;
    const double mesh_cpu_added = cpu_us[1] - cpu_us[0];
    const bool have_proxy = stats.size() > 3;
    const double proxy_added = have_proxy ? Us(stats[3], 50) - raw_p50 : 0;
    const double proxy_cpu_added = have_proxy ? cpu_us[3] - cpu_us[0] : 0;
    // Mesh adding no measurable p50 makes any proxy hop infinitely worse.
    const double proxy_over_mesh =
        mesh_added > 0 ? proxy_added / mesh_added : HUGE_VAL;
    absl::StrAppendFormat(
        &ratios_csv, "%d,%.4f,%.4f,%.4f,%.4f,%s,%.2f,%s\n", c, mesh_p50,
        mesh_rate, many_p50, many_rate,
        have_proxy ? absl::StrFormat("%.1f", proxy_over_mesh) : "",
        mesh_cpu_added,
        have_proxy ? absl::StrFormat("%.2f", proxy_cpu_added) : "");
    auto signed_us = [](double v) { return absl::StrFormat("%+.1f µs", v); };
    ratio_table.AddRow(
        {absl::StrCat(c), absl::StrFormat("%.3f×", mesh_p50),
         absl::StrFormat("%.3f×", mesh_rate),
         absl::StrFormat("%.3f×", many_p50),
         absl::StrFormat("%.3f×", many_rate),
         absl::StrCat(signed_us(mesh_added), ", ",
                      have_proxy ? signed_us(proxy_added) : "—"),
         absl::StrCat(signed_us(mesh_cpu_added), ", ",
                      have_proxy ? signed_us(proxy_cpu_added) : "—")});
    goals.AddRow(
        {absl::StrFormat("overhead, concurrency %d: mesh p50 ≤ 1.03 × raw "
                         "gRPC p50",
                         c),
         absl::StrFormat("**%.3f×**", mesh_p50),
         Verdict(mesh_p50 <= 1.03,
                 absl::StrFormat("%.1f points", 100 * (mesh_p50 - 1.03)))});
    goals.AddRow(
        {absl::StrFormat(
             "overhead, concurrency %d: mesh calls/s ≥ 0.97 × raw gRPC's", c),
         absl::StrFormat("**%.3f×**", mesh_rate),
         Verdict(mesh_rate >= 0.97,
                 absl::StrFormat("%.1f points", 100 * (0.97 - mesh_rate)))});
    if (have_proxy) {
      goals.AddRow(
          {absl::StrFormat("overhead, concurrency %d: the proxy hop's added "
                           "p50 ≥ 20 × mesh's",
                           c),
           mesh_added > 0
               ? absl::StrFormat("%+.1f / %+.1f µs = **%.1f×**", proxy_added,
                                 mesh_added, proxy_over_mesh)
               : absl::StrFormat("proxy %+.1f µs, mesh %+.1f µs (nothing "
                                 "measurable)",
                                 proxy_added, mesh_added),
           Verdict(proxy_over_mesh >= 20,
                   absl::StrFormat("%.1f×", 20 / proxy_over_mesh))});
    }
  }
  const std::string setup = absl::StrFormat(
      "%d echo backends on 127.0.0.1, no delay; closed loop, %d rounds × "
      "%s calls per variant and concurrency after %s warm-up calls; %s.\n\n",
      flags.many, flags.rounds, Thousands(flags.calls), Thousands(flags.warmup),
      proxy != nullptr ? "nghttpx as the proxy hop"
                       : absl::StrCat("no proxy hop (", why, ")"));
  const std::string md =
      absl::StrCat(setup, table.ToString(), "\n", ratio_table.ToString());
  std::printf("\n%s\n%s\n", md.c_str(), goals.ToString().c_str());
  WriteResultsOrDie(flags.out, {{"overhead.csv", csv},
                                {"overhead_ratios.csv", ratios_csv},
                                {"overhead.md", md},
                                {"overhead_goals.md", goals.ToString()}});
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }

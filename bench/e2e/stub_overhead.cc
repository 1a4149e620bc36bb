// mesh_stub_bench: a generated stub over Mesh::NewGrpcChannel against the
// same stub on a direct grpc::Channel to the same backend (issue 16).
//
// In one process: one TestEchoServer (tests/support) on 127.0.0.1. Two
// variants of meshtest.TestEcho's stub:
//   direct  grpc::CreateCustomChannel to the backend's address
//   mesh    Mesh::NewGrpcChannel over StaticDiscovery with that endpoint
// and, for reference, the sync stub through mesh::Channel::Call (no stub)
// and on a direct channel with a client interceptor that only observes
// the call (what a channel creating calls on the endpoint's own connection
// would add).
// Unary: closed-loop calls (`--concurrency` threads, each starting its
// next call when the last returns), with the sync stub and with the
// callback stub (stub->async(), the thread waiting for the callback); per
// call latency, the variant's calls/s, and the whole process's CPU time per
// call (callers, gRPC, mesh and the server: on a small machine the p50
// also measures how long one thread takes to wake another on another CPU).
// Bidi: one stream per variant, a writer thread writing
// `--messages` messages while the reader reads their echoes; messages/s.
// The variants run interleaved, `--rounds` rounds, each variant first warmed
// up; the goal ratios (mesh p50 / direct p50 <= 1.05, calls/s and
// messages/s >= 0.95 of direct) are medians of per-round ratios. Prints a
// table; writes stub.md and stub_goals.md into `--out`.
//
//   mesh_stub_bench --out results/ [--calls 2000] [--rounds 8]
//       [--concurrency 1,8] [--messages 20000]
//
// Exits 1 if a variant cannot be set up.
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/latency_stats.h"
#include "bench/e2e/unary_loop.h"
#include "mesh/mesh.h"
#include "meshtest/echo.grpc.pb.h"
#include "src/base/mutex.h"
#include "tests/support/test_echo_server.h"

namespace mesh::bench {
namespace {

struct Flags {
  std::string out = "results";
  int calls = 2000;  // measured calls per variant, round and concurrency
  int rounds = 8;
  int warmup = 500;
  std::vector<int> concurrency = {1, 8};
  int messages = 20000;  // per bidi run
};

using meshtest::EchoRequest;
using meshtest::EchoResponse;
using meshtest::TestEcho;

// The same closed loop through mesh::Channel::Call (typed, blocking), no
// stub: mesh's own per-call path without the interceptor, for reference.
UnaryRun RunChannelUnary(Channel& channel, int calls, int threads) {
  CallOptions options;
  options.timeout = absl::Seconds(5);
  return RunClosedLoop(calls, threads, [&](const EchoRequest& request) {
    EchoResponse response;
    return channel.Call("/meshtest.TestEcho/Unary", request, &response, options)
        .ok();
  });
}

// What a channel of mesh's own that created each call on the picked
// endpoint's connection would add to it: a client interceptor that only
// observes (at the start a timestamp, the pending count and a tap check; at
// the status the latency sample and a counter), neither hijacking nor
// delaying anything. The "(observed direct channel)" rows.
struct Observed {
  std::atomic<int64_t> pending{0};
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> latency_ns{0};
  std::atomic<bool> tapped{false};
};

class ObservingInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit ObservingInterceptor(Observed* observed) : observed_(observed) {}
  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      start_ = absl::Now();
      observed_->pending.fetch_add(1, std::memory_order_relaxed);
      if (observed_->tapped.load(std::memory_order_relaxed)) Die("tapped");
    }
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::POST_RECV_STATUS)) {
      observed_->latency_ns.store(
          absl::ToInt64Nanoseconds(absl::Now() - start_),
          std::memory_order_relaxed);
      observed_->pending.fetch_sub(1, std::memory_order_relaxed);
      observed_->calls.fetch_add(1, std::memory_order_relaxed);
    }
    methods->Proceed();
  }

 private:
  Observed* const observed_;
  absl::Time start_;
};

class ObservingFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit ObservingFactory(Observed* observed) : observed_(observed) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new ObservingInterceptor(observed_);
  }

 private:
  Observed* const observed_;
};

// A reference variant's sync unary runs beside the direct stub's, round by
// round, and its two rows (p50 and CPU per call, each with its ratio to
// direct).
struct ReferenceRuns {
  std::vector<double> p50, p50_ratio, cpu, cpu_ratio;

  void Add(const UnaryRun& run, const UnaryRun& direct) {
    p50.push_back(run.p50_ms);
    p50_ratio.push_back(run.p50_ms / direct.p50_ms);
    cpu.push_back(run.cpu_us_per_call);
    cpu_ratio.push_back(run.cpu_us_per_call / direct.cpu_us_per_call);
  }
  void AddRows(MarkdownTable& table, const std::string& p50_label,
               const std::string& cpu_label, int in_flight, double direct_p50,
               double direct_cpu) const {
    table.AddRow({p50_label, absl::StrCat(in_flight),
                  absl::StrFormat("%.3f", direct_p50),
                  absl::StrFormat("%.3f", Median(p50)),
                  absl::StrFormat("%.3f", Median(p50_ratio))});
    table.AddRow({cpu_label, absl::StrCat(in_flight),
                  absl::StrFormat("%.1f", direct_cpu),
                  absl::StrFormat("%.1f", Median(cpu)),
                  absl::StrFormat("%.3f", Median(cpu_ratio))});
  }
};

// Messages per second through one bidi stream: a writer thread and this
// thread reading the echoes.
double RunBidi(TestEcho::Stub& stub, int messages) {
  grpc::ClientContext context;
  auto stream = stub.Bidi(&context);
  EchoRequest request;
  request.set_message(std::string(64, 'y'));
  absl::Time start = absl::Now();
  std::thread writer([&] {
    for (int i = 0; i < messages; ++i) {
      if (!stream->Write(request)) break;
    }
    stream->WritesDone();
  });
  EchoResponse response;
  int read = 0;
  while (stream->Read(&response)) ++read;
  writer.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  grpc::Status status = stream->Finish();
  if (!status.ok() || read != messages) {
    Die(absl::StrCat("bidi stream: ", read, " of ", messages,
                     " echoes, status ", status.error_message()));
  }
  return messages / seconds;
}

int Main(int argc, char** argv) {
  Flags f;
  ParseFlagsOrDie(argc, argv,
                  {{"out", "DIR", TextFlag(&f.out)},
                   {"calls", "N", IntFlag(&f.calls, 1)},
                   {"rounds", "N", IntFlag(&f.rounds, 1)},
                   {"warmup", "N", IntFlag(&f.warmup, 0)},
                   {"concurrency", "N,N", IntListFlag(&f.concurrency, 1)},
                   {"messages", "N", IntFlag(&f.messages, 1)}});
  auto server = testing::TestEchoServer::Start();
  auto discovery = StaticDiscovery::Create();
  if (!discovery->SetEndpoints("echo:7000", {{server->address()}}).ok()) {
    Die("cannot set the endpoint");
  }
  MeshOptions options;
  options.discovery = discovery;
  auto mesh = Mesh::Create(options);
  if (!mesh.ok()) Die(mesh.status().ToString());
  auto mesh_channel = (*mesh)->NewGrpcChannel("echo:7000");
  if (!mesh_channel.ok()) Die(mesh_channel.status().ToString());
  auto direct_channel = grpc::CreateCustomChannel(
      server->address(), grpc::InsecureChannelCredentials(),
      grpc::ChannelArguments());
  std::unique_ptr<TestEcho::Stub> stubs[2] = {TestEcho::NewStub(direct_channel),
                                              TestEcho::NewStub(*mesh_channel)};
  Observed observed;
  std::vector<
      std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
      observing;
  observing.push_back(std::make_unique<ObservingFactory>(&observed));
  std::unique_ptr<TestEcho::Stub> observed_stub =
      TestEcho::NewStub(grpc::experimental::CreateCustomChannelWithInterceptors(
          server->address(), grpc::InsecureChannelCredentials(),
          grpc::ChannelArguments(), std::move(observing)));
  for (int c : f.concurrency) RunUnary(*observed_stub, f.warmup, c);
  auto plain_channel = (*mesh)->NewChannel("echo:7000");
  if (!plain_channel.ok()) Die(plain_channel.status().ToString());
  for (int c : f.concurrency) RunChannelUnary(**plain_channel, f.warmup, c);
  for (auto& stub : stubs) {
    for (int c : f.concurrency) {
      RunUnary(*stub, f.warmup, c);
      RunUnary(*stub, f.warmup, c, /*callback=*/true);
    }
    RunBidi(*stub, std::max(1, f.messages / 10));
  }

  MarkdownTable table(
      {"measure", "in flight", "direct", "mesh", "mesh / direct"});
  MarkdownTable goals({"goal", "measured", "verdict"});
  for (bool callback : {false, true})
    for (int c : f.concurrency) {
      const char* api = callback ? "callback" : "sync";
      std::vector<double> p50_ratio, rate_ratio, p50[2], rate[2], cpu[2];
      std::vector<double> cpu_ratio;
      ReferenceRuns plain, seen;  // mesh::Channel::Call; observed direct
      for (int r = 0; r < f.rounds; ++r) {
        UnaryRun run[2];
        for (int v = 0; v < 2; ++v) {
          run[v] = RunUnary(*stubs[v], f.calls, c, callback);
        }
        if (!callback) {
          plain.Add(RunChannelUnary(**plain_channel, f.calls, c), run[0]);
          seen.Add(RunUnary(*observed_stub, f.calls, c), run[0]);
        }
        for (int v = 0; v < 2; ++v) {
          p50[v].push_back(run[v].p50_ms);
          rate[v].push_back(run[v].calls_per_s);
          cpu[v].push_back(run[v].cpu_us_per_call);
        }
        cpu_ratio.push_back(run[1].cpu_us_per_call / run[0].cpu_us_per_call);
        p50_ratio.push_back(run[1].p50_ms / run[0].p50_ms);
        rate_ratio.push_back(run[1].calls_per_s / run[0].calls_per_s);
      }
      double pr = Median(p50_ratio), rr = Median(rate_ratio);
      table.AddRow({absl::StrCat(api, " unary p50 (ms)"), absl::StrCat(c),
                    absl::StrFormat("%.3f", Median(p50[0])),
                    absl::StrFormat("%.3f", Median(p50[1])),
                    absl::StrFormat("%.3f", pr)});
      table.AddRow({absl::StrCat(api, " unary calls/s"), absl::StrCat(c),
                    Thousands(static_cast<int64_t>(Median(rate[0]))),
                    Thousands(static_cast<int64_t>(Median(rate[1]))),
                    absl::StrFormat("%.3f", rr)});
      table.AddRow({absl::StrCat(api, " unary CPU per call (µs)"),
                    absl::StrCat(c), absl::StrFormat("%.1f", Median(cpu[0])),
                    absl::StrFormat("%.1f", Median(cpu[1])),
                    absl::StrFormat("%.3f", Median(cpu_ratio))});
      if (!callback) {
        plain.AddRows(table, "(mesh::Channel::Call p50, ms, no stub)",
                      "(mesh::Channel::Call CPU per call, µs, no stub)", c,
                      Median(p50[0]), Median(cpu[0]));
        seen.AddRows(table, "(observed direct channel: sync stub p50, ms)",
                     "(observed direct channel: CPU per call, µs)", c,
                     Median(p50[0]), Median(cpu[0]));
      }
      goals.AddRow({absl::StrCat("stubs: ", api, " stub unary p50 at ", c,
                                 " in flight ≤ 1.05× direct"),
                    absl::StrFormat("**%.3f×**", pr),
                    Verdict(pr <= 1.05, absl::StrFormat("%.2f×", pr / 1.05))});
      goals.AddRow({absl::StrCat("stubs: ", api, " stub unary calls/s at ", c,
                                 " in flight ≥ 0.95× direct"),
                    absl::StrFormat("**%.3f×**", rr),
                    Verdict(rr >= 0.95, absl::StrFormat("%.2f×", 0.95 / rr))});
    }
  std::vector<double> bidi_ratio, bidi[2];
  for (int r = 0; r < f.rounds; ++r) {
    double m[2];
    for (int v = 0; v < 2; ++v) m[v] = RunBidi(*stubs[v], f.messages);
    bidi[0].push_back(m[0]);
    bidi[1].push_back(m[1]);
    bidi_ratio.push_back(m[1] / m[0]);
  }
  double br = Median(bidi_ratio);
  table.AddRow({"bidi messages/s", "1 stream",
                Thousands(static_cast<int64_t>(Median(bidi[0]))),
                Thousands(static_cast<int64_t>(Median(bidi[1]))),
                absl::StrFormat("%.3f", br)});
  goals.AddRow({"stubs: messages/s on one bidi stream ≥ 0.95× direct",
                absl::StrFormat("**%.3f×**", br),
                Verdict(br >= 0.95, absl::StrFormat("%.2f×", 0.95 / br))});
  if (observed.calls.load() == 0 || observed.pending.load() != 0) {
    Die("the observing interceptor saw no call, or a call that did not end");
  }
  std::printf("%s\n%s", table.ToString().c_str(), goals.ToString().c_str());
  WriteResultsOrDie(f.out, {{"stub.md", table.ToString()},
                            {"stub_goals.md", goals.ToString()}});
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }

// mesh_tap_load_bench: what idle tap subscribers cost the calls of the
// process that serves them (issue 12, item 4).
//
// One process: two echo backends on 127.0.0.1, a Mesh serving Linkerd's
// Observe API on 127.0.0.1:0, a Channel. Each round measures `--calls`
// sequential calls (one in flight) twice, side by side: with no tap
// subscriber, and with `--subscribers` Observe streams open whose client
// never reads (match everything, a limit of a million: every call is tapped
// by every one of them, and their buffers fill and drop). The ratio of the
// two p50s is taken per round; the report gives the median over
// `--rounds` rounds, p99 likewise, and the process's threads with and
// without the subscribers. Goal: p50 within 1.5× of none.
//
//   mesh_tap_load_bench --out results/ [--calls 2000] [--rounds 5]
//                       [--subscribers 100] [--client stopped|grpc]
//
// Writes tap_load.csv, tap_load.md and tap_load_goals.md into --out.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/latency_stats.h"
#include "bench/e2e/sequential_calls.h"
#include "linkerd/tap.grpc.pb.h"
#include "mesh/mesh.h"
#include "tools/common/echo_backend.h"
#include "tools/common/process_stats.h"

namespace mesh::bench {
namespace {

namespace tap = ::io::linkerd::proxy::tap;
constexpr char kTarget[] = "echo.bench:7000";

// An Observe stream whose client never reads; destroying it cancels it.
class IdleSubscriber final : public grpc::ClientReadReactor<tap::TapEvent> {
 public:
  explicit IdleSubscriber(tap::Tap::Stub* stub) {
    request_.set_limit(1000000);
    request_.mutable_match()->mutable_all();
    stub->async()->Observe(&context_, &request_, this);
    StartCall();
  }
  ~IdleSubscriber() override {
    context_.TryCancel();
    done_.WaitForNotification();
  }
  void OnDone(const grpc::Status&) override { done_.Notify(); }

 private:
  grpc::ClientContext context_;
  tap::ObserveRequest request_;
  absl::Notification done_;
};

int Main(int argc, char** argv) {
  std::string out = "results";
  int calls = 2000, rounds = 5, subscribers = 100, warmup = 500;
  std::string client = "stopped";
  ParseFlagsOrDie(argc, argv,
                  {{"out", "DIR", TextFlag(&out)},
                   {"calls", "N", IntFlag(&calls)},
                   {"rounds", "N", IntFlag(&rounds)},
                   {"warmup", "N", IntFlag(&warmup)},
                   {"subscribers", "N", IntFlag(&subscribers)},
                   {"client", "stopped|grpc", TextFlag(&client)}});
  if (calls < 1 || rounds < 1) DieOfFlags("--calls and --rounds must be >= 1");
  if (client != "stopped" && client != "grpc") {
    DieOfFlags("--client must be stopped or grpc");
  }

  EchoDestination destination = StartEchoDestination(kTarget, 2);
  const std::shared_ptr<StaticDiscovery>& discovery = destination.discovery;
  MeshOptions options;
  options.discovery = discovery;
  options.tap_address = "127.0.0.1:0";
  options.tap_max_subscriptions = std::max(1, subscribers);
  auto mesh = Mesh::Create(options);
  if (!mesh.ok()) Die(mesh.status().ToString());
  auto channel = (*mesh)->NewChannel(kTarget);
  if (!channel.ok()) Die(channel.status().ToString());
  // The subscribers' channel behaves as a peer that really stops reading:
  // gRPC's client would otherwise keep taking what the server writes into
  // its own memory (its window grows with BDP probing), so that the server
  // would never feel that nobody reads. With a fixed 64 KiB window, it
  // does, as it does from a stopped process.
  // `--client grpc` keeps gRPC's defaults: a client program that never
  // calls Read, whose library goes on taking the events (issue 29's
  // measurement).
  grpc::ChannelArguments args;
  if (client == "stopped") {
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 64 * 1024);
  }
  auto stub = tap::Tap::NewStub(
      grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", (*mesh)->tap_port()),
                                grpc::InsecureChannelCredentials(), args));
  SequentialCalls(**channel, warmup, "warmup");

  std::string csv = "round,subscribers,calls,ok,p50_ms,p99_ms,threads\n";
  std::vector<double> p50_ratios, p99_ratios;
  int threads_none = 0, threads_idle = 0;
  for (int r = 0; r < rounds; ++r) {
    threads_none = tools::ThreadsOfThisProcess();
    LatencyStats none = SequentialCalls(**channel, calls, "none");
    std::vector<std::unique_ptr<IdleSubscriber>> idle;
    for (int i = 0; i < subscribers; ++i) {
      idle.push_back(std::make_unique<IdleSubscriber>(stub.get()));
    }
    // Wait (bounded) until the Mesh holds every subscription: an
    // in-process one is refused at the cap.
    absl::Time until = absl::Now() + absl::Seconds(10);
    while (subscribers > 0 && (*mesh)->Tap(TapOptions()).ok() &&
           absl::Now() < until) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    threads_idle = tools::ThreadsOfThisProcess();
    LatencyStats with = SequentialCalls(**channel, calls, "idle");
    idle.clear();
    for (const LatencyStats* s : {&none, &with}) {
      absl::StrAppend(
          &csv, r, ",", s == &none ? 0 : subscribers, ",", s->calls(), ",",
          s->succeeded(), ",",
          absl::StrFormat("%.4f,%.4f", s->Percentile(50), s->Percentile(99)),
          ",", s == &none ? threads_none : threads_idle, "\n");
    }
    p50_ratios.push_back(with.Percentile(50) / none.Percentile(50));
    p99_ratios.push_back(with.Percentile(99) / none.Percentile(99));
    std::printf("round %d: p50 %.3f -> %.3f ms, p99 %.3f -> %.3f ms\n", r,
                none.Percentile(50), with.Percentile(50), none.Percentile(99),
                with.Percentile(99));
    std::fflush(stdout);
  }
  const double p50 = Median(p50_ratios);
  const double p99 = Median(p99_ratios);
  MarkdownTable table({"subscribers (never reading)", "p50 over none",
                       "p99 over none", "threads"});
  table.AddRow({"0", "1", "1", absl::StrCat(threads_none)});
  table.AddRow({absl::StrCat(subscribers), absl::StrFormat("**%.2f×**", p50),
                absl::StrFormat("%.2f×", p99), absl::StrCat(threads_idle)});
  std::string md = absl::StrCat(
      table.ToString(), "\nMedians over ", rounds, " rounds of ", calls,
      " sequential calls each way, the two measured one after the other in "
      "each round; every call tapped by every subscriber.\n");
  MarkdownTable goals({"goal", "measured", "verdict"});
  goals.AddRow({absl::StrCat("tap: p50 with ", subscribers,
                             " idle subscribers ≤ 1.5× none"),
                absl::StrFormat("**%.2f×**", p50),
                Verdict(p50 <= 1.5, absl::StrFormat("%.2f×", p50 / 1.5))});
  WriteResultsOrDie(out, {{"tap_load.csv", csv},
                          {"tap_load.md", md},
                          {"tap_load_goals.md", goals.ToString()}});
  std::fputs(md.c_str(), stdout);
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }

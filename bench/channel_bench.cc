// What mesh's own per-call path costs: a mesh::Channel call whose transport
// answers at once, inline, so the time is the route match, the pick, the
// retry bookkeeping, the metrics, the tap hook and the callbacks — not the
// network. The gRPC transport's own work (metadata, copies, the completion
// hand-off) is not in it; bench/e2e/overhead.cc measures the whole call.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mesh/channel.h"
#include "mesh/discovery.h"
#include "mesh/mesh.h"
#include "mesh/service_config.h"
#include "mesh/transport.h"
#include "tests/support/fake_transports.h"

namespace mesh {
namespace {

struct Fixture {
  std::unique_ptr<Mesh> mesh;
  std::unique_ptr<Channel> channel;
};

// A Mesh over StaticDiscovery with `endpoints` endpoints for "svc:80" and,
// with `routes`, a route table like a service profile's: `routes` gRPC
// method routes, the call matching the last one.
// With `split` > 0, the target's config splits traffic evenly among `split`
// backends ("b0.svc:80", ...), each with `endpoints` endpoints.
Fixture MakeFixture(int endpoints, int routes, int split = 0) {
  auto discovery = StaticDiscovery::Create();
  std::vector<Endpoint> list;
  for (int i = 0; i < endpoints; ++i) {
    list.emplace_back(absl::StrCat("10.0.", i / 250, ".", i % 250 + 1, ":80"));
  }
  (void)discovery->SetEndpoints("svc:80", list);
  ServiceConfig split_config;
  for (int i = 0; i < split; ++i) {
    std::string backend = absl::StrCat("b", i, ".svc:80");
    (void)discovery->SetEndpoints(backend, list);
    split_config.backends.push_back({backend, 1});
  }
  if (split > 0) (void)discovery->SetServiceConfig("svc:80", split_config);
  if (routes > 0) {
    ServiceConfig config = split_config;
    for (int i = 0; i < routes; ++i) {
      config.routes.push_back(RouteBuilder(absl::StrCat("M", i))
                                  .GrpcMethod("bench.Svc", absl::StrCat("M", i))
                                  .Build());
    }
    (void)discovery->SetServiceConfig("svc:80", std::move(config));
  }
  MeshOptions options;
  options.discovery = discovery;
  // Answers every request at once, on the caller's thread, with an echo.
  options.transport_factory = [] {
    return testing::NewInlineTransport(testing::EchoAnswer());
  };
  Fixture f;
  f.mesh = *Mesh::Create(std::move(options));
  f.channel = *f.mesh->NewChannel("svc:80");
  (void)f.channel->WaitForEndpoints(absl::Seconds(5));
  return f;
}

void BM_ChannelCallInstant(benchmark::State& state) {
  const int endpoints = static_cast<int>(state.range(0));
  const int routes = static_cast<int>(state.range(1));
  Fixture f = MakeFixture(endpoints, routes);
  const std::string method =
      routes > 0 ? absl::StrCat("/bench.Svc/M", routes - 1) : "/bench.Svc/M";
  const std::string body(64, 'x');
  CallOptions options;
  int64_t failed = 0;
  for (auto _ : state) {
    f.channel->CallRawAsync(method, body, options, [&](CallResult r) {
      if (!r.status.ok()) ++failed;
      benchmark::DoNotOptimize(r);
    });
  }
  if (failed > 0) state.SkipWithError("calls failed");
}
BENCHMARK(BM_ChannelCallInstant)
    ->ArgNames({"endpoints", "routes"})
    ->Args({1, 0})
    ->Args({100, 0})
    ->Args({100, 10})
    ->Args({100, 1000});

// The same through the synchronous CallRaw (the transport's SendAndWait:
// for this inline transport, its Send and a Notification).
void BM_ChannelCallRawSync(benchmark::State& state) {
  const int routes = static_cast<int>(state.range(0));
  Fixture f = MakeFixture(100, routes);
  const std::string method =
      routes > 0 ? absl::StrCat("/bench.Svc/M", routes - 1) : "/bench.Svc/M";
  const std::string body(64, 'x');
  int64_t failed = 0;
  for (auto _ : state) {
    CallResult r = f.channel->CallRaw(method, body);
    if (!r.status.ok()) ++failed;
    benchmark::DoNotOptimize(r);
  }
  if (failed > 0) state.SkipWithError("calls failed");
}
BENCHMARK(BM_ChannelCallRawSync)->ArgNames({"routes"})->Arg(0)->Arg(1000);

// A call whose target splits traffic among backends: the weighted draw and
// the backend's leg, looked up in the channel's picker.
void BM_ChannelCallSplit(benchmark::State& state) {
  const int backends = static_cast<int>(state.range(0));
  Fixture f = MakeFixture(100, 0, backends);
  const std::string body(64, 'x');
  CallOptions options;
  int64_t failed = 0;
  for (auto _ : state) {
    f.channel->CallRawAsync("/bench.Svc/M", body, options, [&](CallResult r) {
      if (!r.status.ok()) ++failed;
      benchmark::DoNotOptimize(r);
    });
  }
  if (failed > 0) state.SkipWithError("calls failed");
}
BENCHMARK(BM_ChannelCallSplit)->ArgNames({"backends"})->Arg(2)->Arg(8);

}  // namespace
}  // namespace mesh

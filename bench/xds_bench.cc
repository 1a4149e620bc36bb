// The local control plane's xDS push path (tools/mesh-control-plane/): what
// it costs to serve one target's ClusterLoadAssignment after a config
// change, from building the resource to a client having read it over ADS,
// and how much of a 100-target catalog a one-target change touches.
//
// Goal (the xDS control-plane issue): pushing a target of 10,000 endpoints
// (serialize + send one EDS response) ≤ 50 ms: BM_XdsEdsPushOverStream/10000.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "envoy/service/discovery/v3/discovery.grpc.pb.h"
#include "google/protobuf/any.pb.h"
#include "tools/mesh-control-plane/ads_stream.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/control_plane.h"
#include "tools/mesh-control-plane/xds_catalog.h"
#include "tools/mesh-control-plane/xds_resources.h"

namespace mesh::controlplane {
namespace {

namespace discovery = ::envoy::service::discovery::v3;

constexpr char kTarget[] = "books.local:7001";

// `n` endpoints "10.x.y.z:port" in three zones, weights 1..3, one in 50
// unhealthy. Sets of different `variant` share no address (another port).
std::vector<EndpointSpec> MakeEndpoints(size_t n, int variant) {
  static const char* const kZones[] = {"zone-a", "zone-b", "zone-c"};
  std::vector<EndpointSpec> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    EndpointSpec e;
    e.address = absl::StrCat("10.", (i >> 16) & 0xff, ".", (i >> 8) & 0xff, ".",
                             i & 0xff, ":", 8080 + variant);
    e.weight = static_cast<uint32_t>(1 + i % 3);
    e.zone = kZones[i % 3];
    e.healthy = i % 50 != 0;
    out.push_back(std::move(e));
  }
  return out;
}

// One target of `n` endpoints.
Config OneTarget(size_t n, int variant) {
  Config c;
  c.targets[kTarget].endpoints = MakeEndpoints(n, variant);
  return c;
}

// Arg 0: endpoints of the target. One target's ClusterLoadAssignment built
// and packed into an Any: what a config change costs the server per target
// before anything is compared or sent.
void BM_XdsEdsBuild(benchmark::State& state) {
  const TargetSpec spec{MakeEndpoints(static_cast<size_t>(state.range(0)), 0),
                        std::nullopt, std::nullopt};
  size_t bytes = 0;
  for (auto _ : state) {
    google::protobuf::Any any;
    any.PackFrom(LoadAssignmentFor(kTarget, spec));
    bytes = any.value().size();
    benchmark::DoNotOptimize(any);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_XdsEdsBuild)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond);

// Arg 0: endpoints of the target. A stream subscribed to the target's EDS
// resource; the catalog alternates between two versions of it (built before
// the loop). One iteration: AdsStream::Responses owes one EDS response,
// which is serialized as gRPC would write it.
void BM_XdsEdsResponse(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  auto first = XdsCatalog::Next(nullptr, BuildXdsResources(OneTarget(n, 0)));
  std::shared_ptr<const XdsCatalog> catalogs[2] = {
      XdsCatalog::Next(first.get(), BuildXdsResources(OneTarget(n, 1))),
      nullptr};
  catalogs[1] =
      XdsCatalog::Next(catalogs[0].get(), BuildXdsResources(OneTarget(n, 0)));
  AdsStream stream(1);
  discovery::DiscoveryRequest subscribe;
  subscribe.set_type_url(TypeUrl(XdsType::kEndpoints));
  subscribe.add_resource_names(ClusterName(kTarget));
  stream.OnRequest(subscribe);
  stream.Responses(*first);
  std::string wire;
  int64_t i = 0;
  for (auto _ : state) {
    std::vector<AdsResponse> owed = stream.Responses(*catalogs[i++ % 2]);
    if (owed.size() != 1 || owed[0].message.resources_size() != 1) {
      state.SkipWithError("not one EDS response of one resource");
      break;
    }
    owed[0].message.SerializeToString(&wire);
    benchmark::DoNotOptimize(wire.data());
  }
  state.counters["bytes"] = static_cast<double>(wire.size());
}
BENCHMARK(BM_XdsEdsResponse)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMicrosecond);

// Arg 0: endpoints of the target. End to end on loopback: a ControlPlane
// and a raw ADS client (the generated stub, sync API) subscribed to the
// target's EDS resource, its first response ACKed. One iteration: SetConfig
// with the target's other endpoint set (the two configs are built before
// the loop; copying one is not timed), then the client reads the EDS
// response and ACKs it. Every read is bounded by the stream's deadline.
void BM_XdsEdsPushOverStream(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const Config configs[2] = {OneTarget(n, 1), OneTarget(n, 0)};
  auto cp = ControlPlane::Start("127.0.0.1:0", configs[1]);
  if (!cp.ok()) {
    state.SkipWithError(std::string(cp.status().message()).c_str());
    return;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  auto stub = discovery::AggregatedDiscoveryService::NewStub(
      grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", (*cp)->port()),
                                grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(60));
  auto stream = stub->StreamAggregatedResources(&context);

  discovery::DiscoveryRequest request;
  request.set_type_url(TypeUrl(XdsType::kEndpoints));
  request.add_resource_names(ClusterName(kTarget));
  discovery::DiscoveryResponse response;
  // Reads one EDS response of one resource and ACKs it.
  auto read_and_ack = [&]() {
    if (!stream->Read(&response) ||
        response.type_url() != TypeUrl(XdsType::kEndpoints) ||
        response.resources_size() != 1) {
      return false;
    }
    request.set_version_info(response.version_info());
    request.set_response_nonce(response.nonce());
    return stream->Write(request);
  };
  if (!stream->Write(request) || !read_and_ack()) {
    state.SkipWithError("the first EDS response did not arrive");
  }
  const size_t bytes = response.ByteSizeLong();

  int64_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Config next = configs[i++ % 2];
    state.ResumeTiming();
    (*cp)->SetConfig(std::move(next));
    if (!read_and_ack()) {
      state.SkipWithError("the ADS stream broke or timed out");
      break;
    }
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.SetLabel(absl::StrCat(bytes / 1024, " KiB response"));
  stream->WritesDone();
  stream->Finish().IgnoreError();
}
BENCHMARK(BM_XdsEdsPushOverStream)
    ->Arg(1000)
    ->Arg(10000)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// 100 targets of 100 endpoints each; one iteration changes one target's
// endpoints (alternating between two sets): the whole config turned into
// resources and versioned against the catalog before, as a file change
// does. Counters: resources whose version changed (only that target's
// ClusterLoadAssignment should), and types whose version changed.
void BM_XdsFileChangeOneTarget(benchmark::State& state) {
  constexpr int kTargets = 100;
  constexpr size_t kEndpoints = 100;
  constexpr int kChanged = 42;
  Config configs[2];
  for (int t = 0; t < kTargets; ++t) {
    std::string target = absl::StrCat("svc", t, ".local:7001");
    for (int v = 0; v < 2; ++v) {
      configs[v].targets[target].endpoints =
          MakeEndpoints(kEndpoints, t == kChanged ? v : 0);
    }
  }
  std::shared_ptr<const XdsCatalog> catalog =
      XdsCatalog::Next(nullptr, BuildXdsResources(configs[0]));
  size_t resources = 0;
  for (XdsType type : kAllXdsTypes)
    resources += catalog->resources(type).size();
  int64_t changed_resources = 0;
  int64_t changed_types = 0;
  int64_t i = 1;
  for (auto _ : state) {
    std::shared_ptr<const XdsCatalog> next =
        XdsCatalog::Next(catalog.get(), BuildXdsResources(configs[i++ % 2]));
    state.PauseTiming();
    int64_t resources_now = 0;
    int64_t types_now = 0;
    for (XdsType type : kAllXdsTypes) {
      if (next->version(type) != catalog->version(type)) ++types_now;
      const auto& before = catalog->resources(type);
      for (const auto& [name, r] : next->resources(type)) {
        auto old = before.find(name);
        if (old == before.end() || old->second.version != r.version)
          ++resources_now;
      }
    }
    // The worst iteration: any that changed more shows.
    changed_resources = std::max(changed_resources, resources_now);
    changed_types = std::max(changed_types, types_now);
    catalog = std::move(next);
    state.ResumeTiming();
  }
  state.counters["changed_resources"] = static_cast<double>(changed_resources);
  state.counters["changed_types"] = static_cast<double>(changed_types);
  state.SetLabel(
      absl::StrCat(changed_resources, " of ", resources, " resources changed"));
}
BENCHMARK(BM_XdsFileChangeOneTarget)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mesh::controlplane

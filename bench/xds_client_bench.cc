// What mesh's own xDS client (src/discovery/xds/) costs: an EDS update of
// 10,000 endpoints from the bytes received to the endpoints a channel's
// balancer picks from; the same end to end, from an edit of the local
// control plane's file to the channel's balancer; and a call's route match
// against xDS routes with header matchers.
//
// Goals (the xDS client issue): an EDS update of 10,000 endpoints applied
// ≤ 10 ms (BM_XdsEdsApply10k); a call matching the 10th of 10 routes with
// header matchers ≤ 1 µs of route work (BM_XdsRouteMatch10thOf10).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "google/protobuf/arena.h"
#include "mesh/channel.h"
#include "mesh/endpoint.h"
#include "mesh/mesh.h"
#include "mesh/xds.h"
#include "src/balance/balancer.h"
#include "src/base/timer_thread.h"
#include "src/channel/destination.h"
#include "src/discovery/xds/xds_client.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/discovery/xds/xds_resources.h"
#include "src/discovery/xds/xds_service_config.h"
#include "src/metrics/metrics_registry.h"
#include "src/route/route_table.h"
#include "src/tap/tap_hub.h"
#include "tests/support/fake_transports.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/control_plane.h"
#include "tools/mesh-control-plane/xds_resources.h"

namespace mesh::internal {
namespace {

namespace endpoint_v3 = ::envoy::config::endpoint::v3;
namespace route_v3 = ::envoy::config::route::v3;
using controlplane::EndpointSpec;

constexpr char kTarget[] = "books.local:7001";
constexpr size_t kEndpoints = 10000;

std::string AddressOf(size_t i) {
  return absl::StrCat("10.", (i >> 16) & 0xff, ".", (i >> 8) & 0xff, ".",
                      i & 0xff, ":8080");
}

// Endpoints first..first+n-1, as bench/xds_bench.cc makes them: three zones,
// weights 1..3, every 50th (by index) unhealthy. The sets from 0 and from
// kEndpoints / 2 share half their addresses.
std::vector<EndpointSpec> MakeSpecs(size_t first, size_t n) {
  static const char* const kZones[] = {"zone-a", "zone-b", "zone-c"};
  std::vector<EndpointSpec> out;
  out.reserve(n);
  for (size_t i = first; i < first + n; ++i) {
    EndpointSpec e;
    e.address = AddressOf(i);
    e.weight = static_cast<uint32_t>(1 + i % 3);
    e.zone = kZones[i % 3];
    e.healthy = i % 50 != 0;
    out.push_back(std::move(e));
  }
  return out;
}

// The addresses of `specs` a client serves (the healthy ones), sorted.
std::vector<std::string> Served(const std::vector<EndpointSpec>& specs) {
  std::vector<std::string> out;
  for (const EndpointSpec& e : specs) {
    if (e.healthy) out.push_back(e.address);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One EDS update of 10,000 endpoints as the client handles it: the
// ClusterLoadAssignment parsed from the bytes received (what the client's
// Decode does with the response's Any), converted and validated, the
// endpoints to serve picked (first priority, locality weights), and the
// Reset applied to a cluster's Destination — the Mesh's endpoint set and
// its lookup index — with one channel's P2C balancer attached, as a
// channel's leg has. The Destination's transport is an inline fake, whose
// RetainOnly does nothing (the gRPC transport's is not measured). The wire
// messages are those mesh-control-plane sends (LoadAssignmentFor); iterations
// alternate between two sets that share half their addresses, so every update
// replaces 5,000 endpoints and keeps 5,000.
void BM_XdsEdsApply10k(benchmark::State& state) {
  const std::vector<EndpointSpec> specs[2] = {
      MakeSpecs(0, kEndpoints), MakeSpecs(kEndpoints / 2, kEndpoints)};
  std::string wire[2];
  for (int v = 0; v < 2; ++v) {
    controlplane::LoadAssignmentFor(kTarget,
                                    {specs[v], std::nullopt, std::nullopt})
        .SerializeToString(&wire[v]);
  }
  Destination destination(
      absl::StrCat("xds cluster ", controlplane::ClusterName(kTarget)), "",
      testing::NewInlineTransport(testing::EchoAnswer()),
      std::make_shared<TapHub>(), std::make_shared<MetricsRegistry>(),
      std::make_shared<TimerThread>());
  absl::StatusOr<std::unique_ptr<Balancer>> balancer =
      Balancer::Create(BalancerOptions{});
  if (!balancer.ok()) {
    state.SkipWithError("no balancer");
    return;
  }
  destination.Attach(balancer->get());
  // Apply parses, converts and delivers one update; false if it fails.
  auto apply = [&destination](const std::string& bytes) {
    // On an arena, as the client's Decode parses.
    google::protobuf::Arena arena;
    endpoint_v3::ClusterLoadAssignment& assignment =
        *google::protobuf::Arena::CreateMessage<
            endpoint_v3::ClusterLoadAssignment>(&arena);
    if (!assignment.ParseFromString(bytes)) return false;
    absl::StatusOr<xds::EndpointsResource> resource =
        xds::ConvertClusterLoadAssignment(assignment);
    if (!resource.ok()) return false;
    std::vector<Endpoint> endpoints = xds::EndpointsToServe(*resource);
    if (endpoints.empty()) return false;
    BackendPolicy policy;
    policy.max_requests = 1024;  // a Cluster's default, as the client sends
    destination.OnBackendPolicy(policy);
    destination.OnEndpointUpdate(EndpointUpdate::Reset(std::move(endpoints)));
    return true;
  };
  // Start from the first set, so that the first timed update is a change.
  bool ok = apply(wire[0]);
  uint64_t i = 1;
  for (auto _ : state) {
    if (!ok) break;
    ok = apply(wire[i++ & 1]);
  }
  if (!ok) state.SkipWithError("an EDS update was not applied");
  // The balancer holds the last set applied, and only it.
  std::vector<std::string> held;
  for (const EndpointStats& s : (*balancer)->Stats()) held.push_back(s.address);
  if (ok && held != Served(specs[(i - 1) & 1])) {
    state.SkipWithError("the balancer does not hold the last set");
  }
  state.counters["endpoints"] = static_cast<double>(held.size());
  state.SetLabel(absl::StrCat(held.size(), " endpoints served, ",
                              wire[0].size() / 1024, " KiB on the wire"));
  destination.Detach(balancer->get());
  destination.Shutdown();
}
BENCHMARK(BM_XdsEdsApply10k)->Unit(benchmark::kMillisecond);

// mesh-control-plane's config file with one target and `specs`.
std::string ConfigJson(const std::vector<EndpointSpec>& specs) {
  std::string out =
      absl::StrCat(R"({"targets": {")", kTarget, R"(": {"endpoints": [)");
  for (size_t i = 0; i < specs.size(); ++i) {
    const EndpointSpec& e = specs[i];
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", R"({"address": ")", e.address,
                    R"(", "weight": )", e.weight, R"(, "zone": ")", e.zone,
                    "\"", e.healthy ? "" : R"(, "healthy": false)", "}");
  }
  absl::StrAppend(&out, "\n]}}}\n");
  return out;
}

// Whether `stats` (sorted by address) hold `address`.
bool Holds(const std::vector<EndpointStats>& stats,
           const std::string& address) {
  auto it = std::lower_bound(stats.begin(), stats.end(), address,
                             [](const EndpointStats& s, const std::string& a) {
                               return s.address < a;
                             });
  return it != stats.end() && it->address == address;
}

// A ControlPlane following a config file, a Mesh whose discovery is
// NewXdsDiscovery pointed at it, and a channel to kTarget with its cluster's
// leg (made by WaitForEndpoints).
struct XdsMesh {
  absl::Status Start(const std::string& path) {
    auto started = controlplane::ControlPlane::Start("127.0.0.1:0", {});
    if (!started.ok()) return started.status();
    cp = *std::move(started);
    if (absl::Status s = cp->WatchFile(path, absl::Milliseconds(1)); !s.ok()) {
      return s;
    }
    XdsOptions xds;
    xds.bootstrap_json = absl::StrCat(
        R"({"xds_servers": [{"server_uri": "127.0.0.1:)", cp->port(),
        R"(", "channel_creds": [{"type": "insecure"}],)",
        R"( "server_features": ["xds_v3"]}],)",
        R"( "node": {"id": "mesh-bench", "metadata": {"GENERATOR": "grpc"}}})");
    absl::StatusOr<std::shared_ptr<DiscoverySource>> source =
        NewXdsDiscovery(xds);
    if (!source.ok()) return source.status();
    MeshOptions options;
    options.discovery = *source;
    absl::StatusOr<std::unique_ptr<Mesh>> made = Mesh::Create(options);
    if (!made.ok()) return made.status();
    mesh = *std::move(made);
    absl::StatusOr<std::unique_ptr<Channel>> opened =
        mesh->NewChannel(absl::StrCat("xds:///", kTarget));
    if (!opened.ok()) return opened.status();
    channel = *std::move(opened);
    return channel->WaitForEndpoints(absl::Seconds(30));
  }

  // Destroyed in reverse order: the channel, the Mesh, the control plane.
  std::unique_ptr<controlplane::ControlPlane> cp;
  std::unique_ptr<Mesh> mesh;
  std::unique_ptr<Channel> channel;
};

// End to end through the real client on 127.0.0.1 (XdsMesh): the
// ControlPlane looks at its file every 1 ms; the file holds one target of
// 10,000 endpoints; the Mesh has its default gRPC transport (no call is
// made, so nothing connects). One iteration: the file replaced by the other
// set (written aside, then renamed: the clock starts at the rename) until
// Channel::EndpointStatsSnapshot shows the new set (looked at every
// 0.5 ms). In between: the control plane's stat, read and parse of the
// file (~600 KiB of JSON), its resources rebuilt and versioned, the EDS
// response serialized and sent; the client's parse, conversion and the
// Destination's apply. Manual time: only rename → visible counts. Counter
// server_ms: the control plane's share, rename → its new catalog.
void BM_XdsEdsEndToEnd10k(benchmark::State& state) {
  const std::vector<EndpointSpec> specs[2] = {
      MakeSpecs(0, kEndpoints), MakeSpecs(kEndpoints / 2, kEndpoints)};
  const std::string json[2] = {ConfigJson(specs[0]), ConfigJson(specs[1])};
  // An address only in each set (index 0 is unhealthy, so 1 and 1 + N).
  const std::string only_in[2] = {AddressOf(1), AddressOf(kEndpoints + 1)};
  const std::string path =
      (std::filesystem::temp_directory_path() /
       absl::StrCat("mesh_xds_client_bench_", getpid(), ".json"))
          .string();
  const std::string aside = path + ".tmp";
  auto write = [](const std::string& to, const std::string& text) {
    std::ofstream out(to, std::ios::trunc | std::ios::binary);
    out << text;
    return static_cast<bool>(out.flush());
  };
  using Clock = std::chrono::steady_clock;
  // Until the channel's balancers hold set `v` (bounded: 10 s). Notes in
  // `*served` (if still kNever) when the control plane's catalog first
  // differs from `before`: the file applied, the resources rebuilt and
  // versioned.
  static constexpr Clock::time_point kNever = Clock::time_point::max();
  auto wait_for = [&only_in](XdsMesh& x, int v,
                             const std::shared_ptr<const void>& before,
                             Clock::time_point* served) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      if (*served == kNever && x.cp->ads().catalog() != before) {
        *served = Clock::now();
      }
      std::vector<EndpointStats> stats = x.channel->EndpointStatsSnapshot();
      if (Holds(stats, only_in[v]) && !Holds(stats, only_in[1 - v])) {
        return true;
      }
      absl::SleepFor(absl::Microseconds(500));
    }
    return false;
  };
  if (!write(path, json[0])) {
    state.SkipWithError("cannot write the config file");
    return;
  }
  XdsMesh x;
  absl::Status started = x.Start(path);
  Clock::time_point served = kNever;
  bool ok = started.ok() && wait_for(x, 0, nullptr, &served);
  if (!ok) {
    state.SkipWithError(absl::StrCat("the channel did not get the first set: ",
                                     started.ToString())
                            .c_str());
  }
  uint64_t i = 1;
  double server_seconds = 0;
  for (auto _ : state) {
    if (!ok) break;
    const int v = static_cast<int>(i++ & 1);
    if (!write(aside, json[v])) {
      state.SkipWithError("cannot write the config file");
      ok = false;
      break;
    }
    const std::shared_ptr<const void> before = x.cp->ads().catalog();
    served = kNever;
    const Clock::time_point start = Clock::now();
    const bool renamed = std::rename(aside.c_str(), path.c_str()) == 0;
    const bool seen = renamed && wait_for(x, v, before, &served);
    const Clock::time_point end = Clock::now();
    if (!seen || served == kNever) {
      state.SkipWithError("the new set did not reach the channel in 10 s");
      ok = false;
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    server_seconds += std::chrono::duration<double>(served - start).count();
  }
  state.counters["server_ms"] = benchmark::Counter(
      server_seconds * 1e3 / std::max<double>(1, static_cast<double>(i - 1)));
  if (ok) {
    // The channel holds the last set, and only it.
    std::vector<std::string> held;
    for (const EndpointStats& s : x.channel->EndpointStatsSnapshot()) {
      held.push_back(s.address);
    }
    if (held != Served(specs[(i - 1) & 1])) {
      state.SkipWithError("the channel does not hold the last set");
    } else if (x.cp->rejected_files() != 0) {
      state.SkipWithError("the control plane rejected a file version");
    }
  }
  state.SetLabel(absl::StrCat(json[0].size() / 1024, " KiB file"));
  std::remove(path.c_str());
}
BENCHMARK(BM_XdsEdsEndToEnd10k)->UseManualTime()->Unit(benchmark::kMillisecond);

// A RouteConfiguration as wire protos: one virtual host for the target, 10
// routes, each with the path prefix "/books.Library/" and two header
// matchers (string_match exact "x-tenant: acme", string_match prefix
// "x-version: v<i>."), each to its own cluster.
route_v3::RouteConfiguration TenRoutes() {
  route_v3::RouteConfiguration config;
  config.set_name(controlplane::ClusterName(kTarget));
  route_v3::VirtualHost* vhost = config.add_virtual_hosts();
  vhost->set_name("books");
  vhost->add_domains(kTarget);
  for (int i = 0; i < 10; ++i) {
    route_v3::Route* route = vhost->add_routes();
    route->set_name(absl::StrCat("v", i));
    route->mutable_match()->set_prefix("/books.Library/");
    route_v3::HeaderMatcher* tenant = route->mutable_match()->add_headers();
    tenant->set_name("x-tenant");
    tenant->mutable_string_match()->set_exact("acme");
    route_v3::HeaderMatcher* version = route->mutable_match()->add_headers();
    version->set_name("x-version");
    version->mutable_string_match()->set_prefix(absl::StrCat("v", i, "."));
    route->mutable_route()->set_cluster(
        absl::StrCat("outbound|7001|v", i, "|books.local"));
  }
  return config;
}

// A call that matches only the 10th of TenRoutes(): every route's prefix and
// exact header hold, and the first nine fail on their last condition, the
// version prefix (the worst case short of no match). The routes go through
// the client's own path: ConvertRouteConfiguration, BuildServiceConfig for
// the target, RouteTable::Build (as a Destination compiles a config). One
// iteration: RouteTable::Match on a request head of 6 headers, x-tenant
// and x-version the last two.
void BM_XdsRouteMatch10thOf10(benchmark::State& state) {
  absl::StatusOr<xds::RouteConfigResource> routes =
      xds::ConvertRouteConfiguration(TenRoutes());
  xds::ListenerResource listener;
  listener.name = kTarget;
  listener.route_config_name = controlplane::ClusterName(kTarget);
  absl::StatusOr<ServiceConfig> config =
      routes.ok() ? xds::BuildServiceConfig(listener, *routes, kTarget)
                  : absl::StatusOr<ServiceConfig>(routes.status());
  if (!config.ok()) {
    state.SkipWithError(std::string(config.status().message()).c_str());
    return;
  }
  std::vector<std::string> dropped;
  std::shared_ptr<const RouteTable> table =
      RouteTable::Build(*config, &dropped);
  const std::vector<std::pair<std::string, std::string>> headers = {
      {"content-type", "application/grpc"},
      {"te", "trailers"},
      {"user-agent", "grpc-c++/1.51.1 mesh/0.1"},
      {"grpc-accept-encoding", "identity,deflate,gzip"},
      {"x-tenant", "acme"},
      {"x-version", "v9.2"}};
  const RequestHead head{"POST", "/books.Library/GetBook", &headers};
  if (!dropped.empty() || table->size() != 10 ||
      table->Match(head).index != 9) {
    state.SkipWithError("the request does not match the 10th route");
    return;
  }
  for (auto _ : state) {
    const CompiledRoute& r = table->Match(head);
    benchmark::DoNotOptimize(&r);
  }
}
BENCHMARK(BM_XdsRouteMatch10thOf10);

}  // namespace
}  // namespace mesh::internal

#include "tests/support/xds_fixtures.h"

#include <cmath>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "envoy/extensions/filters/http/router/v3/router.pb.h"
#include "mesh/xds.h"
#include "src/discovery/xds/xds_client.h"
#include "tests/support/test_support.h"

namespace mesh::testing {

using envoy::config::cluster::v3::Cluster;
using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using envoy::extensions::filters::network::http_connection_manager::v3::
    HttpConnectionManager;
using envoy::extensions::filters::network::http_connection_manager::v3::
    HttpFilter;
using envoy::service::discovery::v3::DiscoveryRequest;
using internal::xds::ResourceType;
using internal::xds::TypeUrl;
using tools::EchoBackend;

Listener MakeListener(const std::string& name,
                      const std::string& route_config_name,
                      const std::vector<HttpFilter>& filters,
                      const std::string& hcm) {
  HttpConnectionManager manager = Parse<HttpConnectionManager>(hcm);
  manager.mutable_rds()->mutable_config_source()->mutable_ads();
  manager.mutable_rds()->set_route_config_name(route_config_name);
  for (const HttpFilter& f : filters) *manager.add_http_filters() = f;
  HttpFilter* router = manager.add_http_filters();
  router->set_name("router");
  router->mutable_typed_config()->PackFrom(
      envoy::extensions::filters::http::router::v3::Router());
  Listener listener;
  listener.set_name(name);
  listener.mutable_api_listener()->mutable_api_listener()->PackFrom(manager);
  return listener;
}

std::string PlaintextBootstrap(const std::string& server_address) {
  return absl::StrCat(R"({"xds_servers": [{"server_uri": ")", server_address,
                      R"(", "channel_creds": [{"type": "insecure"}]}],)",
                      R"( "node": {"id": "n"}})");
}

std::string RouteTo(const std::string& cluster, const std::string& match,
                    const std::string& action, const std::string& extra) {
  return absl::StrCat(
      "routes { match { ", match.empty() ? "prefix: \"\"" : match,
      " } route { cluster: \"", cluster, "\" ", action, " } ", extra, " }");
}

RouteConfiguration OneHostRoutes(const std::string& name,
                                 const std::string& routes) {
  return Parse<RouteConfiguration>(absl::StrCat(
      "name: \"", name, "\" virtual_hosts { name: \"svc\" domains: \"*\" ",
      routes, " }"));
}

Cluster MakeEdsCluster(const std::string& name, const std::string& service_name,
                       const std::string& extra) {
  Cluster cluster = Parse<Cluster>(absl::StrCat(
      "name: \"", name, "\" ", extra,
      " eds_cluster_config { eds_config { ads {} } service_name: \"",
      service_name, "\" }"));
  if (cluster.cluster_discovery_type_case() ==
      Cluster::CLUSTER_DISCOVERY_TYPE_NOT_SET) {
    cluster.set_type(Cluster::EDS);
  }
  return cluster;
}

ClusterLoadAssignment MakeCla(const std::string& name,
                              const std::vector<Locality>& localities) {
  ClusterLoadAssignment cla;
  cla.set_cluster_name(name);
  for (const Locality& l : localities) {
    auto* out = cla.add_endpoints();
    out->mutable_locality()->set_zone(l.zone);
    out->mutable_load_balancing_weight()->set_value(1);
    out->set_priority(l.priority);
    for (const auto& [address, health] : l.endpoints) {
      auto* e = out->add_lb_endpoints();
      const size_t colon = address.rfind(':');
      auto* socket =
          e->mutable_endpoint()->mutable_address()->mutable_socket_address();
      socket->set_address(address.substr(0, colon));
      socket->set_port_value(
          static_cast<uint32_t>(std::stoi(address.substr(colon + 1))));
      e->set_health_status(health);
    }
  }
  return cla;
}

ClusterLoadAssignment ClaOf(const std::string& name,
                            const std::vector<const EchoBackend*>& backends) {
  Locality l{"z1", 0, {}};
  for (const EchoBackend* b : backends) {
    l.endpoints.emplace_back(b->address(), envoy::config::core::v3::HEALTHY);
  }
  return MakeCla(name, {l});
}

ClusterLoadAssignment ClaOf(const std::string& name, const Backends& backends) {
  std::vector<const EchoBackend*> all;
  for (const auto& b : backends) all.push_back(b.get());
  return ClaOf(name, all);
}

absl::StatusOr<std::unique_ptr<Mesh>> MakeXdsMesh(
    const std::string& server_address, const XdsMeshOptions& options) {
  XdsOptions xds;
  xds.bootstrap_json = absl::StrCat(
      R"({"xds_servers": [{"server_uri": ")", server_address,
      R"(", "channel_creds": [{"type": "insecure"}])",
      options.server_features.empty()
          ? ""
          : absl::StrCat(R"(, "server_features": )", options.server_features),
      R"(}], "node": )", options.node, "}");
  xds.resource_timeout = options.resource_timeout;
  xds.backoff_min = options.backoff_min;
  xds.backoff_max = options.backoff_max;
  xds.honour_round_robin = options.honour_round_robin;
  xds.dns = options.dns;
  absl::StatusOr<std::shared_ptr<DiscoverySource>> source =
      NewXdsDiscovery(xds);
  if (!source.ok()) return source.status();
  MeshOptions mesh_options;
  mesh_options.discovery = *std::move(source);
  mesh_options.tap_address = options.tap_address;
  return Mesh::Create(mesh_options);
}

void ExpectShare(int got, int n, double p) {
  const double mean = n * p;
  const double sigma = std::sqrt(n * p * (1 - p));
  EXPECT_NEAR(got, mean, 6 * sigma)
      << got << " of " << n << ", expected share " << p << " (6 sigma)";
}

// --- AdsResponder ------------------------------------------------------------

AdsResponder::AdsResponder(ScriptedAdsServer& server)
    : server_(server), thread_([this] { Serve(); }) {}

AdsResponder::~AdsResponder() { Stop(); }

void AdsResponder::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void AdsResponder::Serve() {
  while (!stop_.load()) {
    std::optional<DiscoveryRequest> r =
        server_.NextRequest(absl::Milliseconds(50));
    if (!r.has_value()) continue;
    internal::MutexLock lock(&mu_);
    if (!r->response_nonce().empty()) {
      answers_[r->response_nonce()] =
          r->has_error_detail() ? r->error_detail().message() : "";
    }
    Type& t = types_[r->type_url()];
    std::vector<std::string> names(r->resource_names().begin(),
                                   r->resource_names().end());
    const bool answer =
        t.asked && names == t.names && !r->response_nonce().empty();
    t.asked = true;
    t.names = std::move(names);
    if (!answer) SendLocked(r->type_url());
  }
}

std::string AdsResponder::SendLocked(const std::string& type_url) {
  Type& t = types_[type_url];
  std::vector<const google::protobuf::Message*> resources;
  for (const std::string& name : t.names) {
    auto it = t.resources.find(name);
    if (it != t.resources.end()) resources.push_back(it->second.get());
  }
  std::string nonce;
  server_.Send(MakeResponse(type_url, absl::StrCat(t.version), resources),
               &nonce);
  return nonce;
}

std::string AdsResponder::Put(
    const std::string& type_url, const std::string& name,
    std::shared_ptr<const google::protobuf::Message> resource) {
  internal::MutexLock lock(&mu_);
  Type& t = types_[type_url];
  t.resources[name] = std::move(resource);
  ++t.version;
  return t.asked ? SendLocked(type_url) : "";
}

std::string AdsResponder::Set(const Listener& resource) {
  return Put(TypeUrl(ResourceType::kListener), resource.name(),
             std::make_shared<Listener>(resource));
}
std::string AdsResponder::Set(const RouteConfiguration& resource) {
  return Put(TypeUrl(ResourceType::kRouteConfig), resource.name(),
             std::make_shared<RouteConfiguration>(resource));
}
std::string AdsResponder::Set(const Cluster& resource) {
  return Put(TypeUrl(ResourceType::kCluster), resource.name(),
             std::make_shared<Cluster>(resource));
}
std::string AdsResponder::Set(const ClusterLoadAssignment& resource) {
  return Put(TypeUrl(ResourceType::kEndpoints), resource.cluster_name(),
             std::make_shared<ClusterLoadAssignment>(resource));
}

void AdsResponder::AwaitApplied(const std::string& nonce) {
  ASSERT_FALSE(nonce.empty()) << "not asked for yet";
  ASSERT_NO_FATAL_FAILURE(AwaitAck(nonce));
  std::string sync;
  {
    internal::MutexLock lock(&mu_);
    sync = SendLocked(TypeUrl(ResourceType::kEndpoints));
  }
  ASSERT_NO_FATAL_FAILURE(AwaitAck(sync));
}

void AdsResponder::AwaitAck(const std::string& nonce) {
  std::optional<std::string> error;
  ASSERT_TRUE(WaitFor([&] {
    internal::MutexLock lock(&mu_);
    auto it = answers_.find(nonce);
    if (it != answers_.end()) error = it->second;
    return error.has_value();
  })) << "no answer to response "
      << nonce;
  ASSERT_EQ(*error, "") << "NACK of response " << nonce;
}

void AdsResponder::AwaitNack(const std::string& nonce, std::string* error) {
  ASSERT_FALSE(nonce.empty()) << "not asked for yet";
  std::optional<std::string> answer;
  ASSERT_TRUE(WaitFor([&] {
    internal::MutexLock lock(&mu_);
    auto it = answers_.find(nonce);
    if (it == answers_.end()) return false;
    answer = it->second;
    // Expected: not one for ExpectNoNacks.
    answers_.erase(it);
    return true;
  })) << "no answer to response "
      << nonce;
  ASSERT_NE(*answer, "") << "ACK of response " << nonce;
  *error = *answer;
}

void AdsResponder::ExpectNoNacks() const {
  internal::MutexLock lock(&mu_);
  for (const auto& [nonce, error] : answers_) {
    EXPECT_EQ(error, "") << "NACK of response " << nonce;
  }
}

// --- XdsTargetTest -----------------------------------------------------------

void XdsTargetTest::SetUp() {
  server_ = ScriptedAdsServer::Start();
  responder_ = std::make_unique<AdsResponder>(*server_);
}

void XdsTargetTest::TearDown() {
  channel_.reset();
  mesh_.reset();
  responder_->Stop();
  responder_->ExpectNoNacks();
  responder_.reset();
  server_.reset();
}

RouteConfiguration XdsTargetTest::OneHost(const std::string& routes) {
  return OneHostRoutes(kRoutes, routes);
}

ClusterLoadAssignment XdsTargetTest::Cla(
    const std::string& cluster,
    const std::vector<const EchoBackend*>& backends) {
  return ClaOf(cluster + "-cla", backends);
}

void XdsTargetTest::AddCluster(const std::string& name,
                               const std::vector<const EchoBackend*>& backends,
                               const std::string& extra) {
  Set(MakeEdsCluster(name, name + "-cla", extra));
  Set(Cla(name, backends));
  for (const EchoBackend* b : backends) cluster_of_[b->address()] = name;
}

std::string XdsTargetTest::ServedBy(const CallResult& r) const {
  if (!r.status.ok()) return r.status.ToString();
  auto it = cluster_of_.find(r.endpoint);
  return it == cluster_of_.end() ? "unknown " + r.endpoint : it->second;
}

void XdsTargetTest::ServeOneCluster(const Backends& backends,
                                    const RouteConfiguration& routes,
                                    const Listener& listener) {
  Set(listener);
  Set(routes);
  std::vector<const EchoBackend*> all;
  for (const auto& b : backends) all.push_back(b.get());
  AddCluster(kCluster, all);
}

void XdsTargetTest::MakeMesh(const ChannelOptions& options,
                             const XdsMeshOptions& xds_options) {
  absl::StatusOr<std::unique_ptr<Mesh>> mesh =
      MakeXdsMesh(server_->address(), xds_options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  mesh_ = *std::move(mesh);
  channel_ = NewChannel(options);
  ASSERT_NE(channel_, nullptr);
  absl::Status ready = channel_->WaitForEndpoints(absl::Seconds(10));
  ASSERT_TRUE(ready.ok()) << ready;
}

std::unique_ptr<Channel> XdsTargetTest::NewChannel(
    const ChannelOptions& options) {
  auto channel = mesh_->NewChannel(absl::StrCat("xds:///", kTarget), options);
  EXPECT_TRUE(channel.ok()) << channel.status();
  return channel.ok() ? *std::move(channel) : nullptr;
}

CallResult XdsTargetTest::Call(const std::string& method, Metadata metadata) {
  CallOptions options;
  options.metadata = std::move(metadata);
  return channel_->CallRaw(method, "hello", options);
}

}  // namespace mesh::testing

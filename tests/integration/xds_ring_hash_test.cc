// RING_HASH through mesh's xDS client: a Cluster with lb_policy RING_HASH and
// a route whose hash_policy names a header send every call with the same
// header value to the same endpoint (gRFC A42), spread different values
// over the endpoints, and calls without the header at random. The resources
// come from a scripted ADS server on 127.0.0.1 (mesh-control-plane sends no
// RING_HASH); the backends are real.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/extensions/filters/http/router/v3/router.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "mesh/xds.h"
#include "src/discovery/xds/xds_client.h"
#include "tests/support/scripted_ads_server.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

using envoy::config::cluster::v3::Cluster;
using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using envoy::extensions::filters::network::http_connection_manager::v3::
    HttpConnectionManager;
using internal::xds::ResourceType;
using internal::xds::TypeUrl;
using testing::ScriptedAdsServer;
using tools::EchoBackend;

using Backends = std::vector<std::unique_ptr<EchoBackend>>;

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message))
      << text;
  return message;
}

class XdsRingHashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = ScriptedAdsServer::Start();
    backends_ = testing::StartBackends(4);
    XdsOptions xds;
    xds.bootstrap_json =
        absl::StrCat(R"({"xds_servers": [{"server_uri": ")", server_->address(),
                     R"(", "channel_creds": [{"type": "insecure"}]}],)",
                     R"( "node": {"id": "ring-hash-test"}})");
    auto source = NewXdsDiscovery(xds);
    ASSERT_TRUE(source.ok()) << source.status();
    MeshOptions options;
    options.discovery = *source;
    auto mesh = Mesh::Create(options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewChannel("xds:///ring.test:7001");
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
    ASSERT_NO_FATAL_FAILURE(ServeChain());
  }
  void TearDown() override {
    channel_.reset();
    mesh_.reset();
    server_.reset();
  }

  // Answers the client's first request of each type with the chain: a
  // RING_HASH cluster, a route hashing on x-user.
  void ServeChain() {
    HttpConnectionManager hcm = Parse<HttpConnectionManager>(R"(
        rds { config_source { ads {} } route_config_name: "ring-routes" })");
    auto* router = hcm.add_http_filters();
    router->set_name("router");
    router->mutable_typed_config()->PackFrom(
        envoy::extensions::filters::http::router::v3::Router());
    Listener listener;
    listener.set_name("ring.test:7001");
    listener.mutable_api_listener()->mutable_api_listener()->PackFrom(hcm);
    const RouteConfiguration routes = Parse<RouteConfiguration>(R"(
        name: "ring-routes"
        virtual_hosts {
          name: "ring" domains: "*"
          routes {
            match { prefix: "" }
            route {
              cluster: "ring-cluster"
              hash_policy { header { header_name: "x-user" } }
            }
          }
        })");
    const Cluster cluster = Parse<Cluster>(R"(
        name: "ring-cluster" type: EDS lb_policy: RING_HASH
        ring_hash_lb_config { minimum_ring_size { value: 1024 } }
        eds_cluster_config { eds_config { ads {} } service_name: "ring-cla" })");
    ClusterLoadAssignment cla;
    cla.set_cluster_name("ring-cla");
    auto* locality = cla.add_endpoints();
    locality->mutable_locality()->set_zone("z1");
    locality->mutable_load_balancing_weight()->set_value(1);
    for (const auto& b : backends_) {
      auto* socket = locality->add_lb_endpoints()
                         ->mutable_endpoint()
                         ->mutable_address()
                         ->mutable_socket_address();
      socket->set_address("127.0.0.1");
      socket->set_port_value(static_cast<uint32_t>(b->port()));
    }
    const std::vector<std::pair<ResourceType, const google::protobuf::Message*>>
        chain = {{ResourceType::kListener, &listener},
                 {ResourceType::kRouteConfig, &routes},
                 {ResourceType::kCluster, &cluster},
                 {ResourceType::kEndpoints, &cla}};
    for (const auto& [type, resource] : chain) {
      ASSERT_TRUE(server_->WaitForRequest(TypeUrl(type)).has_value())
          << TypeUrl(type);
      ASSERT_TRUE(
          server_->Send(testing::MakeResponse(TypeUrl(type), "1", {resource})));
    }
  }

  std::string CallAs(const std::string& user) {
    CallOptions options;
    if (!user.empty()) options.metadata = {{"x-user", user}};
    CallResult r = channel_->CallRaw("/test.Echo/Say", "hello", options);
    EXPECT_TRUE(r.status.ok()) << r.status;
    return r.endpoint;
  }

  std::unique_ptr<ScriptedAdsServer> server_;
  Backends backends_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
};

TEST_F(XdsRingHashTest, OneHeaderValueAlwaysGoesToOneEndpoint) {
  std::set<std::string> used;
  for (int u = 0; u < 20; ++u) {
    const std::string user = absl::StrCat("user-", u);
    const std::string first = CallAs(user);
    ASSERT_FALSE(first.empty());
    for (int i = 0; i < 10; ++i) EXPECT_EQ(CallAs(user), first) << user;
    used.insert(first);
  }
  // 20 users on 4 equal endpoints: all on one has probability 4^-19.
  EXPECT_GE(used.size(), 2u);
}

TEST_F(XdsRingHashTest, CallsWithoutTheHeaderGoAtRandom) {
  std::map<std::string, int> served;
  for (int i = 0; i < 200; ++i) ++served[CallAs("")];
  // Each endpoint's share of 200 random calls is 50 ± 6σ (σ ≈ 6.1).
  for (const auto& b : backends_) {
    EXPECT_GT(served[b->address()], 13) << b->address();
  }
}

}  // namespace
}  // namespace mesh

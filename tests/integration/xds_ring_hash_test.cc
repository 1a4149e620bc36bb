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
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "src/discovery/xds/xds_client.h"
#include "tests/support/scripted_ads_server.h"
#include "tests/support/test_support.h"
#include "tests/support/xds_fixtures.h"

namespace mesh {
namespace {

using envoy::config::cluster::v3::Cluster;
using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using internal::xds::ResourceType;
using internal::xds::TypeUrl;
using testing::Backends;
using testing::ScriptedAdsServer;

class XdsRingHashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = ScriptedAdsServer::Start();
    backends_ = testing::StartBackends(4);
    auto mesh = testing::MakeXdsMesh(server_->address());
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
    const Listener listener =
        testing::MakeListener("ring.test:7001", "ring-routes");
    const RouteConfiguration routes = testing::OneHostRoutes(
        "ring-routes",
        testing::RouteTo(
            "ring-cluster", "",
            R"(hash_policy { header { header_name: "x-user" } })"));
    const Cluster cluster = testing::MakeEdsCluster(
        "ring-cluster", "ring-cla",
        "lb_policy: RING_HASH "
        "ring_hash_lb_config { minimum_ring_size { value: 1024 } }");
    const ClusterLoadAssignment cla = testing::ClaOf("ring-cla", backends_);
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
    return CallAs(*channel_, user);
  }
  static std::string CallAs(Channel& channel, const std::string& user) {
    CallOptions options;
    if (!user.empty()) options.metadata = {{"x-user", user}};
    CallResult r = channel.CallRaw("/test.Echo/Say", "hello", options);
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
  // The ring, not a balancer's state, decides: a second channel (its own
  // balancer, no load history) sends each user to the same endpoint.
  auto other = mesh_->NewChannel("xds:///ring.test:7001");
  ASSERT_TRUE(other.ok()) << other.status();
  for (int u = 0; u < 20; ++u) {
    const std::string user = absl::StrCat("user-", u);
    EXPECT_EQ(CallAs(**other, user), CallAs(user)) << user;
  }
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

// XdsScriptTest: the fixture of the tests that play an xDS control plane
// by hand against mesh's client (a ScriptedAdsServer on 127.0.0.1): a Mesh
// whose only source is that server, one channel to xds:///kTarget, and
// helpers to await the client's requests, answer them and check each ACK
// or NACK.
//
//   class MyTest : public testing::XdsScriptTest {};
//   TEST_F(MyTest, X) { MakeMesh(); ServeChain(ClaOf(kCla, backends)); }
//
// Thread-compatible (one test's thread).
#ifndef MESH_TESTS_SUPPORT_XDS_SCRIPT_FIXTURE_H_
#define MESH_TESTS_SUPPORT_XDS_SCRIPT_FIXTURE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "src/discovery/xds/xds_client.h"
#include "tests/support/scripted_ads_server.h"
#include "tests/support/test_support.h"
#include "tests/support/xds_fixtures.h"

namespace mesh::testing {

using envoy::config::cluster::v3::Cluster;
using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using envoy::extensions::filters::network::http_connection_manager::v3::
    HttpFilter;
using envoy::service::discovery::v3::DiscoveryRequest;
using internal::xds::ResourceType;
using internal::xds::TypeUrl;

using Resources = std::vector<const google::protobuf::Message*>;

const std::string kLds = TypeUrl(ResourceType::kListener);
const std::string kRds = TypeUrl(ResourceType::kRouteConfig);
const std::string kCds = TypeUrl(ResourceType::kCluster);
const std::string kEds = TypeUrl(ResourceType::kEndpoints);

constexpr char kTarget[] = "svc.test:7001";
constexpr char kRoutes[] = "svc-routes";
constexpr char kCluster[] = "svc-cluster";
constexpr char kCla[] = "svc-cla";  // the cluster's EDS service_name

// The Listener for kTarget over RDS kRoutes, with `filters` before the
// router.
inline Listener MakeListener(const std::vector<HttpFilter>& filters = {}) {
  return MakeListener(kTarget, kRoutes, filters);
}

// An HTTP filter whose config is of a type no client knows.
inline HttpFilter UnknownFilter(bool optional) {
  HttpFilter filter;
  filter.set_name("mystery");
  filter.mutable_typed_config()->set_type_url(
      "type.googleapis.com/mesh.test.MysteryFilter");
  filter.set_is_optional(optional);
  return filter;
}

// kRoutes: one virtual host for every domain holding `routes` (text).
inline RouteConfiguration MakeRoutes(const std::string& routes) {
  return OneHostRoutes(kRoutes, routes);
}

// kRoutes sending everything to kCluster.
inline RouteConfiguration DefaultRoutes() {
  return MakeRoutes(RouteTo(kCluster));
}

inline std::vector<std::string> Names(const DiscoveryRequest& r) {
  return {r.resource_names().begin(), r.resource_names().end()};
}

class XdsScriptTest : public ::testing::Test {
 protected:
  void SetUp() override { server_ = ScriptedAdsServer::Start(); }
  void TearDown() override {
    channel_.reset();
    mesh_.reset();
    server_.reset();
  }

  // A Mesh whose only source is xDS from the scripted server, and a channel
  // to xds:///kTarget.
  void MakeMesh(absl::Duration resource_timeout = absl::Seconds(15),
                const std::string& server_features = R"(["xds_v3"])") {
    XdsMeshOptions options;
    options.node = R"({"id": "mesh-test-node", "cluster": "mesh-test-cluster",)"
                   R"( "locality": {"zone": "z9"},)"
                   R"( "metadata": {"GENERATOR": "grpc", "team": "mesh"}})";
    options.server_features = server_features;
    options.resource_timeout = resource_timeout;
    auto mesh = MakeXdsMesh(server_->address(), options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewChannel(absl::StrCat("xds:///", kTarget));
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
  }

  // The next request of `type_url` for which `pred` holds, received on
  // stream number `on_stream` (0: any), within 10 s; every request read on
  // the way is kept in seen_.
  std::optional<DiscoveryRequest> Await(
      const std::string& type_url,
      const std::function<bool(const DiscoveryRequest&)>& pred,
      int on_stream = 0) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      int stream = 0;
      std::optional<DiscoveryRequest> r =
          server_->NextRequest(deadline - absl::Now(), &stream);
      if (!r.has_value()) break;
      seen_.push_back({*r, stream});
      if (r->type_url() == type_url && pred(*r) &&
          (on_stream == 0 || stream == on_stream)) {
        return r;
      }
    }
    ADD_FAILURE() << "no matching request of " << type_url;
    return std::nullopt;
  }

  // Waits for the client to ask for exactly `names` of `type_url`, answers
  // with `resources` at `version`, and returns the client's answer to that
  // response (its ACK or NACK).
  std::optional<DiscoveryRequest> Serve(const std::string& type_url,
                                        const std::vector<std::string>& names,
                                        const std::string& version,
                                        const Resources& resources) {
    if (!Await(type_url,
               [&](const DiscoveryRequest& r) { return Names(r) == names; })) {
      return std::nullopt;
    }
    return Respond(type_url, version, resources);
  }

  // Sends a response at once and returns the client's answer to it.
  std::optional<DiscoveryRequest> Respond(const std::string& type_url,
                                          const std::string& version,
                                          const Resources& resources) {
    std::string nonce;
    if (!server_->Send(MakeResponse(type_url, version, resources), &nonce)) {
      ADD_FAILURE() << "no open stream";
      return std::nullopt;
    }
    return Await(type_url, [&](const DiscoveryRequest& r) {
      return r.response_nonce() == nonce;
    });
  }

  // An ACK of `version`.
  static void ExpectAck(const std::optional<DiscoveryRequest>& r,
                        const std::string& version) {
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->version_info(), version);
    EXPECT_FALSE(r->has_error_detail()) << r->error_detail().message();
  }

  // A NACK keeping `last_version`; returns its error message.
  static std::string ExpectNack(const std::optional<DiscoveryRequest>& r,
                                const std::string& last_version) {
    if (!r.has_value()) {
      ADD_FAILURE() << "no answer";
      return "";
    }
    EXPECT_EQ(r->version_info(), last_version);
    EXPECT_TRUE(r->has_error_detail());
    EXPECT_EQ(r->error_detail().code(), 3);  // INVALID_ARGUMENT
    return r->error_detail().message();
  }

  // Listener → RouteConfiguration → Cluster → ClusterLoadAssignment, each
  // answered as it is asked for and ACKed (versions l1, r1, c1, e1).
  void ServeChain(const ClusterLoadAssignment& cla,
                  const Listener& listener = MakeListener()) {
    const RouteConfiguration routes = DefaultRoutes();
    const Cluster cluster = MakeEdsCluster(kCluster, kCla);
    ASSERT_NO_FATAL_FAILURE(
        ExpectAck(Serve(kLds, {kTarget}, "l1", {&listener}), "l1"));
    ASSERT_NO_FATAL_FAILURE(
        ExpectAck(Serve(kRds, {kRoutes}, "r1", {&routes}), "r1"));
    ASSERT_NO_FATAL_FAILURE(
        ExpectAck(Serve(kCds, {kCluster}, "c1", {&cluster}), "c1"));
    ASSERT_NO_FATAL_FAILURE(ExpectAck(Serve(kEds, {kCla}, "e1", {&cla}), "e1"));
  }

  // Returns once the client has read, applied and ACKed or NACKed every
  // response sent before: an empty EDS response (which changes nothing) is
  // answered after them. What they deliver to the channel may still be
  // running (deliveries run after the client's lock, beside the next read).
  void Sync() {
    ASSERT_NO_FATAL_FAILURE(ExpectAck(Respond(kEds, "e1", {}), "e1"));
  }

  CallResult Call() { return channel_->CallRaw("/test.Echo/Say", "hello"); }

  struct Seen {
    DiscoveryRequest request;
    int stream;
  };

  std::unique_ptr<ScriptedAdsServer> server_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
  std::vector<Seen> seen_;
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_XDS_SCRIPT_FIXTURE_H_

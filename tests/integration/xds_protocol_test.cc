// mesh's xDS client against a scripted ADS server on 127.0.0.1: the test
// plays the control plane by hand, request by request, to check what the
// client puts on the wire (the node, ACKs, NACKs, re-subscription after a
// lost stream) and how it treats what mesh-control-plane never sends (bad
// resources, partly bad responses, resources never sent or left out,
// unhealthy endpoints, priorities), as the wire facts of xDS say (the
// design notes' wire-xds.md).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "src/discovery/xds/xds_client.h"
#include "tests/support/scripted_ads_server.h"
#include "tests/support/test_support.h"
#include "tests/support/xds_fixtures.h"
#include "tests/support/xds_script_fixture.h"

namespace mesh {
namespace {

using envoy::config::cluster::v3::Cluster;
using envoy::config::core::v3::HealthStatus;
using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using envoy::extensions::filters::network::http_connection_manager::v3::
    HttpFilter;
using envoy::service::discovery::v3::DiscoveryRequest;
using internal::xds::ResourceType;
using internal::xds::TypeUrl;
using testing::Backends;
using testing::ClaOf;
using testing::DefaultRoutes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::kCds;
using testing::kCla;
using testing::kCluster;
using testing::kEds;
using testing::kLds;
using testing::kRds;
using testing::kRoutes;
using testing::kTarget;
using testing::Locality;
using testing::MakeCla;
using testing::MakeEdsCluster;
using testing::MakeListener;
using testing::MakeRoutes;
using testing::Names;
using ::testing::Not;
using testing::Resources;
using testing::RouteTo;
using testing::ScriptedAdsServer;
using testing::UnknownFilter;

class XdsProtocolTest : public testing::XdsScriptTest {};

TEST_F(XdsProtocolTest, FirstRequestCarriesTheNodeAndLaterOnesDoNot) {
  Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ASSERT_NO_FATAL_FAILURE(ServeChain(ClaOf(kCla, backends)));
  ASSERT_GE(seen_.size(), 8u);
  const DiscoveryRequest& first = seen_[0].request;
  EXPECT_EQ(first.type_url(), kLds);
  EXPECT_THAT(Names(first), ElementsAre(kTarget));
  EXPECT_EQ(first.version_info(), "");
  EXPECT_EQ(first.response_nonce(), "");
  ASSERT_TRUE(first.has_node());
  EXPECT_EQ(first.node().id(), "mesh-test-node");
  EXPECT_EQ(first.node().cluster(), "mesh-test-cluster");
  EXPECT_EQ(first.node().locality().zone(), "z9");
  EXPECT_EQ(first.node().user_agent_name(), "mesh");
  const auto& metadata = first.node().metadata().fields();
  ASSERT_EQ(metadata.count("GENERATOR"), 1u);
  EXPECT_EQ(metadata.at("GENERATOR").string_value(), "grpc");
  ASSERT_EQ(metadata.count("team"), 1u);
  EXPECT_EQ(metadata.at("team").string_value(), "mesh");
  for (size_t i = 1; i < seen_.size(); ++i) {
    EXPECT_FALSE(seen_[i].request.has_node())
        << "request " << i << " of " << seen_[i].request.type_url();
    EXPECT_EQ(seen_[i].stream, 1);
  }
  EXPECT_EQ(server_->streams_started(), 1);
}

TEST_F(XdsProtocolTest,
       ChainResolvesAndEachResponseIsAckedWithItsVersionAndNonce) {
  Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const Listener listener = MakeListener();
  const RouteConfiguration routes = DefaultRoutes();
  const Cluster cluster = MakeEdsCluster(kCluster, kCla);
  const ClusterLoadAssignment cla = ClaOf(kCla, backends);
  struct Step {
    const std::string& type_url;
    std::string name;
    std::string version;
    const google::protobuf::Message* resource;
  };
  // Versions that look like nothing a client would make up.
  const Step steps[] = {{kLds, kTarget, "lds-7", &listener},
                        {kRds, kRoutes, "rds-2024-x", &routes},
                        {kCds, kCluster, "cds:42", &cluster},
                        {kEds, kCla, "eds v3", &cla}};
  for (const Step& step : steps) {
    SCOPED_TRACE(step.type_url);
    std::optional<DiscoveryRequest> ask =
        Await(step.type_url, [](const DiscoveryRequest&) { return true; });
    ASSERT_TRUE(ask.has_value());
    EXPECT_THAT(Names(*ask), ElementsAre(step.name));
    EXPECT_EQ(ask->version_info(), "");
    EXPECT_EQ(ask->response_nonce(), "");
    std::string nonce;
    ASSERT_TRUE(server_->Send(
        testing::MakeResponse(step.type_url, step.version, {step.resource}),
        &nonce));
    std::optional<DiscoveryRequest> ack = Await(
        step.type_url,
        [&](const DiscoveryRequest& r) { return r.response_nonce() == nonce; });
    ASSERT_TRUE(ack.has_value());
    EXPECT_EQ(ack->version_info(), step.version);
    EXPECT_THAT(Names(*ack), ElementsAre(step.name));
    EXPECT_FALSE(ack->has_error_detail()) << ack->error_detail().message();
  }
  for (int i = 0; i < 10; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, backends[0]->address());
  }
  EXPECT_EQ(backends[0]->calls_received(), 10);
}

TEST_F(XdsProtocolTest,
       ABadRegexIsNackedWithTheLastVersionTheNonceAndAnErrorNamingIt) {
  Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ASSERT_NO_FATAL_FAILURE(ServeChain(ClaOf(kCla, backends)));
  ASSERT_TRUE(Call().status.ok());
  const RouteConfiguration bad = MakeRoutes(absl::StrCat(
      R"(routes { match { safe_regex { regex: "/test.Echo/(" } } )",
      R"(route { cluster: ")", kCluster, R"(" } })"));
  std::string nonce;
  ASSERT_TRUE(server_->Send(testing::MakeResponse(kRds, "r2", {&bad}), &nonce));
  std::optional<DiscoveryRequest> nack = Await(
      kRds,
      [&](const DiscoveryRequest& r) { return r.response_nonce() == nonce; });
  std::string error = ExpectNack(nack, "r1");
  EXPECT_THAT(error, HasSubstr(kRoutes));
  EXPECT_THAT(error, HasSubstr("safe_regex"));
  EXPECT_THAT(error, HasSubstr("/test.Echo/("));
  ASSERT_NO_FATAL_FAILURE(Sync());
  // The last good RouteConfiguration keeps serving.
  for (int i = 0; i < 10; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, backends[0]->address());
  }
}

TEST_F(XdsProtocolTest, AnUnknownNonOptionalFilterIsNacked) {
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const Listener listener = MakeListener({UnknownFilter(false)});
  std::string error = ExpectNack(Serve(kLds, {kTarget}, "l1", {&listener}), "");
  EXPECT_THAT(error, HasSubstr(kTarget));
  EXPECT_THAT(error, HasSubstr("http_filters[0]"));
  EXPECT_THAT(error, HasSubstr("mesh.test.MysteryFilter"));
}

TEST_F(XdsProtocolTest, AnUnknownOptionalFilterIsSkippedAndAcked) {
  Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ASSERT_NO_FATAL_FAILURE(
      ServeChain(ClaOf(kCla, backends), MakeListener({UnknownFilter(true)})));
  CallResult r = Call();
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.endpoint, backends[0]->address());
}

TEST_F(XdsProtocolTest, AnUnsupportedLbPolicyOrClusterTypeIsNacked) {
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const Listener listener = MakeListener();
  const RouteConfiguration routes = DefaultRoutes();
  ASSERT_NO_FATAL_FAILURE(
      ExpectAck(Serve(kLds, {kTarget}, "l1", {&listener}), "l1"));
  ASSERT_NO_FATAL_FAILURE(
      ExpectAck(Serve(kRds, {kRoutes}, "r1", {&routes}), "r1"));
  const Cluster maglev =
      MakeEdsCluster(kCluster, kCla, "type: EDS lb_policy: MAGLEV");
  std::string error = ExpectNack(Serve(kCds, {kCluster}, "c1", {&maglev}), "");
  EXPECT_THAT(error, HasSubstr(kCluster));
  EXPECT_THAT(error, HasSubstr("lb_policy"));
  EXPECT_THAT(error, HasSubstr("MAGLEV"));
  const Cluster fixed = MakeEdsCluster(kCluster, kCla, "type: STATIC");
  error = ExpectNack(Respond(kCds, "c2", {&fixed}), "");
  EXPECT_THAT(error, HasSubstr(kCluster));
  EXPECT_THAT(error, HasSubstr("STATIC"));
  // A good one is then accepted, and its endpoints asked for.
  const Cluster good = MakeEdsCluster(kCluster, kCla);
  ASSERT_NO_FATAL_FAILURE(ExpectAck(Respond(kCds, "c3", {&good}), "c3"));
  EXPECT_TRUE(Await(kEds, [](const DiscoveryRequest& r) {
    return Names(r) == std::vector<std::string>{kCla};
  }));
}

TEST_F(XdsProtocolTest, AnEndpointWithPort0IsNacked) {
  Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const Listener listener = MakeListener();
  const RouteConfiguration routes = DefaultRoutes();
  const Cluster cluster = MakeEdsCluster(kCluster, kCla);
  ASSERT_NO_FATAL_FAILURE(
      ExpectAck(Serve(kLds, {kTarget}, "l1", {&listener}), "l1"));
  ASSERT_NO_FATAL_FAILURE(
      ExpectAck(Serve(kRds, {kRoutes}, "r1", {&routes}), "r1"));
  ASSERT_NO_FATAL_FAILURE(
      ExpectAck(Serve(kCds, {kCluster}, "c1", {&cluster}), "c1"));
  const ClusterLoadAssignment port0 = MakeCla(
      kCla, {{"z1", 0, {{"127.0.0.1:0", envoy::config::core::v3::HEALTHY}}}});
  std::string error = ExpectNack(Serve(kEds, {kCla}, "e1", {&port0}), "");
  EXPECT_THAT(error, HasSubstr(kCla));
  EXPECT_THAT(error, HasSubstr("port_value"));
  // The good one that follows serves.
  const ClusterLoadAssignment good = ClaOf(kCla, backends);
  ASSERT_NO_FATAL_FAILURE(ExpectAck(Respond(kEds, "e2", {&good}), "e2"));
  CallResult r = Call();
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.endpoint, backends[0]->address());
}

// gRFC A46: the valid resources of a partly bad response are applied.
TEST_F(XdsProtocolTest, PartOfAResponseIsAppliedWhenAnotherResourceIsBad) {
  Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const Listener listener = MakeListener();
  // Calls with x-bad: 1 go to "bad", the rest to "good".
  const RouteConfiguration routes = MakeRoutes(
      R"(routes { match { prefix: "" headers { name: "x-bad" )"
      R"(exact_match: "1" } } route { cluster: "bad" } })"
      R"( routes { match { prefix: "" } route { cluster: "good" } })");
  ASSERT_NO_FATAL_FAILURE(
      ExpectAck(Serve(kLds, {kTarget}, "l1", {&listener}), "l1"));
  ASSERT_NO_FATAL_FAILURE(
      ExpectAck(Serve(kRds, {kRoutes}, "r1", {&routes}), "r1"));
  const Cluster good = MakeEdsCluster("good", "good-cla");
  const Cluster bad =
      MakeEdsCluster("bad", "bad-cla", "type: EDS lb_policy: MAGLEV");
  std::string error =
      ExpectNack(Serve(kCds, {"bad", "good"}, "c1", {&good, &bad}), "");
  EXPECT_THAT(error, HasSubstr("Cluster 'bad'"));
  EXPECT_THAT(error, Not(HasSubstr("'good'")));
  // The good cluster was applied: its endpoints are asked for, and serve.
  Locality l{
      "z1", 0, {{backends[0]->address(), envoy::config::core::v3::HEALTHY}}};
  const ClusterLoadAssignment cla = MakeCla("good-cla", {l});
  ASSERT_NO_FATAL_FAILURE(
      ExpectAck(Serve(kEds, {"good-cla"}, "e1", {&cla}), "e1"));
  for (int i = 0; i < 10; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, backends[0]->address());
  }
}

TEST_F(XdsProtocolTest, AResourceNeverSentDoesNotExistAfterTheResourceTimeout) {
  constexpr absl::Duration kTimeout = absl::Milliseconds(300);
  ASSERT_NO_FATAL_FAILURE(MakeMesh(kTimeout));
  const Listener listener = MakeListener();
  ASSERT_TRUE(Await(kLds, [](const DiscoveryRequest&) { return true; }));
  // The RouteConfiguration's clock cannot start before the Listener that
  // names it is sent.
  const absl::Time start = absl::Now();
  ASSERT_NO_FATAL_FAILURE(ExpectAck(Respond(kLds, "l1", {&listener}), "l1"));
  ASSERT_TRUE(Await(kRds, [](const DiscoveryRequest& r) {
    return Names(r) == std::vector<std::string>{kRoutes};
  }));
  // Never answered.
  CallResult r = Call();
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr("RouteConfiguration"));
  EXPECT_THAT(r.status.message(), HasSubstr(kRoutes));
  EXPECT_THAT(r.status.message(), HasSubstr("does not exist"));
  EXPECT_GE(took, kTimeout);
  // Later calls fail the same way at once.
  r = Call();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr("does not exist"));
}

TEST_F(XdsProtocolTest, AListenerLeftOutOfAFullLdsResponseIsDeleted) {
  Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ASSERT_NO_FATAL_FAILURE(ServeChain(ClaOf(kCla, backends)));
  ASSERT_TRUE(Call().status.ok());
  // The whole set, without it.
  ASSERT_NO_FATAL_FAILURE(ExpectAck(Respond(kLds, "l2", {}), "l2"));
  // The ACK goes out before the deletion is delivered (deliveries run
  // after the client's lock, while the next response is read): the
  // channel learns of it soon after, not with the ACK.
  ASSERT_TRUE(testing::WaitFor([&] { return !Call().status.ok(); }));
  const auto received = backends[0]->calls_received();
  CallResult r = Call();
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr(kTarget));
  EXPECT_THAT(r.status.message(), HasSubstr("does not exist"));
  EXPECT_EQ(backends[0]->calls_received(), received);  // none reached it
}

TEST_F(XdsProtocolTest,
       AListenerLeftOutOfAFullLdsResponseWithIgnoreResourceDeletionIsKept) {
  Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(
      MakeMesh(absl::Seconds(15), R"(["xds_v3", "ignore_resource_deletion"])"));
  ASSERT_NO_FATAL_FAILURE(ServeChain(ClaOf(kCla, backends)));
  ASSERT_TRUE(Call().status.ok());
  ASSERT_NO_FATAL_FAILURE(ExpectAck(Respond(kLds, "l2", {}), "l2"));
  ASSERT_NO_FATAL_FAILURE(Sync());
  for (int i = 0; i < 10; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, backends[0]->address());
  }
}

TEST_F(XdsProtocolTest,
       ALostStreamKeepsTheCacheAndTheNewStreamAsksForEverythingAgain) {
  constexpr absl::Duration kTimeout = absl::Milliseconds(500);
  Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh(kTimeout));
  ASSERT_NO_FATAL_FAILURE(ServeChain(ClaOf(kCla, backends)));
  ASSERT_TRUE(Call().status.ok());
  server_->EndStream(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "scripted: stream lost"));
  // Meanwhile (the client backs off 50-200 ms) the cache serves.
  for (int i = 0; i < 20; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, backends[0]->address());
  }
  // The new stream's first four requests: one per type, with the names and
  // versions of before, no nonce; the first carries the node.
  std::vector<DiscoveryRequest> again;
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (again.size() < 4 && absl::Now() < deadline) {
    int stream = 0;
    std::optional<DiscoveryRequest> r =
        server_->NextRequest(deadline - absl::Now(), &stream);
    if (!r.has_value()) break;
    if (stream == 2) again.push_back(*std::move(r));
  }
  ASSERT_EQ(again.size(), 4u);
  EXPECT_EQ(server_->streams_started(), 2);
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {kLds, {kTarget, "l1"}},
      {kRds, {kRoutes, "r1"}},
      {kCds, {kCluster, "c1"}},
      {kEds, {kCla, "e1"}}};
  std::set<std::string> types;
  for (size_t i = 0; i < again.size(); ++i) {
    const DiscoveryRequest& r = again[i];
    SCOPED_TRACE(r.type_url());
    EXPECT_EQ(r.has_node(), i == 0);
    types.insert(r.type_url());
    auto want = expected.find(r.type_url());
    ASSERT_NE(want, expected.end());
    EXPECT_THAT(Names(r), ElementsAre(want->second.first));
    EXPECT_EQ(r.version_info(), want->second.second);
    EXPECT_EQ(r.response_nonce(), "");
    EXPECT_FALSE(r.has_error_detail());
  }
  EXPECT_EQ(types.size(), 4u);
  if (!again.empty() && again[0].has_node()) {
    EXPECT_EQ(again[0].node().id(), "mesh-test-node");
  }
  // Unanswered, nothing cached is dropped: not even once the resource
  // timeout has passed twice over.
  const absl::Time until = absl::Now() + 2 * kTimeout;
  int calls = 0;
  while (absl::Now() < until) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << calls << ": " << r.status;
    EXPECT_EQ(r.endpoint, backends[0]->address());
    ++calls;
  }
  EXPECT_GT(calls, 0);
  // The new stream is served as the first was.
  const Listener listener = MakeListener();
  ASSERT_NO_FATAL_FAILURE(ExpectAck(Respond(kLds, "l2", {&listener}), "l2"));
  ASSERT_TRUE(Call().status.ok());
}

// Nonces belong to the stream that sent them: until the new stream has
// answered a type, a request of that type carries none (a server such as
// go-control-plane ignores a request whose nonce is not the last it sent on
// this stream, as stale).
TEST_F(XdsProtocolTest, ANewStreamNeverEchoesANonceOfTheStreamBefore) {
  Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ASSERT_NO_FATAL_FAILURE(ServeChain(ClaOf(kCla, backends)));
  server_->EndStream(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "scripted: stream lost"));
  ASSERT_TRUE(Await(
      kLds, [](const DiscoveryRequest&) { return true; }, /*on_stream=*/2));
  // A second target changes the Listener subscription before the new
  // stream has had any Listener response.
  auto other = mesh_->NewChannel("xds:///other.test:7001");
  ASSERT_TRUE(other.ok()) << other.status();
  std::optional<DiscoveryRequest> r = Await(
      kLds,
      [](const DiscoveryRequest& r) { return r.resource_names_size() == 2; },
      /*on_stream=*/2);
  ASSERT_TRUE(r.has_value());
  EXPECT_THAT(Names(*r), ElementsAre("other.test:7001", kTarget));
  EXPECT_EQ(r->version_info(), "l1");
  EXPECT_EQ(r->response_nonce(), "")
      << "the nonce of stream 1's Listener response";
}

TEST_F(XdsProtocolTest, UnhealthyEndpointsAreNeverPicked) {
  Backends backends = testing::StartBackends(2);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ASSERT_NO_FATAL_FAILURE(ServeChain(MakeCla(
      kCla,
      {{"z1",
        0,
        {{backends[0]->address(), envoy::config::core::v3::HEALTHY},
         {backends[1]->address(), envoy::config::core::v3::UNHEALTHY}}}})));
  for (int i = 0; i < 50; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, backends[0]->address()) << i;
  }
  EXPECT_EQ(backends[0]->calls_received(), 50);
  EXPECT_EQ(backends[1]->calls_received(), 0);
}

TEST_F(XdsProtocolTest,
       CallsFailOverToTheNextPriorityWhenTheFirstHasNoEndpoints) {
  Backends backends = testing::StartBackends(2);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  auto cla = [&](HealthStatus first) {
    return MakeCla(
        kCla, {{"z0", 0, {{backends[0]->address(), first}}},
               {"z1",
                1,
                {{backends[1]->address(), envoy::config::core::v3::HEALTHY}}}});
  };
  ASSERT_NO_FATAL_FAILURE(ServeChain(cla(envoy::config::core::v3::UNHEALTHY)));
  for (int i = 0; i < 20; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, backends[1]->address()) << i;
  }
  // Priority 0 recovers: calls move back to it.
  const ClusterLoadAssignment healthy = cla(envoy::config::core::v3::HEALTHY);
  ASSERT_NO_FATAL_FAILURE(ExpectAck(Respond(kEds, "e2", {&healthy}), "e2"));
  ASSERT_TRUE(testing::WaitFor(
      [&] { return Call().endpoint == backends[0]->address(); }));
  for (int i = 0; i < 20; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, backends[0]->address()) << i;
  }
}

}  // namespace
}  // namespace mesh

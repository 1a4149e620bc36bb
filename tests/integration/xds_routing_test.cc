// mesh's xDS client routing calls: a scripted ADS server on 127.0.0.1
// serves Listener, RouteConfiguration, Cluster and ClusterLoadAssignment
// resources built here, and calls on real EchoBackends check that the
// routes decide where each call goes and how long it may take (docs/xds.md,
// "What each resource does in mesh"): weighted clusters, the virtual host
// chosen by domain, header, prefix, path and regex matches,
// max_stream_duration, hedging, and actions mesh cannot carry out. The backend
// policies (circuit breakers, drops, faults, retries, endpoint updates) are
// in xds_data_path_test.cc (the same fixture).
//
// The server answers every request with the resources set here (an
// AdsResponder, tests/support/xds_fixtures.h); statistical checks allow 6
// standard deviations.
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "tests/support/test_support.h"
#include "tests/support/xds_fixtures.h"

namespace mesh {
namespace {

using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using testing::Backends;
using testing::ExpectShare;
using ::testing::HasSubstr;
using testing::Parse;
using testing::RouteTo;
using testing::XdsTargetTest;

// The Listener for kTarget over RDS kRoutes; `hcm` (text) adds to its
// HttpConnectionManager.
Listener MakeListener(const std::string& hcm = "") {
  return testing::MakeListener(XdsTargetTest::kTarget, XdsTargetTest::kRoutes,
                               {}, hcm);
}

// kRoutes with `vhosts` (text); Host: one virtual host with `routes` (text)
// for `domains` (a text format list: ["a", "b"]).
RouteConfiguration MakeRoutes(const std::string& vhosts) {
  return Parse<RouteConfiguration>(
      absl::StrCat("name: \"", XdsTargetTest::kRoutes, "\" ", vhosts));
}
std::string Host(const std::string& name, const std::string& domains,
                 const std::string& routes) {
  return absl::StrCat("virtual_hosts { name: \"", name, "\" domains: ", domains,
                      " ", routes, " }");
}

using XdsRoutingTest = XdsTargetTest;

TEST_F(XdsRoutingTest, WeightedClustersSplitCallsByWeight) {
  Backends b = testing::StartBackends(2);
  Set(MakeListener());
  Set(OneHost(R"(routes { match { prefix: "" } route { weighted_clusters {
      clusters { name: "a" weight { value: 3 } }
      clusters { name: "b" weight { value: 1 } }
      total_weight { value: 4 } } } })"));
  AddCluster("a", {b[0].get()});
  AddCluster("b", {b[1].get()});
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  constexpr int kCalls = 800;
  std::map<std::string, int> served;
  for (int i = 0; i < kCalls; ++i) ++served[ServedBy(Call())];
  EXPECT_EQ(served["a"] + served["b"], kCalls);
  ExpectShare(served["a"], kCalls, 0.75);
  EXPECT_EQ(b[0]->calls_received(), served["a"]);
  EXPECT_EQ(b[1]->calls_received(), served["b"]);
}

TEST_F(XdsRoutingTest, VirtualHostIsChosenByDomain) {
  Backends b = testing::StartBackends(4);
  const char* names[] = {"exact", "any", "suffix", "prefix"};
  for (int i = 0; i < 4; ++i) AddCluster(names[i], {b[i].get()});
  Set(MakeListener());
  // The catch-all comes first: the exact domain wins by kind, not order.
  Set(MakeRoutes(Host("any", R"(["*"])", RouteTo("any")) +
                 Host("exact", R"(["other.test:7001", "SVC.test:7001"])",
                      RouteTo("exact"))));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ServedBy(Call()), "exact") << i;
  // A suffix pattern beats a prefix pattern, whatever their order.
  ASSERT_NO_FATAL_FAILURE(Update(
      MakeRoutes(Host("prefix", R"(["svc.*"])", RouteTo("prefix")) +
                 Host("suffix", R"(["*.test:7001"])", RouteTo("suffix")))));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ServedBy(Call()), "suffix") << i;
  EXPECT_EQ(b[1]->calls_received(), 0);
  EXPECT_EQ(b[3]->calls_received(), 0);
}

TEST_F(XdsRoutingTest, HeaderPrefixPathAndRegexRoutesRouteTheirCalls) {
  Backends b = testing::StartBackends(6);
  const char* names[] = {"header", "prefix", "path",
                         "regex",  "nocase", "default"};
  for (int i = 0; i < 6; ++i) AddCluster(names[i], {b[i].get()});
  Set(MakeListener());
  Set(OneHost(
      RouteTo("header",
              R"(prefix: "" headers { name: "x-route" exact_match: "h" })") +
      RouteTo("prefix", R"(prefix: "/test.Echo/")") +
      RouteTo("path", R"(path: "/other.Svc/Exact")") +
      RouteTo("regex", R"(safe_regex { regex: "/regex[.]Svc/M[0-9]+" })") +
      RouteTo("nocase",
              R"(prefix: "/upper.svc/" case_sensitive { value: false })") +
      RouteTo("default")));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const std::pair<std::string, std::string> cases[] = {
      {kSay, "prefix"},
      {"/other.Svc/Exact", "path"},
      {"/other.Svc/Exactly", "default"},
      {"/regex.Svc/M42", "regex"},
      {"/regex.Svc/M42x", "default"},
      {"/UPPER.SVC/Do", "nocase"},
      {"/TEST.ECHO/Say", "default"},  // prefix is case-sensitive by default
  };
  for (const auto& [method, cluster] : cases) {
    EXPECT_EQ(ServedBy(Call(method)), cluster) << method;
  }
  // The header route comes first: it wins over the path routes.
  EXPECT_EQ(ServedBy(Call(kSay, {{"x-route", "h"}})), "header");
  EXPECT_EQ(ServedBy(Call("/other.Svc/Exact", {{"x-route", "h"}})), "header");
  EXPECT_EQ(ServedBy(Call(kSay, {{"x-route", "H"}})), "prefix");
}

TEST_F(XdsRoutingTest, RouteMaxStreamDurationIsTheCallsDeadline) {
  Backends b = testing::StartBackends(1);
  b[0]->set_delay(absl::Seconds(2));
  auto limit = [](const std::string& text) {
    return absl::StrCat("max_stream_duration { ", text, " }");
  };
  ServeOneCluster(
      b,
      OneHost(RouteTo(kCluster, R"(path: "/test.Echo/Route")",
                      limit("max_stream_duration { nanos: 200000000 }")) +
              RouteTo(kCluster, R"(path: "/test.Echo/HeaderMax")",
                      limit("max_stream_duration { seconds: 5 } "
                            "grpc_timeout_header_max { nanos: 200000000 }")) +
              RouteTo(kCluster, R"(path: "/test.Echo/Own")",
                      limit("max_stream_duration { seconds: 5 }")) +
              RouteTo(kCluster)),
      MakeListener("common_http_protocol_options { max_stream_duration { "
                   "nanos: 300000000 } }"));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const std::pair<std::string, absl::Duration> expired[] = {
      {"/test.Echo/Route", absl::Milliseconds(200)},
      {"/test.Echo/HeaderMax", absl::Milliseconds(200)},
      {kSay, absl::Milliseconds(300)},  // the listener's
  };
  for (const auto& [method, deadline] : expired) {
    const absl::Time start = absl::Now();
    CallResult r = Call(method);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kDeadlineExceeded)
        << method << ": " << r.status;
    // gRPC moves the deadline onto its own monotonic clock, reading both
    // clocks one after the other: on a loaded machine the call may end
    // before it by absl::Now() by as long as a thread was held between the
    // two reads (2 ms seen once; 11 ms under TSan on a busy 2-core VM).
    // Far from the listener's 300 ms or the backend's 2 s either way.
    EXPECT_GE(absl::Now() - start, deadline - absl::Milliseconds(25)) << method;
  }
  // The route's own 5 s, not the listener's 300 ms.
  CallResult own = Call("/test.Echo/Own");
  EXPECT_TRUE(own.status.ok()) << own.status;
}

TEST_F(XdsRoutingTest, HedgeOnPerTryTimeoutHedgesAndABadPolicyIsNacked) {
  // One backend stalls every call past the calls' 5 s: only a hedge, sent
  // when the 50 ms per-try timeout passes, can answer those in time.
  Backends b = testing::StartBackends(2);
  b[0]->set_delay(absl::Seconds(30));
  const std::string hedged =
      "retry_policy { retry_on: \"unavailable\" num_retries { value: 1 } "
      "per_try_timeout { nanos: 50000000 } } "
      "hedge_policy { hedge_on_per_try_timeout: true }";
  ServeOneCluster(b, OneHost(RouteTo(kCluster, "", hedged)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  for (int i = 0; i < 10; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.endpoint, b[1]->address());
  }
  // Each call the slow one got was hedged, and cancelled when the hedge
  // answered.
  const int64_t slow = b[0]->calls_received();
  EXPECT_TRUE(
      testing::WaitFor([&] { return b[0]->calls_cancelled() == slow; }));
  EXPECT_THAT(mesh_->Metrics(),
              HasSubstr(absl::StrCat("route_hedge_total{authority=\"xds:///",
                                     kTarget, "\",route=\"#0\"} ", slow)));

  // A policy out of range is NACKed naming the field; the last good stays.
  std::string error;
  responder_->AwaitNack(
      Set(OneHost(RouteTo(kCluster, "",
                          "hedge_policy { initial_requests { value: 9 } }"))),
      &error);
  EXPECT_THAT(error, HasSubstr("hedge_policy.initial_requests: 9 is not "
                               "within 1..5"));
  for (int i = 0; i < 5; ++i) {
    CallResult r = Call();
    ASSERT_TRUE(r.status.ok()) << r.status;
  }
}

TEST_F(XdsRoutingTest, AnUnsupportedActionFailsItsCallsNamingIt) {
  Backends b = testing::StartBackends(1);
  ServeOneCluster(b, OneHost(R"(routes { name: "moved" match { path:
                                 "/test.Echo/Moved" } redirect {} })" +
                             RouteTo(kCluster)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  CallResult moved = Call("/test.Echo/Moved");
  EXPECT_EQ(moved.status.code(), absl::StatusCode::kUnavailable)
      << moved.status;
  EXPECT_THAT(moved.status.message(), HasSubstr("redirect"));
  EXPECT_THAT(moved.status.message(), HasSubstr("'moved'"));
  EXPECT_TRUE(Call().status.ok());
  EXPECT_EQ(b[0]->calls_received(), 1);
}

}  // namespace
}  // namespace mesh

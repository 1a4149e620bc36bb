// mesh's xDS client on the data path: a scripted ADS server on 127.0.0.1
// serves Listener, RouteConfiguration, Cluster and ClusterLoadAssignment
// resources built here, and calls on real EchoBackends check that what they
// say is carried out per call (docs/xds.md, "What each resource does in
// mesh"): circuit breakers, drop_overloads, the fault filter (abort, delay,
// header abort, per-route overrides), retry policies within the retry
// budget, and endpoint updates while calls flow. Where calls go (virtual
// hosts, route matches, weighted clusters, timeouts) is in
// xds_routing_test.cc (the same fixture).
//
// The server answers every request with the resources set here (an
// AdsResponder, tests/support/xds_fixtures.h); statistical checks allow 6
// standard deviations.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/extensions/filters/http/fault/v3/fault.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "tests/support/test_support.h"
#include "tests/support/xds_fixtures.h"

namespace mesh {
namespace {

using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::config::listener::v3::Listener;
using envoy::extensions::filters::http::fault::v3::HTTPFault;
using envoy::extensions::filters::network::http_connection_manager::v3::
    HttpFilter;
using testing::Backends;
using testing::ExpectShare;
using ::testing::HasSubstr;
using testing::Parse;
using testing::RouteTo;

// The Listener for kTarget over RDS kRoutes; with `fault` (HTTPFault,
// text), a fault filter named "fault" before the router.
Listener MakeListener(const std::string& fault = "") {
  std::vector<HttpFilter> filters;
  if (!fault.empty()) {
    HttpFilter& filter = filters.emplace_back();
    filter.set_name("fault");
    filter.mutable_typed_config()->PackFrom(Parse<HTTPFault>(fault));
  }
  return testing::MakeListener(testing::XdsTargetTest::kTarget,
                               testing::XdsTargetTest::kRoutes, filters);
}

// A route's typed_per_filter_config entry (text) replacing the fault
// filter's config with `config` (HTTPFault, text).
std::string FaultOverride(const std::string& config) {
  google::protobuf::Any any;
  any.PackFrom(Parse<HTTPFault>(config));
  std::string text;
  google::protobuf::TextFormat::PrintToString(any, &text);
  return absl::StrCat(R"(typed_per_filter_config { key: "fault" value { )",
                      text, " } }");
}

using XdsDataPathTest = testing::XdsTargetTest;

TEST_F(XdsDataPathTest, MaxRequestsRefusesCallsBeyondTheCircuitBreaker) {
  Backends b = testing::StartBackends(1);
  b[0]->set_delay(absl::Milliseconds(300));
  Set(MakeListener());
  Set(OneHost(RouteTo(kCluster)));
  AddCluster(kCluster, {b[0].get()},
             "circuit_breakers { thresholds { max_requests { value: 2 } } }");
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  struct Tally {
    absl::Mutex mu;
    int ok = 0;
    int refused = 0;
    std::vector<std::string> other;
  };
  auto tally = std::make_shared<Tally>();
  constexpr int kCalls = 6;
  for (int i = 0; i < kCalls; ++i) {
    channel_->CallRawAsync(kSay, "hello", {}, [tally](CallResult r) {
      absl::MutexLock lock(&tally->mu);
      if (r.status.ok()) {
        ++tally->ok;
      } else if (r.status.code() == absl::StatusCode::kUnavailable &&
                 absl::StrContains(r.status.message(), "max_requests")) {
        ++tally->refused;
      } else {
        tally->other.push_back(r.status.ToString());
      }
    });
  }
  ASSERT_TRUE(testing::WaitFor([&] {
    absl::MutexLock lock(&tally->mu);
    return tally->ok + tally->refused + static_cast<int>(tally->other.size()) ==
           kCalls;
  }));
  absl::MutexLock lock(&tally->mu);
  EXPECT_TRUE(tally->other.empty()) << tally->other.front();
  // Started at once, 300 ms each: 2 in flight, 4 refused, unless the
  // scheduler delays a start past the end of another call.
  EXPECT_GE(tally->ok, 2);
  EXPECT_GE(tally->refused, 1);
  EXPECT_EQ(b[0]->calls_received(), tally->ok);
  EXPECT_THAT(mesh_->Describe(),
              HasSubstr(absl::StrCat(
                  "\"circuit_breaker_refusals\":", tally->refused, ",")));
}

TEST_F(XdsDataPathTest, DropOverloadsDropTheirShare) {
  Backends b = testing::StartBackends(1);
  ServeOneCluster(b);
  auto dropping = [&](uint32_t percent) {
    ClusterLoadAssignment cla = Cla(kCluster, {b[0].get()});
    auto* drop = cla.mutable_policy()->add_drop_overloads();
    drop->set_category("lb");
    drop->mutable_drop_percentage()->set_numerator(percent);
    drop->mutable_drop_percentage()->set_denominator(
        envoy::type::v3::FractionalPercent::HUNDRED);
    return cla;
  };
  Set(dropping(100));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  auto is_drop = [](const CallResult& r) {
    return r.status.code() == absl::StatusCode::kUnavailable &&
           absl::StrContains(r.status.message(), "'lb'");
  };
  constexpr int kAll = 20;
  for (int i = 0; i < kAll; ++i) {
    CallResult r = Call();
    EXPECT_TRUE(is_drop(r)) << i << ": " << r.status;
  }
  EXPECT_EQ(b[0]->calls_received(), 0);
  ASSERT_NO_FATAL_FAILURE(Update(dropping(50)));
  constexpr int kCalls = 400;
  int dropped = 0;
  for (int i = 0; i < kCalls; ++i) {
    CallResult r = Call();
    if (is_drop(r)) {
      ++dropped;
    } else {
      EXPECT_TRUE(r.status.ok()) << i << ": " << r.status;
    }
  }
  ExpectShare(dropped, kCalls, 0.5);
  EXPECT_EQ(b[0]->calls_received(), kCalls - dropped);
  const std::string described = mesh_->Describe();
  EXPECT_THAT(described,
              HasSubstr(R"({"category":"lb","per_million":500000})"));
  EXPECT_THAT(described,
              HasSubstr(absl::StrCat("\"dropped\":", kAll + dropped, ",")));
}

TEST_F(XdsDataPathTest, FaultAbortFailsItsShareOfCalls) {
  Backends b = testing::StartBackends(1);
  auto aborting = [](int percent) {
    return absl::StrCat(
        "abort { grpc_status: 14 percentage { numerator: ", percent, " } }");
  };
  ServeOneCluster(b,
                  OneHost(RouteTo(kCluster, R"(path: "/test.Echo/Spared")", "",
                                  FaultOverride(aborting(0))) +
                          RouteTo(kCluster)),
                  MakeListener(aborting(100)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  for (int i = 0; i < 20; ++i) {
    CallResult r = Call();
    EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
    EXPECT_THAT(r.status.message(), HasSubstr("fault"));
    CallResult spared = Call("/test.Echo/Spared");
    EXPECT_TRUE(spared.status.ok()) << i << ": " << spared.status;
  }
  EXPECT_EQ(b[0]->calls_received(), 20);
  ASSERT_NO_FATAL_FAILURE(Update(MakeListener(aborting(50))));
  constexpr int kCalls = 400;
  int aborted = 0;
  for (int i = 0; i < kCalls; ++i) {
    CallResult r = Call();
    if (r.status.code() == absl::StatusCode::kUnavailable) {
      ++aborted;
    } else {
      EXPECT_TRUE(r.status.ok()) << i << ": " << r.status;
    }
  }
  ExpectShare(aborted, kCalls, 0.5);
  EXPECT_EQ(b[0]->calls_received(), 20 + kCalls - aborted);
}

TEST_F(XdsDataPathTest, FaultDelayDelaysItsCalls) {
  Backends b = testing::StartBackends(1);
  constexpr absl::Duration kDelay = absl::Milliseconds(200);
  ServeOneCluster(b, OneHost(RouteTo(kCluster)),
                  MakeListener("delay { fixed_delay { nanos: 200000000 } "
                               "percentage { numerator: 100 } }"));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  for (int i = 0; i < 3; ++i) {
    const absl::Time start = absl::Now();
    CallResult r = Call();
    const absl::Duration took = absl::Now() - start;
    EXPECT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_GE(took, kDelay) << i;
  }
  EXPECT_EQ(b[0]->calls_received(), 3);
}

TEST_F(XdsDataPathTest, HeaderAbortIsAppliedWhenTheRequestAsks) {
  Backends b = testing::StartBackends(1);
  ServeOneCluster(
      b, OneHost(RouteTo(kCluster)),
      MakeListener("abort { header_abort {} percentage { numerator: 100 } }"));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  CallResult asked = Call(kSay, {{"x-envoy-fault-abort-grpc-request", "8"}});
  EXPECT_EQ(asked.status.code(), absl::StatusCode::kResourceExhausted)
      << asked.status;
  CallResult plain = Call();
  EXPECT_TRUE(plain.status.ok()) << plain.status;
  EXPECT_EQ(b[0]->calls_received(), 1);
}

TEST_F(XdsDataPathTest, RetryPolicyRetriesListedCodesOnAnotherEndpoint) {
  Backends b = testing::StartBackends(2);
  b[1]->set_status(grpc::StatusCode::UNAVAILABLE);
  ServeOneCluster(b,
                  OneHost(RouteTo(kCluster, R"(path: "/test.Echo/Retried")",
                                  R"(retry_policy { retry_on: "unavailable" )"
                                  "num_retries { value: 2 } }") +
                          RouteTo(kCluster)));
  // Round robin tries the failing endpoint within the first calls (P2C
  // could settle on the good one at once); after a failure it is ejected
  // for a while, which leaves later calls nothing to retry.
  ChannelOptions round_robin;
  round_robin.balancer.kind = BalancerKind::kRoundRobin;
  ASSERT_NO_FATAL_FAILURE(MakeMesh(round_robin));
  for (int i = 0; i < 100; ++i) {
    CallResult r = Call("/test.Echo/Retried");
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, b[0]->address()) << i;
  }
  EXPECT_GE(b[1]->calls_received(), 1) << "no call was retried";
  // A fresh balancer (no ejection yet) on the route without a policy.
  std::unique_ptr<Channel> other = NewChannel(round_robin);
  ASSERT_NE(other, nullptr);
  int failed = 0;
  for (int i = 0; i < 10; ++i) {
    CallResult r = other->CallRaw(kSay, "hello");
    if (r.status.code() == absl::StatusCode::kUnavailable) ++failed;
  }
  EXPECT_GE(failed, 1);
}

TEST_F(XdsDataPathTest, RetriesStayWithinTheRetryBudget) {
  Backends b = testing::StartBackends(2);
  for (auto& backend : b) backend->set_status(grpc::StatusCode::UNAVAILABLE);
  ServeOneCluster(b,
                  OneHost(RouteTo(kCluster, "",
                                  R"(retry_policy { retry_on: "unavailable" )"
                                  "num_retries { value: 4 } }")));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  constexpr int kCalls = 200;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kCalls; ++i) {
    CallResult r = Call();
    EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  }
  const double elapsed = absl::ToDoubleSeconds(absl::Now() - start);
  const int64_t attempts = b[0]->calls_received() + b[1]->calls_received();
  // The default budget (20% of requests plus 10 retries a second, over a
  // 10 s window): every window since the start allows its share, so over
  // `elapsed` at most 0.2 × requests + 10 × (elapsed + 10) retries.
  const double bound = kCalls + 0.2 * kCalls + 10 * (elapsed + 10);
  EXPECT_LE(attempts, bound) << "elapsed " << elapsed << " s";
  EXPECT_GT(attempts, kCalls) << "no retry";
}

TEST_F(XdsDataPathTest, OutlierDetectionEjectsByFailurePercentage) {
  Backends b = testing::StartBackends(5);
  b[0]->set_status(grpc::StatusCode::INTERNAL);  // a classified failure
  Set(MakeListener());
  Set(OneHost(RouteTo(kCluster)));
  std::vector<const tools::EchoBackend*> all;
  for (const auto& backend : b) all.push_back(backend.get());
  // Failure-percentage ejection only: consecutive failures and success
  // rate are off, so an ejection can only come from an interval's look.
  AddCluster(kCluster, all,
             "outlier_detection { interval { seconds: 1 } "
             "base_ejection_time { seconds: 60 } max_ejection_percent { "
             "value: 20 } enforcing_consecutive_5xx { value: 0 } "
             "enforcing_success_rate { value: 0 } "
             "enforcing_failure_percentage { value: 100 } "
             "failure_percentage_threshold { value: 50 } "
             "failure_percentage_minimum_hosts { value: 5 } "
             "failure_percentage_request_volume { value: 3 } }");
  ChannelOptions round_robin;  // every endpoint gets its share of calls
  round_robin.balancer.kind = BalancerKind::kRoundRobin;
  ASSERT_NO_FATAL_FAILURE(MakeMesh(round_robin));
  auto ejected = [&] {
    for (const EndpointStats& s : channel_->EndpointStatsSnapshot()) {
      if (s.address == b[0]->address()) return s.ejected;
    }
    return false;
  };
  int calls = 0;
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (!ejected() && calls < 100000 && absl::Now() < give_up) {
    Call();
    ++calls;
  }
  ASSERT_TRUE(ejected()) << "after " << calls << " calls";
  // Far more than consecutive ejection (off) would have allowed: b[0]
  // failed every call it got, at least the request volume.
  EXPECT_GE(b[0]->calls_received(), 3);
  const int64_t received = b[0]->calls_received();
  for (int i = 0; i < 100; ++i) {
    CallResult r = Call();
    EXPECT_TRUE(r.status.ok()) << i << ": " << r.status;
  }
  EXPECT_EQ(b[0]->calls_received(), received) << "an ejected endpoint served";
  // Describe() shows the policy the balancers got.
  EXPECT_THAT(mesh_->Describe(),
              HasSubstr(R"("outlier_detection":{"consecutive_failures":0,)"));
}

TEST_F(XdsDataPathTest, HonourRoundRobinServesEachEndpointInTurn) {
  Backends b = testing::StartBackends(3);
  ServeOneCluster(b);  // lb_policy ROUND_ROBIN (the default)
  testing::XdsMeshOptions literal;
  literal.honour_round_robin = true;
  ASSERT_NO_FATAL_FAILURE(MakeMesh({}, literal));
  // Round robin: in every three calls in a row, each endpoint once. (P2C,
  // the channel's default, would choose by load and latency.)
  for (int round = 0; round < 50; ++round) {
    std::set<std::string> seen;
    for (int i = 0; i < 3; ++i) {
      CallResult r = Call();
      ASSERT_TRUE(r.status.ok()) << r.status;
      seen.insert(r.endpoint);
    }
    EXPECT_EQ(seen.size(), 3u) << "round " << round;
  }
}

TEST_F(XdsDataPathTest, EndpointUpdatesAreFollowedWhileCallsFlow) {
  Backends b = testing::StartBackends(3);
  ServeOneCluster(b);
  Set(Cla(kCluster, {b[0].get(), b[1].get()}));  // 2 comes with the update
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  constexpr int kCalls = 600;
  constexpr int kUpdateAt = 200;
  int applied_at = -1;  // the calls from here on start after the update
  testing::Load load(*channel_, kCalls, 4);
  load.Run([&](int i) {
    if (i != kUpdateAt) return;
    ASSERT_NO_FATAL_FAILURE(Update(Cla(kCluster, {b[1].get(), b[2].get()})));
    applied_at = i;
  });
  ASSERT_EQ(applied_at, kUpdateAt);
  EXPECT_EQ(load.CountOk(), kCalls);
  int on_0_after = 0;
  for (int i = applied_at; i < kCalls; ++i) {
    on_0_after += load.results()[i].endpoint == b[0]->address();
  }
  EXPECT_EQ(on_0_after, 0);
  EXPECT_GT(load.CountOn(b[2]->address()), 0);
  EXPECT_EQ(b[0]->calls_received(), load.CountOn(b[0]->address()));
  EXPECT_GT(b[0]->calls_received(), 0);
}

}  // namespace
}  // namespace mesh

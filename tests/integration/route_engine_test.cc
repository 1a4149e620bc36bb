// The route engine over real gRPC backends on 127.0.0.1: traffic split,
// response classes, retry attempts and backoff, retries of requests that
// never reached a server, and outlier ejection of a fast-failing endpoint.
#include <cmath>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"
#include "src/route/retry_decision.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

using testing::Load;

constexpr char kTarget[] = "books.test:7000";
constexpr char kMethod[] = "/test.Echo/Say";

// Configures kTarget.
struct Fixture : testing::StaticMesh {
  void Configure(Channel& channel, const ServiceConfig& config) {
    StaticMesh::Configure(channel, kTarget, config);
  }
};

ServiceConfig SplitOf(std::vector<WeightedBackend> backends) {
  ServiceConfig config;
  config.backends = std::move(backends);
  return config;
}

TEST(SplitTest, NinetyTenWeightsLandWithinABinomialTolerance) {
  Fixture f;
  auto backends = testing::StartBackends(2);
  ASSERT_TRUE(
      f.discovery
          ->SetEndpoints("v1.books.test:7000", {{backends[0]->address()}})
          .ok());
  ASSERT_TRUE(
      f.discovery
          ->SetEndpoints("v2.books.test:7000", {{backends[1]->address()}})
          .ok());
  auto channel = *f.mesh->NewChannel(kTarget);
  f.Configure(*channel, SplitOf({{"v1.books.test:7000", 9000},
                                 {"v2.books.test:7000", 1000}}));
  const int kCalls = 2000;
  Load load(*channel, kCalls, 8);
  load.Run();
  EXPECT_EQ(load.CountOk(), kCalls);
  // The apex has no endpoints of its own: every call went to a backend.
  int v2 = load.CountOn(backends[1]->address());
  EXPECT_EQ(load.CountOn(backends[0]->address()) + v2, kCalls);
  // Binomial(2000, 0.1): mean 200, σ ≈ 13.4; ±5σ.
  double sigma = std::sqrt(kCalls * 0.1 * 0.9);
  EXPECT_NEAR(v2, kCalls * 0.1, 5 * sigma);
  EXPECT_EQ(backends[1]->calls_received(), v2);
}

TEST(SplitTest, ABackendWithNoEndpointsIsSkippedWhileAnotherHasSome) {
  Fixture f;
  auto backends = testing::StartBackends(1);
  ASSERT_TRUE(
      f.discovery
          ->SetEndpoints("v1.books.test:7000", {{backends[0]->address()}})
          .ok());
  // v2 exists but is empty; v3 is unknown to discovery (never answers).
  ASSERT_TRUE(f.discovery->SetEndpoints("v2.books.test:7000", {}).ok());
  auto channel = *f.mesh->NewChannel(kTarget);
  f.Configure(*channel, SplitOf({{"v1.books.test:7000", 1},
                                 {"v2.books.test:7000", 50},
                                 {"v3.books.test:7000", 50}}));
  Load load(*channel, 200, 4);
  load.Run();
  EXPECT_EQ(load.CountOk(), 200);
  EXPECT_EQ(backends[0]->calls_received(), 200);

  // With no backend that has endpoints, the call waits out the fail-fast
  // timeout and says why.
  ASSERT_TRUE(f.discovery->SetEndpoints("v1.books.test:7000", {}).ok());
  ChannelOptions impatient;
  impatient.fail_fast_timeout = absl::Milliseconds(50);
  channel = *f.mesh->NewChannel(kTarget, impatient);
  CallResult r = channel->CallRaw(kMethod, "x");
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.status.message(), ::testing::HasSubstr("traffic split"));
  EXPECT_THAT(r.status.message(), ::testing::HasSubstr("v3.books.test:7000"));
}

TEST(SplitTest, AChangedSplitMovesTrafficAtOnce) {
  Fixture f;
  auto backends = testing::StartBackends(2);
  ASSERT_TRUE(
      f.discovery->SetEndpoints(kTarget, {{backends[0]->address()}}).ok());
  ASSERT_TRUE(
      f.discovery
          ->SetEndpoints("canary.books.test:7000", {{backends[1]->address()}})
          .ok());
  auto channel = *f.mesh->NewChannel(kTarget);
  // All to the apex itself (its own endpoints), then all to the canary.
  f.Configure(*channel, SplitOf({{kTarget, 1}}));
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(channel->CallRaw(kMethod, "x").endpoint, backends[0]->address());
  }
  ASSERT_TRUE(
      f.discovery
          ->SetServiceConfig(kTarget, SplitOf({{"canary.books.test:7000", 1}}))
          .ok());
  ASSERT_TRUE(testing::WaitFor([&] {
    return channel->service_config()->backends[0].authority ==
           "canary.books.test:7000";
  }));
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(channel->CallRaw(kMethod, "x").endpoint, backends[1]->address());
  }
}

TEST(SplitTest, SplitChangesUnderLoadWithRetriesInFlight) {
  Fixture f;
  auto backends = testing::StartBackends(3);
  const std::string v[] = {"v1.books.test:7000", "v2.books.test:7000",
                           "v3.books.test:7000"};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        f.discovery->SetEndpoints(v[i], {{backends[i]->address()}}).ok());
  }
  // v2 fails: its calls are retried after a short backoff, so retries still
  // hold the split they started under when it changes.
  backends[1]->set_status(grpc::StatusCode::INTERNAL);
  auto channel = *f.mesh->NewChannel(kTarget);
  RetryPolicy policy;
  policy.max_attempts = 4;
  policy.backoff_base = absl::Milliseconds(5);
  auto config_with = [&](std::vector<WeightedBackend> split) {
    ServiceConfig config = SplitOf(std::move(split));
    config.routes = {RouteBuilder("All").Retryable(policy).Build()};
    config.retry_budget = RetryBudget{1000, 1000, absl::Seconds(10)};
    return config;
  };
  f.Configure(*channel, config_with({{v[0], 1}, {v[1], 1}}));
  Load load(*channel, 600, 8);
  load.Run([&](int i) {
    std::vector<WeightedBackend> next;
    if (i == 150) next = {{v[0], 1}, {v[2], 1}};
    if (i == 300) next = {{v[2], 1}};
    if (i == 450) next = {{v[0], 1}, {v[1], 1}};
    if (!next.empty()) {
      EXPECT_TRUE(
          f.discovery->SetServiceConfig(kTarget, config_with(next)).ok());
    }
  });
  for (const auto& r : load.results()) {
    EXPECT_THAT(r.code, ::testing::AnyOf(absl::StatusCode::kOk,
                                         absl::StatusCode::kInternal));
  }
  EXPECT_GT(backends[2]->calls_received(), 0);
  // Every failure is v2's, after its attempts: the others never fail.
  EXPECT_EQ(load.CountOk() + load.CountOn(backends[1]->address()), 600);
}

TEST(DirectEndpointTest, ACallGoesStraightToTheConfiguredEndpoint) {
  Fixture f;
  auto backends = testing::StartBackends(2);
  ASSERT_TRUE(
      f.discovery->SetEndpoints(kTarget, {{backends[0]->address()}}).ok());
  auto channel = *f.mesh->NewChannel(kTarget);
  ServiceConfig config;
  config.endpoint = Endpoint{backends[1]->address()};
  f.Configure(*channel, config);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(channel->CallRaw(kMethod, "x").endpoint, backends[1]->address());
  }
  EXPECT_EQ(backends[0]->calls_received(), 0);
  EXPECT_EQ(backends[1]->calls_received(), 10);
}

TEST(ResponseClassTest, AMatchingClassDecidesOverTheGrpcStatus) {
  Fixture f;
  auto backends = testing::StartBackends(2);
  for (auto& b : backends) b->set_status(grpc::StatusCode::INTERNAL);
  ASSERT_TRUE(
      f.discovery->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = *f.mesh->NewChannel(kTarget);
  // Retryable, but every answer on HTTP 200 is classified a success: no
  // INTERNAL answer is retried.
  ServiceConfig config;
  config.routes = {RouteBuilder("Say")
                       .GrpcMethod("test.Echo", "Say")
                       .Retryable()
                       .Classify(ResponseMatch::Status(200, 299), false)
                       .Build()};
  f.Configure(*channel, config);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(channel->CallRaw(kMethod, "x").status.code(),
              absl::StatusCode::kInternal);
  }
  EXPECT_EQ(backends[0]->calls_received() + backends[1]->calls_received(), 20);

  // The same route without the class: INTERNAL is a failure, and retried.
  config.routes[0].response_classes.clear();
  config.routes[0].name = "SayRetried";
  ASSERT_TRUE(f.discovery->SetServiceConfig(kTarget, config).ok());
  ASSERT_TRUE(testing::WaitFor([&] {
    return channel->service_config()->routes[0].name == "SayRetried";
  }));
  EXPECT_EQ(channel->CallRaw(kMethod, "x").status.code(),
            absl::StatusCode::kInternal);
  EXPECT_GT(backends[0]->calls_received() + backends[1]->calls_received(), 22);
}

TEST(RetryPolicyTest, MaxAttemptsBoundsEachCall) {
  Fixture f;
  auto backends = testing::StartBackends(3);
  for (auto& b : backends) b->set_status(grpc::StatusCode::UNKNOWN);
  ASSERT_TRUE(
      f.discovery->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = *f.mesh->NewChannel(kTarget);
  RetryPolicy policy;
  policy.max_attempts = 3;
  policy.backoff_base = absl::Milliseconds(2);  // through the timer thread
  ServiceConfig config;
  config.routes = {RouteBuilder("All").Retryable(policy).Build()};
  config.retry_budget = RetryBudget{1000, 1000, absl::Seconds(10)};
  f.Configure(*channel, config);
  const int kCalls = 50;
  Load load(*channel, kCalls, 4);
  load.Run();
  EXPECT_EQ(load.CountOk(), 0);
  int64_t attempts = 0;
  for (auto& b : backends) attempts += b->calls_received();
  EXPECT_EQ(attempts, kCalls * 3);
}

TEST(RetryPolicyTest, DestroyingTheMeshEndsCallsWaitingOutABackoff) {
  auto backends = testing::StartBackends(1);
  backends[0]->set_status(grpc::StatusCode::INTERNAL);
  Fixture f;
  ASSERT_TRUE(
      f.discovery->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = *f.mesh->NewChannel(kTarget);
  RetryPolicy policy;
  policy.backoff_base = absl::Seconds(20);
  policy.backoff_max = absl::Seconds(20);
  ServiceConfig config;
  config.routes = {RouteBuilder("All").Retryable(policy).Build()};
  f.Configure(*channel, config);
  const int kCalls = 10;
  internal::Mutex mu;
  std::vector<absl::StatusCode> codes;
  for (int i = 0; i < kCalls; ++i) {
    channel->CallRawAsync(kMethod, "x", {}, [&](CallResult r) {
      internal::MutexLock lock(&mu);
      codes.push_back(r.status.code());
    });
  }
  // Every call has made its first attempt and most wait in backoff (up to
  // 20 s each), none answered yet.
  ASSERT_TRUE(testing::WaitFor(
      [&] { return backends[0]->calls_received() >= kCalls; }));
  f.mesh.reset();
  internal::MutexLock lock(&mu);
  ASSERT_EQ(codes.size(), static_cast<size_t>(kCalls));
  for (absl::StatusCode c : codes) {
    EXPECT_THAT(c, ::testing::AnyOf(absl::StatusCode::kCancelled,
                                    absl::StatusCode::kInternal));
  }
}

// One live backend and the address of a dead one (its port refuses).
struct LiveAndDead {
  LiveAndDead() {
    backends = testing::StartBackends(2);
    dead = backends[1]->address();
    backends[1]->Kill();
  }
  std::vector<std::unique_ptr<tools::EchoBackend>> backends;
  std::string dead;
};

TEST(ConnectFailureTest, RequestsThatNeverReachedAServerAreRetried) {
  Fixture f;
  LiveAndDead fleet;
  ASSERT_TRUE(f.discovery
                  ->SetEndpoints(kTarget,
                                 {{fleet.backends[0]->address()}, {fleet.dead}})
                  .ok());
  ChannelOptions options;
  options.balancer.kind = BalancerKind::kRoundRobin;     // the dead one in turn
  auto channel = *f.mesh->NewChannel(kTarget, options);  // default route
  for (int i = 0; i < 20; ++i) {
    CallResult r = channel->CallRaw(kMethod, "x");
    EXPECT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.endpoint, fleet.backends[0]->address());
  }
  EXPECT_EQ(fleet.backends[0]->calls_received(), 20);
}

TEST(ConnectFailureTest, ALoneDeadEndpointCostsACallFourAttemptsNotTheBudget) {
  Fixture f;
  LiveAndDead fleet;
  ASSERT_TRUE(f.discovery->SetEndpoints(kTarget, {{fleet.dead}}).ok());
  auto channel = *f.mesh->NewChannel(kTarget);  // retry_connect_failures on
  const testing::PrometheusLabels route = {{"authority", kTarget},
                                           {"route", "[default]"}};
  auto attempts = [&] {
    absl::StatusOr<testing::PrometheusText> text =
        testing::ParsePrometheusText(f.mesh->Metrics());
    return text.ok()
               ? text->Value("route_actual_request_total", route).value_or(-1)
               : -1;
  };
  for (int call = 1; call <= 3; ++call) {
    CallResult r = channel->CallRaw(kMethod, "x");
    EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
    EXPECT_EQ(r.endpoint, fleet.dead);
    // The first attempt and kMaxConnectFailureRetries more, each call: the
    // retry budget (10 a second for 10 s, at the start) would allow far
    // more.
    EXPECT_EQ(attempts(), call * (1 + internal::kMaxConnectFailureRetries))
        << "after call " << call;
  }
}

TEST(ConnectFailureTest, WithoutTheOptionTheFailureReachesTheCaller) {
  Fixture f;
  LiveAndDead fleet;
  ASSERT_TRUE(f.discovery
                  ->SetEndpoints(kTarget,
                                 {{fleet.backends[0]->address()}, {fleet.dead}})
                  .ok());
  ChannelOptions options;
  options.balancer.kind = BalancerKind::kRoundRobin;
  options.retry_connect_failures = false;
  auto channel = *f.mesh->NewChannel(kTarget, options);
  int unavailable = 0;
  for (int i = 0; i < 4; ++i) {
    CallResult r = channel->CallRaw(kMethod, "x");
    if (r.status.code() == absl::StatusCode::kUnavailable) {
      ++unavailable;
      EXPECT_EQ(r.endpoint, fleet.dead);
    }
  }
  // Round robin reaches the dead endpoint within two calls.
  EXPECT_GE(unavailable, 1);
}

TEST(ConnectFailureTest, AServerSentUnavailableIsNotReplayedOnANormalRoute) {
  Fixture f;
  auto backends = testing::StartBackends(2);
  for (auto& b : backends) b->set_status(grpc::StatusCode::UNAVAILABLE);
  ASSERT_TRUE(
      f.discovery->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = *f.mesh->NewChannel(kTarget);  // retry_connect_failures on
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(channel->CallRaw(kMethod, "x").status.code(),
              absl::StatusCode::kUnavailable);
  }
  // The server got each request: none was sent twice.
  EXPECT_EQ(backends[0]->calls_received() + backends[1]->calls_received(), 10);
}

TEST(EjectionTest, AFastFailingBackendLosesItsTrafficAndWinsItBackHealed) {
  Fixture f;
  auto backends = testing::StartBackends(3);
  // Healthy ones take 2 ms; the bad one fails at once, which would make it
  // the cheapest pick for a latency-only balancer.
  for (auto& b : backends) b->set_delay(absl::Milliseconds(2));
  backends[0]->set_delay(absl::ZeroDuration());
  backends[0]->set_status(grpc::StatusCode::INTERNAL);
  ASSERT_TRUE(
      f.discovery->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  ChannelOptions options;
  options.balancer.ejection_consecutive_failures = 5;
  options.balancer.ejection_base = absl::Seconds(1);
  // An endpoint with no sample yet looks cheaper than a 2 ms one, so the bad
  // one is tried at once. With the default (30 ms), a run whose first picks
  // all missed it never picked it again: both loads gave it 0 calls.
  options.balancer.default_rtt = absl::Microseconds(100);
  options.retry_connect_failures = false;
  auto channel = *f.mesh->NewChannel(kTarget, options);  // no retries
  const std::string bad = backends[0]->address();
  auto stats_of_bad = [&] {
    for (const EndpointStats& s : channel->EndpointStatsSnapshot()) {
      if (s.address == bad) return s;
    }
    return EndpointStats{};
  };

  Load sick(*channel, 300, 4);
  sick.Run();
  // Five failures in a row eject it; while ejected it gets nothing (a
  // second ejection after 1 s may let a few more through on a slow run).
  EXPECT_LE(sick.CountOn(bad), 15);
  EXPECT_GE(stats_of_bad().ejections, 1u);
  EXPECT_EQ(sick.CountOk(), 300 - sick.CountOn(bad));

  backends[0]->set_status(grpc::StatusCode::OK);
  ASSERT_TRUE(testing::WaitFor([&] { return !stats_of_bad().ejected; }));
  Load healed(*channel, 300, 4);
  healed.Run();
  EXPECT_EQ(healed.CountOk(), 300);
  // Healed, and the fastest: it takes a good share again.
  EXPECT_GE(healed.CountOn(bad), 30);
}

TEST(MetricsTest, TheTextParsesAndItsCountersAgreeWithTheTraffic) {
  Fixture f;
  auto backends = testing::StartBackends(3);
  backends[0]->set_status(grpc::StatusCode::INTERNAL);
  backends[1]->set_status(grpc::StatusCode::INTERNAL);
  ASSERT_TRUE(
      f.discovery->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  ChannelOptions options;
  options.retry_connect_failures = false;
  auto channel = *f.mesh->NewChannel(kTarget, options);
  RetryPolicy policy;
  policy.max_attempts = 2;
  ServiceConfig config;
  config.routes = {RouteBuilder("Say")
                       .GrpcMethod("test.Echo", "Say")
                       .Retryable(policy)
                       .Build()};
  f.Configure(*channel, config);

  // "Say": retried once at most; the rest: the default route.
  // Two of three backends fail: some calls fail on both attempts.
  const int kSay = 100, kOther = 20;
  int ok = 0, internal = 0;
  for (int i = 0; i < kSay; ++i) {
    absl::StatusCode code = channel->CallRaw(kMethod, "x").status.code();
    ok += code == absl::StatusCode::kOk;
    internal += code == absl::StatusCode::kInternal;
  }
  int other_internal = 0;
  for (int i = 0; i < kOther; ++i) {
    other_internal += channel->CallRaw("/test.Echo/Other", "x").status.code() ==
                      absl::StatusCode::kInternal;
  }
  CallOptions instant;
  instant.timeout = absl::Nanoseconds(1);
  EXPECT_EQ(channel->CallRaw("/test.Echo/Other", "x", instant).status.code(),
            absl::StatusCode::kDeadlineExceeded);
  ASSERT_EQ(ok + internal, kSay);

  std::string rendered = f.mesh->Metrics();
  absl::StatusOr<testing::PrometheusText> text =
      testing::ParsePrometheusText(rendered);
  ASSERT_TRUE(text.ok()) << text.status() << "\n" << rendered;
  const testing::PrometheusLabels say = {{"authority", kTarget},
                                         {"route", "Say"}};
  const testing::PrometheusLabels other = {{"authority", kTarget},
                                           {"route", "[default]"}};
  for (const char* family :
       {"route_request_total", "route_actual_request_total",
        "route_response_total", "route_response_latency_ms",
        "route_retry_total", "route_retry_skipped_total", "route_timeout_total",
        "endpoint_request_total", "endpoint_response_total",
        "endpoint_ejections_total"}) {
    EXPECT_NE(text->Family(family), nullptr) << family;
  }
  // A series that is not there counts 0.
  auto value = [&](const char* name, testing::PrometheusLabels labels) {
    return text->Value(name, labels).value_or(0);
  };
  int64_t sent = 0;
  for (auto& b : backends) sent += b->calls_received();

  EXPECT_EQ(value("route_request_total", say), kSay);
  EXPECT_EQ(value("route_request_total", other), kOther + 1);
  // Every attempt reached a backend; the call out of time sent none.
  EXPECT_EQ(value("route_actual_request_total", say) +
                value("route_actual_request_total", other),
            sent);
  EXPECT_EQ(value("route_retry_total", say),
            value("route_actual_request_total", say) - kSay);
  EXPECT_GT(value("route_retry_total", say), 0);
  EXPECT_EQ(value("route_retry_total", other), 0);
  auto with = [](testing::PrometheusLabels labels, const char* k,
                 const char* v) {
    labels[k] = v;
    return labels;
  };
  EXPECT_EQ(
      value("route_response_total",
            with(with(say, "classification", "success"), "grpc_status", "0")),
      ok);
  EXPECT_EQ(
      value("route_response_total",
            with(with(say, "classification", "failure"), "grpc_status", "13")),
      internal);
  EXPECT_EQ(value("route_response_total", say), kSay);
  // A failure whose retry was refused by max_attempts.
  EXPECT_EQ(
      value("route_retry_skipped_total", with(say, "reason", "max_attempts")),
      internal)
      << rendered;
  EXPECT_EQ(value("route_response_total",
                  with(with(other, "classification", "failure"), "grpc_status",
                       "13")),
            other_internal);
  EXPECT_EQ(value("route_timeout_total", other), 1);
  EXPECT_EQ(value("route_timeout_total", say), 0);
  EXPECT_EQ(value("route_response_latency_ms_count", say), kSay);
  EXPECT_EQ(value("route_response_latency_ms_bucket", with(say, "le", "+Inf")),
            kSay);

  // Per endpoint: what each backend received, and the failing one's
  // failures by status.
  for (auto& b : backends) {
    testing::PrometheusLabels endpoint = {{"authority", kTarget},
                                          {"endpoint", b->address()}};
    EXPECT_EQ(value("endpoint_request_total", endpoint), b->calls_received())
        << b->address();
    EXPECT_EQ(value("endpoint_response_total", endpoint), b->calls_received())
        << b->address();
  }
  testing::PrometheusLabels bad = {{"authority", kTarget},
                                   {"endpoint", backends[0]->address()},
                                   {"classification", "failure"},
                                   {"grpc_status", "13"}};
  EXPECT_EQ(value("endpoint_response_total", bad),
            backends[0]->calls_received());
  // Ejections: each failing backend's counter is what the balancer counted.
  // Every call to them fails, so one of them (the share limit allows one of
  // three) reached 5 consecutive failures and was ejected.
  uint64_t ejections_seen = 0;
  for (int i : {0, 1}) {
    uint64_t ejections = 0;
    for (const EndpointStats& s : channel->EndpointStatsSnapshot()) {
      if (s.address == backends[i]->address()) ejections = s.ejections;
    }
    EXPECT_EQ(value("endpoint_ejections_total",
                    {{"endpoint", backends[i]->address()}}),
              ejections)
        << backends[i]->address();
    ejections_seen += ejections;
  }
  EXPECT_GT(ejections_seen, 0u);
}

}  // namespace
}  // namespace mesh

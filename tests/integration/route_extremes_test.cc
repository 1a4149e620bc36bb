// Route configs at the edges of their valid ranges, over real gRPC backends
// on 127.0.0.1: a retry budget whose ratio is tiny but valid, traffic split
// weights whose sums pass 32 bits, a route past the route table's limits.
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "tests/support/log_capture.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

using testing::Load;

constexpr char kTarget[] = "books.test:7000";

// Configures kTarget.
struct Fixture : testing::StaticMesh {
  void Configure(Channel& channel, const ServiceConfig& config) {
    StaticMesh::Configure(channel, kTarget, config);
  }
};

// Sends 300 calls to kTarget, on two backends that always fail UNAVAILABLE,
// with one retryable route (`timeout` each) and `budget`; returns the
// attempts the backends received.
int64_t AttemptsOfFailingCalls(std::optional<RetryBudget> budget,
                               absl::Duration timeout) {
  auto backends = testing::StartBackends(2);
  for (auto& b : backends) b->set_status(grpc::StatusCode::UNAVAILABLE);
  Fixture f;
  EXPECT_TRUE(
      f.discovery->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = *f.mesh->NewChannel(kTarget);
  ServiceConfig config;
  config.routes = {RouteBuilder("All").Retryable().Timeout(timeout).Build()};
  config.retry_budget = budget;
  f.Configure(*channel, config);
  EXPECT_EQ(channel->service_config()->retry_budget.has_value(),
            budget.has_value());
  Load load(*channel, 300, 4);
  load.Run();
  EXPECT_EQ(load.CountOk(), 0);
  int64_t attempts = 0;
  for (auto& b : backends) attempts += b->calls_received();
  return attempts;
}

// retry_ratio 1e-20 passes validation; its withdrawal once overflowed and
// 300 failing calls made 34,795 retries. Only the reserve may pay:
// min_retries_per_second 1 × ttl 10 s = 10 retries.
TEST(RetryBudgetExtremesTest, ATinyRatioLeavesOnlyTheReserve) {
  // The timeout only bounds the test if the budget fails to.
  int64_t attempts = AttemptsOfFailingCalls(
      RetryBudget{1e-20, 1, absl::Seconds(10)}, absl::Milliseconds(200));
  EXPECT_GE(attempts, 300);
  EXPECT_LE(attempts, 300 + 10);
}

// A config without a budget (a Linkerd profile's invalid one is dropped to
// this, and its log line says the default applies): Linkerd's default
// budget, 20 % of requests plus 10/s over 10 s, bounds the retries.
TEST(RetryBudgetExtremesTest, WithoutABudgetTheDefaultOneApplies) {
  int64_t attempts = AttemptsOfFailingCalls(std::nullopt, absl::Seconds(1));
  // 0.2 × 300 + 10 × 10 = 160 retries; every one of them is spent, since
  // each call wants many more (±1: 0.2 × 300 in doubles).
  EXPECT_NEAR(attempts, 300 + 160, 1);
}

// Four dst_overrides of 2^30 to one healthy authority summed to 0 in 32
// bits, and every call failed "no backend of the traffic split has
// endpoints".
TEST(SplitExtremesTest, WeightsSummingPast32BitsStillRoute) {
  auto backends = testing::StartBackends(2);
  Fixture f;
  ASSERT_TRUE(
      f.discovery
          ->SetEndpoints("v1.books.test:7000", {{backends[0]->address()}})
          .ok());
  ASSERT_TRUE(
      f.discovery
          ->SetEndpoints("v2.books.test:7000", {{backends[1]->address()}})
          .ok());
  auto channel = *f.mesh->NewChannel(kTarget);
  ServiceConfig config;
  for (int i = 0; i < 4; ++i) {
    config.backends.push_back({"v1.books.test:7000", 1u << 30});
  }
  f.Configure(*channel, config);
  Load all_v1(*channel, 200, 4);
  all_v1.Run();
  EXPECT_EQ(all_v1.CountOk(), 200);
  EXPECT_EQ(all_v1.CountOn(backends[0]->address()), 200);

  // 4294967295 + 2 against 1 once wrapped to 1 : 1, a 50/50 split.
  config.backends = {{"v1.books.test:7000", 4294967295u},
                     {"v1.books.test:7000", 2},
                     {"v2.books.test:7000", 1}};
  ASSERT_TRUE(f.discovery->SetServiceConfig(kTarget, config).ok());
  ASSERT_TRUE(testing::WaitFor(
      [&] { return channel->service_config()->backends.size() == 3; }));
  Load lopsided(*channel, 400, 4);
  lopsided.Run();
  EXPECT_EQ(lopsided.CountOk(), 400);
  // v2's share is 2.3e-10: a handful of calls there would be a bug.
  EXPECT_LE(lopsided.CountOn(backends[1]->address()), 1);
}

// One route whose condition is an `any` of 20,000 path regexes once made
// every call cost 7 ms at p50: the route is dropped with a line naming the
// limit, and calls take the next route that matches.
TEST(RouteLimitsExtremesTest, AHostileRouteIsDroppedAndTheNextOneServes) {
  testing::LogCapture log;
  auto backends = testing::StartBackends(1);
  Fixture f;
  ASSERT_TRUE(
      f.discovery->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = *f.mesh->NewChannel(kTarget);
  std::vector<RequestMatch> many;
  for (int i = 0; i < 20000; ++i) {
    many.push_back(RequestMatch::Path(absl::StrCat("/test.Echo/Say", i)));
  }
  many.push_back(RequestMatch::Path("/test.Echo/Say"));
  ServiceConfig config;
  config.routes = {
      RouteBuilder("Hostile").When(RequestMatch::Any(std::move(many))).Build(),
      RouteBuilder("Good").GrpcMethod("test.Echo", "Say").Build()};
  f.Configure(*channel, config);
  EXPECT_TRUE(log.WaitForLine({"routes for 'books.test:7000'",
                               "route 0 'Hostile' dropped",
                               "RouteLimits::max_conditions_per_route"}));
  const int kCalls = 10;
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(channel->CallRaw("/test.Echo/Say", "x").status.ok());
  }
  absl::StatusOr<testing::PrometheusText> text =
      testing::ParsePrometheusText(f.mesh->Metrics());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->Value("route_request_total",
                        {{"authority", kTarget}, {"route", "Good"}}),
            kCalls);
  EXPECT_FALSE(text->Value("route_request_total",
                           {{"authority", kTarget}, {"route", "Hostile"}})
                   .has_value());
}

TEST(RouteLimitsExtremesTest, MeshOptionsRefuseZeroLimits) {
  for (int field = 0; field < 4; ++field) {
    MeshOptions options;
    options.discovery = StaticDiscovery::Create();
    if (field == 0) options.route_limits.max_routes = 0;
    if (field == 1) options.route_limits.max_conditions_per_route = 0;
    if (field == 2) options.route_limits.max_depth = 0;
    if (field == 3) options.route_limits.max_regex_program_size = 0;
    auto mesh = Mesh::Create(options);
    ASSERT_FALSE(mesh.ok()) << field;
    EXPECT_THAT(std::string(mesh.status().message()),
                ::testing::HasSubstr("MeshOptions.route_limits."));
  }
}

}  // namespace
}  // namespace mesh

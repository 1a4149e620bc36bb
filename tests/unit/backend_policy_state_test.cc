// BackendPolicyState: a backend policy's drops, circuit breaker, fault
// limit and balancer options, as the attempts to a destination see them.
#include "src/channel/backend_policy_state.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

using ::testing::HasSubstr;

TEST(BackendPolicyStateTest, WithoutAPolicyNothingIsLimitedOrDropped) {
  BackendPolicyState state("books:7000");
  EXPECT_EQ(state.generation(), 0u);
  EXPECT_FALSE(state.policy().has_value());
  EXPECT_FALSE(state.DrawDrop().has_value());
  for (int i = 0; i < 100; ++i) {
    bool counted = true;
    EXPECT_TRUE(state.TryStartRequest(&counted));
    EXPECT_FALSE(counted);  // no limit: nothing to end
  }
  EXPECT_EQ(state.in_flight(), 0);
  BalancerOptions channel;
  channel.kind = BalancerKind::kRoundRobin;
  EXPECT_EQ(state.BalancerOptionsFor(channel).kind, BalancerKind::kRoundRobin);
}

TEST(BackendPolicyStateTest, AnEqualPolicyChangesNothing) {
  BackendPolicyState state("books:7000");
  BackendPolicy policy;
  policy.max_requests = 3;
  EXPECT_TRUE(state.Apply(policy));
  EXPECT_EQ(state.generation(), 1u);
  EXPECT_FALSE(state.Apply(policy));
  EXPECT_EQ(state.generation(), 1u);
  policy.drops.push_back({"lb", 10});
  EXPECT_TRUE(state.Apply(policy));
  EXPECT_EQ(state.generation(), 2u);
  ASSERT_TRUE(state.policy().has_value());
  EXPECT_EQ(state.policy()->drops.size(), 1u);
}

TEST(BackendPolicyStateTest, TheCircuitBreakerCountsAndRefusesPastItsLimit) {
  BackendPolicyState state("books:7000");
  BackendPolicy policy;
  policy.max_requests = 2;
  state.Apply(policy);
  bool a = false, b = false, c = true;
  EXPECT_TRUE(state.TryStartRequest(&a));
  EXPECT_TRUE(state.TryStartRequest(&b));
  EXPECT_TRUE(a && b);
  EXPECT_FALSE(state.TryStartRequest(&c));
  EXPECT_FALSE(c);
  EXPECT_EQ(state.in_flight(), 2);
  absl::Status refused = state.CircuitBreakerStatus();
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("'books:7000' has 2"));
  EXPECT_EQ(state.refusals(), 1);
  state.EndRequest();
  EXPECT_TRUE(state.TryStartRequest(&c));
  EXPECT_TRUE(c);
}

TEST(BackendPolicyStateTest, AFullDropDropsEveryRequestNamingItsCategory) {
  BackendPolicyState state("books:7000");
  BackendPolicy policy;
  policy.drops = {{"never", 0}, {"always", 1'000'000}};
  state.Apply(policy);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(state.DrawDrop(), "always");
  EXPECT_EQ(state.dropped(), 50);
  policy.drops.clear();
  state.Apply(policy);
  EXPECT_FALSE(state.DrawDrop().has_value());
}

TEST(BackendPolicyStateTest, ActiveFaultsAreBoundedByTheLimit) {
  BackendPolicyState state("books:7000");
  EXPECT_TRUE(state.TryStartFault(2));
  EXPECT_TRUE(state.TryStartFault(2));
  EXPECT_FALSE(state.TryStartFault(2));
  state.EndFault();
  EXPECT_TRUE(state.TryStartFault(2));
  EXPECT_TRUE(state.TryStartFault(0));  // 0: no limit
}

TEST(BackendPolicyStateTest, BalancingAndEjectionReplaceTheChannels) {
  BackendPolicyState state("books:7000");
  BackendPolicy policy;
  policy.balancing = BackendPolicy::Balancing::kRingHash;
  policy.ring_min_size = 64;
  policy.ring_max_size = 128;
  BackendPolicy::Ejection ejection;
  ejection.consecutive_failures = 7;
  ejection.base = absl::Seconds(10);
  ejection.max = absl::Seconds(5);  // below base: raised to base
  ejection.max_share = 0.25;
  policy.ejection = ejection;
  state.Apply(policy);
  BalancerOptions options = state.BalancerOptionsFor(BalancerOptions{});
  EXPECT_EQ(options.kind, BalancerKind::kRingHash);
  EXPECT_EQ(options.ring_min_size, 64u);
  EXPECT_EQ(options.ring_max_size, 128u);
  EXPECT_EQ(options.ejection_consecutive_failures, 7u);
  EXPECT_EQ(options.ejection_base, absl::Seconds(10));
  EXPECT_EQ(options.ejection_max, absl::Seconds(10));
  EXPECT_DOUBLE_EQ(options.ejection_max_share, 0.25);
  EXPECT_TRUE(options.interval_ejection.has_value());  // xDS: Envoy's rules
}

TEST(BackendPolicyStateTest,
     LinkerdsAccrualAndPeakEwmaTuningReplaceTheChannels) {
  BackendPolicyState state("books:7000");
  BackendPolicy policy;
  BackendPolicy::Ejection ejection;
  ejection.consecutive_failures = 3;
  ejection.interval_rules = false;
  ejection.min_ready_endpoints = 2;
  policy.ejection = ejection;
  policy.default_rtt = absl::Milliseconds(80);
  policy.decay = absl::Seconds(2);
  EXPECT_TRUE(state.Apply(policy));
  BalancerOptions channel;
  channel.interval_ejection.emplace();
  BalancerOptions options = state.BalancerOptionsFor(channel);
  EXPECT_EQ(options.ejection_consecutive_failures, 3u);
  EXPECT_EQ(options.ejection_min_ready, 2u);
  EXPECT_FALSE(options.interval_ejection.has_value());
  EXPECT_EQ(options.default_rtt, absl::Milliseconds(80));
  EXPECT_EQ(options.decay, absl::Seconds(2));
  // Another tuning is another policy.
  policy.decay = absl::Seconds(3);
  EXPECT_TRUE(state.Apply(policy));
  EXPECT_EQ(state.BalancerOptionsFor(channel).decay, absl::Seconds(3));
}

}  // namespace
}  // namespace mesh::internal

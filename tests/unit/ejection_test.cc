// Outlier ejection: consecutive failures, linear backoff, maximum share,
// minimum ready.
#include <atomic>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/balancer.h"
#include "src/balance/balancer.h"
#include "src/balance/ejection_group.h"
#include "tests/support/balancer_calls.h"
#include "tests/support/fake_clock.h"

namespace mesh {
namespace {

using ::mesh::internal::Balancer;
using ::mesh::internal::CallHandle;
using ::mesh::internal::CallOutcome;

using ::mesh::internal::EjectionNanos;
using ::mesh::internal::MaxEjected;
using ::mesh::testing::FakeClock;
using ::mesh::testing::StatsOf;
using ::testing::HasSubstr;

constexpr char kA[] = "10.0.0.1:80";
constexpr char kB[] = "10.0.0.2:80";
constexpr char kC[] = "10.0.0.3:80";
constexpr char kD[] = "10.0.0.4:80";

std::vector<Endpoint> Eps(const std::vector<std::string>& addresses,
                          uint32_t weight = 1) {
  std::vector<Endpoint> out;
  for (const auto& a : addresses) {
    Endpoint e;
    e.address = a;
    e.weight = weight;
    out.push_back(e);
  }
  return out;
}

TEST(MaxEjectedTest, FloorOfShareAtLeastOneNeverAll) {
  EXPECT_EQ(MaxEjected(0, 0.5), 0u);
  EXPECT_EQ(MaxEjected(1, 1.0), 0u);  // never all
  EXPECT_EQ(MaxEjected(2, 0.0), 1u);  // at least one
  EXPECT_EQ(MaxEjected(2, 1.0), 1u);
  EXPECT_EQ(MaxEjected(3, 0.5), 1u);
  EXPECT_EQ(MaxEjected(4, 0.5), 2u);
  EXPECT_EQ(MaxEjected(10, 0.25), 2u);
  EXPECT_EQ(MaxEjected(5, 1.0), 4u);
}

TEST(EjectionNanosTest, BaseTimesNCappedAtMax) {
  EXPECT_EQ(EjectionNanos(1, 1000, 3500), 1000);
  EXPECT_EQ(EjectionNanos(2, 1000, 3500), 2000);
  EXPECT_EQ(EjectionNanos(3, 1000, 3500), 3000);
  EXPECT_EQ(EjectionNanos(4, 1000, 3500), 3500);
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  EXPECT_EQ(EjectionNanos(3, big, std::numeric_limits<int64_t>::max()),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(EjectionNanos(std::numeric_limits<uint64_t>::max(), 1, 7), 7);
}

TEST(EjectionNanosTest, ExponentialDoublesCappedAtMax) {
  EXPECT_EQ(EjectionNanos(1, 1000, 5000, /*exponential=*/true), 1000);
  EXPECT_EQ(EjectionNanos(2, 1000, 5000, true), 2000);
  EXPECT_EQ(EjectionNanos(3, 1000, 5000, true), 4000);
  EXPECT_EQ(EjectionNanos(4, 1000, 5000, true), 5000);
  EXPECT_EQ(EjectionNanos(70, 1000, 5000, true), 5000);  // no overflow
  EXPECT_EQ(EjectionNanos(std::numeric_limits<uint64_t>::max(), 1,
                          std::numeric_limits<int64_t>::max(), true),
            std::numeric_limits<int64_t>::max());
  const int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
  EXPECT_EQ(EjectionNanos(2, big, std::numeric_limits<int64_t>::max(), true),
            std::numeric_limits<int64_t>::max());
}

class EjectionTest : public ::testing::Test {
 protected:
  std::unique_ptr<Balancer> Make(const std::vector<std::string>& addresses,
                                 BalancerOptions options = {}) {
    absl::StatusOr<std::unique_ptr<Balancer>> b =
        Balancer::Create(options, &clock_, &rng_ref_);
    EXPECT_TRUE(b.ok()) << b.status();
    (*b)->SetEndpoints(Eps(addresses));
    return *std::move(b);
  }

  void End(Balancer& b, const std::string& address, CallOutcome outcome,
           int times = 1) {
    testing::EndOn(b, address, outcome, times, /*max_picks=*/10000);
  }

  bool EjectedForExactly(const Balancer& b, const std::string& address,
                         absl::Duration d) {
    return testing::EjectedForExactly(clock_, b, address, d);
  }

  FakeClock clock_;
  std::mt19937_64 rng_{99};
  absl::BitGenRef rng_ref_{rng_};
};

// Linkerd's failure accrual backoff: each ejection twice the last, up to
// max; with jitter each lasts up to that share longer, drawn anew.
TEST_F(EjectionTest, ExponentialDurationsDoubleAndJitterLengthensThem) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  o.ejection_max = absl::Seconds(5);
  o.ejection_exponential = true;
  auto b = Make({kA, kB}, o);
  for (int seconds : {1, 2, 4, 5, 5}) {
    End(*b, kA, CallOutcome::kEndpointFailure);
    EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(seconds)))
        << seconds << " s";
  }

  o.ejection_base = absl::Milliseconds(100);
  o.ejection_max = absl::Milliseconds(400);
  o.ejection_jitter = 0.5;
  b = Make({kA, kB}, o);
  // How long kA stays ejected, to the millisecond (at most 1 s).
  auto ejected_for = [&] {
    absl::Duration d;
    while (StatsOf(*b, kA).ejected && d < absl::Seconds(1)) {
      clock_.Advance(absl::Milliseconds(1));
      d += absl::Milliseconds(1);
    }
    return d;
  };
  std::set<int64_t> first_lengths;
  for (int run = 0; run < 20; ++run) {
    for (int64_t ms : {100, 200, 400}) {
      End(*b, kA, CallOutcome::kEndpointFailure);
      const absl::Duration d = ejected_for();
      EXPECT_GE(d, absl::Milliseconds(ms));
      EXPECT_LE(d, absl::Milliseconds(ms * 3 / 2 + 1));
      if (ms == 100) first_lengths.insert(absl::ToInt64Milliseconds(d));
    }
    clock_.Advance(absl::Seconds(1));  // healthy past max: starts over
  }
  EXPECT_GT(first_lengths.size(), 1u);  // drawn, not fixed
}

TEST(BalancerOptionsTest, EjectionJitterOutOfRangeIsRefused) {
  FakeClock clock;
  std::mt19937_64 rng{1};
  absl::BitGenRef ref{rng};
  BalancerOptions o;
  o.ejection_jitter = 101;
  absl::StatusOr<std::unique_ptr<Balancer>> b =
      Balancer::Create(o, &clock, &ref);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(), HasSubstr("ejection_jitter"));
}

TEST_F(EjectionTest, FifthClassifiedFailureInARowEjects) {
  auto b = Make({kA, kB});
  End(*b, kA, CallOutcome::kFailure, 4);
  EXPECT_FALSE(StatsOf(*b, kA).ejected);
  EXPECT_EQ(StatsOf(*b, kA).ejections, 0u);
  End(*b, kA, CallOutcome::kFailure);
  EndpointStats a = StatsOf(*b, kA);
  EXPECT_TRUE(a.ejected);
  EXPECT_EQ(a.ejections, 1u);
  EXPECT_EQ(a.failures, 5u);
  // Why, and for how long (the default base ejection time, 1 s, on a
  // clock that has not moved).
  EXPECT_EQ(a.ejection_reason, "consecutive_failures");
  EXPECT_DOUBLE_EQ(a.ejection_left_ms, 1000);
  EndpointStats other = StatsOf(*b, kB);
  EXPECT_EQ(other.ejection_reason, "");
  EXPECT_EQ(other.ejection_left_ms, 0);
}

TEST_F(EjectionTest, SuccessResetsTheCountAndCancelledLeavesIt) {
  auto b = Make({kA, kB});
  End(*b, kA, CallOutcome::kFailure, 4);
  End(*b, kA, CallOutcome::kSuccess);
  End(*b, kA, CallOutcome::kFailure, 4);
  EXPECT_FALSE(StatsOf(*b, kA).ejected);  // 4 in a row since the success
  End(*b, kA, CallOutcome::kCancelled);
  EXPECT_FALSE(StatsOf(*b, kA).ejected);
  End(*b, kA, CallOutcome::kFailure);  // the 5th: the cancel did not count
  EXPECT_TRUE(StatsOf(*b, kA).ejected);
  EXPECT_EQ(StatsOf(*b, kA).failures, 9u);
}

TEST_F(EjectionTest, EndpointFailureEjectsAtOnceAndCountsAsFailure) {
  auto b = Make({kA, kB});
  End(*b, kA, CallOutcome::kEndpointFailure);
  EndpointStats a = StatsOf(*b, kA);
  EXPECT_TRUE(a.ejected);
  EXPECT_EQ(a.ejections, 1u);
  EXPECT_EQ(a.failures, 1u);
}

TEST_F(EjectionTest, ZeroThresholdDisablesOnlyClassifiedFailureEjection) {
  BalancerOptions o;
  o.ejection_consecutive_failures = 0;
  auto b = Make({kA, kB}, o);
  End(*b, kA, CallOutcome::kFailure, 100);
  EXPECT_FALSE(StatsOf(*b, kA).ejected);
  EXPECT_EQ(StatsOf(*b, kA).failures, 100u);
  End(*b, kA, CallOutcome::kEndpointFailure);
  EXPECT_TRUE(StatsOf(*b, kA).ejected);
}

TEST_F(EjectionTest, DurationsGrowByBaseUpToMaxAndRestartAfterMaxHealthy) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  o.ejection_max = absl::Seconds(3);
  auto b = Make({kA, kB}, o);
  // Each ejection starts as soon as the previous one ended.
  for (int n : {1, 2, 3, 4, 5}) {
    End(*b, kA, CallOutcome::kEndpointFailure);
    EXPECT_EQ(StatsOf(*b, kA).ejections, static_cast<uint64_t>(n));
    EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(std::min(n, 3))))
        << "ejection " << n;
  }
  // Healthy for less than ejection_max: the count goes on (capped at 3 s).
  clock_.Advance(absl::Seconds(3) - absl::Milliseconds(1));
  End(*b, kA, CallOutcome::kFailure, 5);
  EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(3)));
  // Healthy for ejection_max: the next ejection is the first again.
  clock_.Advance(absl::Seconds(3));
  End(*b, kA, CallOutcome::kFailure, 5);
  EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(1)));
  End(*b, kA, CallOutcome::kEndpointFailure);
  EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(2)));
  EXPECT_EQ(StatsOf(*b, kA).ejections, 8u);
}

TEST_F(EjectionTest, FailuresWhileEjectedDoNotExtendTheEjection) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  auto b = Make({kA, kB, kC, kD}, o);  // room for two
  // Calls in flight on A when it goes out all fail. (All calls are held, so
  // that pending counts stay even and A keeps getting picks.)
  std::vector<CallHandle> in_flight;
  for (int i = 0; i < 40; ++i) {
    absl::StatusOr<CallHandle> h = b->Pick();
    ASSERT_TRUE(h.ok());
    in_flight.push_back(*std::move(h));
  }
  uint64_t on_a = 0;
  for (CallHandle& h : in_flight) {
    if (h.endpoint().address == kA) {
      ++on_a;
      h.Complete(CallOutcome::kEndpointFailure);
    } else {
      h.Complete(CallOutcome::kCancelled);
    }
  }
  ASSERT_GE(on_a, 2u);
  EndpointStats a = StatsOf(*b, kA);
  EXPECT_EQ(a.ejections, 1u);
  EXPECT_EQ(a.failures, on_a);
  EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(1)));
}

TEST_F(EjectionTest, MaxShareLimitsEjectionsAndExpiryFreesRoom) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  o.ejection_max_share = 0.5;
  auto b = Make({kA, kB, kC, kD}, o);
  End(*b, kA, CallOutcome::kEndpointFailure);
  clock_.Advance(absl::Milliseconds(500));
  End(*b, kB, CallOutcome::kEndpointFailure);
  EXPECT_TRUE(StatsOf(*b, kA).ejected);
  EXPECT_TRUE(StatsOf(*b, kB).ejected);
  // A third would pass floor(0.5 × 4) = 2: C stays in, whatever it does.
  End(*b, kC, CallOutcome::kEndpointFailure);
  End(*b, kC, CallOutcome::kFailure, 5);
  EndpointStats c = StatsOf(*b, kC);
  EXPECT_FALSE(c.ejected);
  EXPECT_EQ(c.ejections, 0u);
  EXPECT_EQ(c.failures, 6u);
  // A's ejection ends: C's next failure, one past the threshold, ejects it.
  clock_.Advance(absl::Milliseconds(500));
  EXPECT_FALSE(StatsOf(*b, kA).ejected);
  End(*b, kC, CallOutcome::kFailure);
  EXPECT_TRUE(StatsOf(*b, kC).ejected);
  EXPECT_TRUE(StatsOf(*b, kB).ejected);
  EXPECT_FALSE(StatsOf(*b, kD).ejected);
}

TEST_F(EjectionTest, MinReadyKeepsAFloorOfUnejectedEndpoints) {
  // Linkerd's min_ready_endpoints: with 4 endpoints and a floor of 2, a
  // share of 1 still ejects only 2; interval rules keep the floor too.
  for (bool interval : {false, true}) {
    BalancerOptions o;
    o.ejection_max_share = 1.0;
    o.ejection_min_ready = 2;
    if (interval) o.interval_ejection.emplace();
    auto b = Make({kA, kB, kC, kD}, o);
    End(*b, kA, CallOutcome::kEndpointFailure);
    End(*b, kB, CallOutcome::kEndpointFailure);
    End(*b, kC, CallOutcome::kEndpointFailure, 3);
    EXPECT_TRUE(StatsOf(*b, kA).ejected) << interval;
    EXPECT_TRUE(StatsOf(*b, kB).ejected) << interval;
    EXPECT_FALSE(StatsOf(*b, kC).ejected) << interval;
    EXPECT_EQ(StatsOf(*b, kC).ejections, 0u) << interval;
  }
  // A floor at or above the set's size ejects none.
  BalancerOptions o;
  o.ejection_min_ready = 2;
  auto b = Make({kA, kB}, o);
  End(*b, kA, CallOutcome::kEndpointFailure);
  EXPECT_FALSE(StatsOf(*b, kA).ejected);
}

TEST_F(EjectionTest, OneOfTwoCanBeEjectedWhateverTheShareButNeverBoth) {
  for (double share : {0.0, 1.0}) {
    BalancerOptions o;
    o.ejection_max_share = share;
    auto b = Make({kA, kB}, o);
    End(*b, kA, CallOutcome::kEndpointFailure);
    End(*b, kB, CallOutcome::kEndpointFailure, 10);
    EXPECT_TRUE(StatsOf(*b, kA).ejected) << share;
    EXPECT_FALSE(StatsOf(*b, kB).ejected) << share;
    EXPECT_EQ(StatsOf(*b, kB).ejections, 0u) << share;
  }
}

TEST_F(EjectionTest, LoneEndpointIsNeverEjected) {
  auto b = Make({kA});
  End(*b, kA, CallOutcome::kEndpointFailure, 3);
  EXPECT_FALSE(StatsOf(*b, kA).ejected);
  EXPECT_EQ(StatsOf(*b, kA).ejections, 0u);
  EXPECT_TRUE(b->Pick().ok());
}

TEST_F(EjectionTest, EjectedFastFailingEndpointGetsNoPicksUntilItExpires) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  auto b = Make({kA, kB, kC}, o);
  // A answers INTERNAL at once, B and C succeed. The clock stands still
  // (RTTs of 0 leave every estimate where it is), so A stays ejected.
  auto serve = [&](int picks) {
    int to_a = 0;
    for (int i = 0; i < picks; ++i) {
      absl::StatusOr<CallHandle> h = b->Pick();
      EXPECT_TRUE(h.ok());
      if (!h.ok()) continue;
      bool a = h->endpoint().address == kA;
      to_a += a;
      h->Complete(a ? CallOutcome::kFailure : CallOutcome::kSuccess);
    }
    return to_a;
  };
  EXPECT_EQ(serve(1000), 5);  // its 5th failure in a row ejected it
  EXPECT_TRUE(StatsOf(*b, kA).ejected);
  EXPECT_EQ(serve(1000), 0);
  clock_.Advance(absl::Seconds(1));
  EXPECT_FALSE(StatsOf(*b, kA).ejected);
  // Back in: picked again until 5 more failures eject it for 2 s.
  EXPECT_EQ(serve(1000), 5);
  EXPECT_EQ(StatsOf(*b, kA).ejections, 2u);
  EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(2)));
}

TEST_F(EjectionTest, AttributeChangeKeepsEjectionStateAndCounters) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  auto b = Make({kA, kB}, o);
  End(*b, kA, CallOutcome::kEndpointFailure);
  End(*b, kB, CallOutcome::kFailure, 3);
  b->SetEndpoints(Eps({kA, kB}, 2));  // new records for both
  EndpointStats a = StatsOf(*b, kA);
  EXPECT_EQ(a.weight, 2u);
  EXPECT_TRUE(a.ejected);
  EXPECT_EQ(a.ejections, 1u);
  EXPECT_EQ(a.failures, 1u);
  // B's count carried over (3 + 2 = 5), but A holds the one place.
  End(*b, kB, CallOutcome::kFailure, 2);
  EXPECT_FALSE(StatsOf(*b, kB).ejected);
  EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(1)));
  // The times-ejected count carried over too: A's second ejection is 2 s.
  End(*b, kA, CallOutcome::kEndpointFailure);
  EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(2)));
}

TEST_F(EjectionTest, RemovalFreesRoomAndReturnStartsOver) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  auto b = Make({kA, kB, kC}, o);
  End(*b, kA, CallOutcome::kEndpointFailure);
  End(*b, kB, CallOutcome::kEndpointFailure);
  EXPECT_FALSE(StatsOf(*b, kB).ejected);  // floor(0.5 × 3) = 1
  b->SetEndpoints(Eps({kB, kC, kD}));
  End(*b, kB, CallOutcome::kEndpointFailure);
  EXPECT_TRUE(StatsOf(*b, kB).ejected);
  b->SetEndpoints(Eps({kA, kC, kD}));  // A comes back as a new endpoint
  EXPECT_FALSE(StatsOf(*b, kA).ejected);
  EXPECT_EQ(StatsOf(*b, kA).ejections, 0u);
}

TEST(EjectionConcurrencyTest, ConcurrentFailuresAndUpdatesNeverPassTheShare) {
  FakeClock clock;  // stopped: no ejection expires
  BalancerOptions o;
  o.ejection_max_share = 0.25;
  absl::StatusOr<std::unique_ptr<Balancer>> made = Balancer::Create(o, &clock);
  ASSERT_TRUE(made.ok());
  Balancer& b = **made;
  std::vector<std::string> addresses;
  for (int i = 1; i <= 8; ++i)
    addresses.push_back("10.0.3." + std::to_string(i) + ":80");
  b.SetEndpoints(Eps(addresses));
  std::atomic<bool> stop{false};
  std::atomic<int> over{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        absl::StatusOr<CallHandle> h = b.Pick();
        if (!h.ok()) continue;
        h->Complete(CallOutcome::kEndpointFailure);
        int ejected = 0;
        for (const auto& s : b.Stats()) ejected += s.ejected;
        if (ejected > 2) over.fetch_add(1);
      }
    });
  }
  // Weight changes replace every record (InheritFrom) under the failures.
  for (int i = 0; i < 2000; ++i) b.SetEndpoints(Eps(addresses, 1 + i % 2));
  stop.store(true);
  for (auto& t : threads) t.join();
  EXPECT_EQ(over.load(), 0);
  // Whatever the threads managed, more failures fill the two places.
  for (int i = 0; i < 100; ++i)
    b.Pick()->Complete(CallOutcome::kEndpointFailure);
  int ejected = 0;
  uint64_t ejections = 0;
  for (const auto& s : b.Stats()) {
    ejected += s.ejected;
    ejections += s.ejections;
  }
  EXPECT_EQ(ejected, 2);
  EXPECT_EQ(ejections, 2u);
}

}  // namespace
}  // namespace mesh

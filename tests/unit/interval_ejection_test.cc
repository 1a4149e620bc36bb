// Outlier ejection by interval statistics (BalancerOptions::interval_ejection,
// xDS outlier_detection): success rate, failure percentage, the ejected
// share, enforcement, and the backoff stepping down between looks.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "mesh/balancer.h"
#include "src/balance/balancer.h"
#include "tests/support/balancer_calls.h"
#include "tests/support/fake_clock.h"

namespace mesh {
namespace {

using ::mesh::internal::Balancer;
using ::mesh::internal::CallHandle;
using ::mesh::internal::CallOutcome;
using ::mesh::testing::FakeClock;
using ::mesh::testing::StatsOf;

const std::vector<std::string> kFive = {
    "10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80", "10.0.0.5:80"};
const std::string& kA = kFive[0];
const std::string& kB = kFive[1];
const std::string& kC = kFive[2];

// Interval ejection alone: consecutive failures never eject, so that any
// ejection seen comes from a look. Round robin, so that End() reaches every
// endpoint not ejected (P2C, on the fake clock, keeps choosing an endpoint
// idle for long: its estimate has decayed the most).
BalancerOptions Options(IntervalEjection ie, double max_share = 0.5) {
  BalancerOptions o;
  o.kind = BalancerKind::kRoundRobin;
  o.ejection_consecutive_failures = 0;
  o.ejection_base = absl::Seconds(10);
  o.ejection_max = absl::Seconds(100);
  o.ejection_max_share = max_share;
  o.interval_ejection = ie;
  return o;
}

IntervalEjection FailurePercentage(uint32_t threshold, uint32_t enforcement,
                                   uint32_t minimum_hosts,
                                   uint32_t request_volume) {
  IntervalEjection ie;
  ie.interval = absl::Seconds(10);
  ie.failure_percentage = IntervalEjection::FailurePercentage{
      threshold, enforcement, minimum_hosts, request_volume};
  return ie;
}

class IntervalEjectionTest : public ::testing::Test {
 protected:
  std::unique_ptr<Balancer> Make(const std::vector<std::string>& addresses,
                                 const BalancerOptions& options) {
    absl::StatusOr<std::unique_ptr<Balancer>> b =
        Balancer::Create(options, &clock_, &rng_ref_);
    EXPECT_TRUE(b.ok()) << b.status();
    std::vector<Endpoint> endpoints;
    for (const auto& a : addresses) {
      Endpoint e;
      e.address = a;
      endpoints.push_back(e);
    }
    (*b)->SetEndpoints(endpoints);
    return *std::move(b);
  }

  void End(Balancer& b, const std::string& address, CallOutcome outcome,
           int times = 1) {
    testing::EndOn(b, address, outcome, times);
  }

  // Each endpoint of `addresses` but A answers `n` calls well; A answers
  // `a_ok` well and `n - a_ok` badly.
  void Feed(Balancer& b, const std::vector<std::string>& addresses, int n,
            int a_ok) {
    for (const auto& address : addresses) {
      if (address == kA) {
        End(b, kA, CallOutcome::kSuccess, a_ok);
        End(b, kA, CallOutcome::kFailure, n - a_ok);
      } else {
        End(b, address, CallOutcome::kSuccess, n);
      }
    }
  }

  // Passes one interval and ends one call on `address`, which takes the
  // look.
  void Look(Balancer& b, const std::string& address = kB) {
    clock_.Advance(absl::Seconds(10));
    End(b, address, CallOutcome::kSuccess);
  }

  static int Ejected(const Balancer& b) {
    int n = 0;
    for (const auto& s : b.Stats()) n += s.ejected;
    return n;
  }

  bool EjectedForExactly(const Balancer& b, const std::string& address,
                         absl::Duration d) {
    return testing::EjectedForExactly(clock_, b, address, d);
  }

  FakeClock clock_;
  std::mt19937_64 rng_{7};
  absl::BitGenRef rng_ref_{rng_};
};

TEST_F(IntervalEjectionTest, FailurePercentageEjectsAtTheNextLookOnly) {
  auto b = Make(kFive, Options(FailurePercentage(50, 100, 5, 10)));
  Feed(*b, kFive, 10, /*a_ok=*/4);  // A: 60% failed
  EXPECT_EQ(Ejected(*b), 0);        // no look yet
  Look(*b);
  EXPECT_TRUE(StatsOf(*b, kA).ejected);
  EXPECT_EQ(StatsOf(*b, kA).ejections, 1u);
  EXPECT_EQ(StatsOf(*b, kA).ejection_reason, "failure_percentage");
  EXPECT_GT(StatsOf(*b, kA).ejection_left_ms, 0);
  EXPECT_EQ(Ejected(*b), 1);
}

TEST_F(IntervalEjectionTest, FailurePercentageBelowTheThresholdStays) {
  auto b = Make(kFive, Options(FailurePercentage(50, 100, 5, 10)));
  Feed(*b, kFive, 10, /*a_ok=*/6);  // A: 40% failed
  Look(*b);
  EXPECT_EQ(Ejected(*b), 0);
}

TEST_F(IntervalEjectionTest, FailurePercentageExactlyAtTheThresholdEjects) {
  // 1 failure of 5 is 20%: at the threshold (floating point would make it
  // 19.999999999999996).
  auto b = Make(kFive, Options(FailurePercentage(20, 100, 5, 5)));
  Feed(*b, kFive, 5, /*a_ok=*/4);
  Look(*b);
  EXPECT_TRUE(StatsOf(*b, kA).ejected);
  EXPECT_EQ(Ejected(*b), 1);
}

TEST_F(IntervalEjectionTest, MaxEjectedShareIsExactAtItsBoundary) {
  // Every one of 100 endpoints fails: 7% ejects 7, not 8 (0.07 × 100 is
  // 7.000000000000001 in floating point).
  std::vector<std::string> hundred;
  for (int i = 0; i < 100; ++i) {
    hundred.push_back(absl::StrCat("10.0.1.", i, ":80"));
  }
  auto b = Make(hundred, Options(FailurePercentage(50, 100, 5, 2), 0.07));
  for (const auto& address : hundred) {
    End(*b, address, CallOutcome::kFailure, 2);
  }
  Look(*b, hundred[99]);
  EXPECT_EQ(Ejected(*b), 7);
}

TEST_F(IntervalEjectionTest, TooFewEndpointsWithEnoughCallsEjectNone) {
  auto b = Make(kFive, Options(FailurePercentage(50, 100, 5, 10)));
  // Four endpoints reach the volume, one (E) does not: four < five hosts.
  Feed(*b, {kFive[0], kFive[1], kFive[2], kFive[3]}, 10, /*a_ok=*/0);
  End(*b, kFive[4], CallOutcome::kSuccess, 9);
  Look(*b);
  EXPECT_EQ(Ejected(*b), 0);
}

TEST_F(IntervalEjectionTest, CountsStartOverAtEachLook) {
  auto b = Make(kFive, Options(FailurePercentage(50, 100, 5, 10)));
  Feed(*b, kFive, 10, /*a_ok=*/10);  // all well in the first interval
  Look(*b);
  EXPECT_EQ(Ejected(*b), 0);
  // The second interval: A fails 6 of 10. Summed with the first (6 of 20)
  // it would stay; counted alone it is out.
  Feed(*b, kFive, 10, /*a_ok=*/4);
  Look(*b);
  EXPECT_TRUE(StatsOf(*b, kA).ejected);
}

TEST_F(IntervalEjectionTest, SuccessRateOutlierBelowMeanLessFactorStdevs) {
  // With five endpoints and one of them off, the one is exactly two
  // standard deviations below the mean, whatever its rate: a factor of 1.9
  // ejects it, 2.1 does not.
  for (uint32_t factor : {1900u, 2100u}) {
    SCOPED_TRACE(factor);
    IntervalEjection ie;
    ie.interval = absl::Seconds(10);
    ie.success_rate = IntervalEjection::SuccessRate{factor, 100, 5, 20};
    auto b = Make(kFive, Options(ie));
    Feed(*b, kFive, 20, /*a_ok=*/14);  // A 70%, the others 100%
    Look(*b);
    EXPECT_EQ(StatsOf(*b, kA).ejected, factor == 1900u);
    EXPECT_EQ(StatsOf(*b, kA).ejection_reason,
              factor == 1900u ? "success_rate" : "");
    EXPECT_EQ(Ejected(*b), factor == 1900u ? 1 : 0);
  }
}

TEST_F(IntervalEjectionTest, SuccessRateNeedsRequestVolume) {
  IntervalEjection ie;
  ie.interval = absl::Seconds(10);
  ie.success_rate = IntervalEjection::SuccessRate{1900, 100, 5, 100};
  auto b = Make(kFive, Options(ie));
  Feed(*b, kFive, 20, /*a_ok=*/0);  // 20 calls each: below 100
  Look(*b);
  EXPECT_EQ(Ejected(*b), 0);
}

TEST_F(IntervalEjectionTest, EjectedShareFollowsEnvoysRule) {
  // Three of five fail every call. Ejections go on while fewer than
  // share × 5 are out: 0.3 → 1.5 → two; 0 → none; 1 → all three.
  for (auto [share, expected] :
       std::vector<std::pair<double, int>>{{0.3, 2}, {0.0, 0}, {1.0, 3}}) {
    SCOPED_TRACE(share);
    auto b = Make(kFive, Options(FailurePercentage(50, 100, 5, 10), share));
    for (int i = 0; i < 5; ++i) {
      End(*b, kFive[i], i < 3 ? CallOutcome::kFailure : CallOutcome::kSuccess,
          10);
    }
    Look(*b, kFive[4]);
    EXPECT_EQ(Ejected(*b), expected);
  }
}

TEST_F(IntervalEjectionTest, ZeroEnforcementNeverEjects) {
  auto b = Make(kFive, Options(FailurePercentage(50, 0, 5, 10)));
  Feed(*b, kFive, 10, /*a_ok=*/0);
  Look(*b);
  EXPECT_EQ(Ejected(*b), 0);
}

TEST_F(IntervalEjectionTest, EjectionLastsBaseTimesTheTimesEjected) {
  IntervalEjection ie = FailurePercentage(50, 100, 2, 5);
  auto b = Make({kA, kB}, Options(ie, 1.0));
  End(*b, kA, CallOutcome::kFailure, 5);
  End(*b, kB, CallOutcome::kSuccess, 5);
  Look(*b);  // t = 10 s: A out for 10 s
  ASSERT_TRUE(StatsOf(*b, kA).ejected);
  Look(*b);  // t = 20 s: A back, without stepping down (out at the last look)
  ASSERT_FALSE(StatsOf(*b, kA).ejected);
  End(*b, kA, CallOutcome::kFailure, 5);
  End(*b, kB, CallOutcome::kSuccess, 5);
  Look(*b);  // t = 30 s: the second ejection lasts 2 × 10 s
  EXPECT_EQ(StatsOf(*b, kA).ejections, 2u);
  EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(20)));
}

TEST_F(IntervalEjectionTest, BackoffStepsDownOncePerLookSpentUnejected) {
  IntervalEjection ie = FailurePercentage(50, 100, 2, 5);
  auto b = Make({kA, kB}, Options(ie, 1.0));
  End(*b, kA, CallOutcome::kFailure, 5);
  End(*b, kB, CallOutcome::kSuccess, 5);
  Look(*b);  // t = 10: out until 20, times ejected 1
  Look(*b);  // t = 20: back
  End(*b, kA, CallOutcome::kFailure, 5);
  End(*b, kB, CallOutcome::kSuccess, 5);
  Look(*b);  // t = 30: out until 50, times ejected 2
  Look(*b);  // t = 40
  Look(*b);  // t = 50: back, no step (out at the last look)
  Look(*b);  // t = 60: times 1
  Look(*b);  // t = 70: times 0
  End(*b, kA, CallOutcome::kFailure, 5);
  End(*b, kB, CallOutcome::kSuccess, 5);
  Look(*b);  // t = 80: out for base × 1
  EXPECT_EQ(StatsOf(*b, kA).ejections, 3u);
  EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(10)));
}

TEST_F(IntervalEjectionTest, AnIdleStretchCountsEveryLookItMissed) {
  IntervalEjection ie = FailurePercentage(50, 100, 2, 5);
  auto b = Make({kA, kB}, Options(ie, 1.0));
  End(*b, kA, CallOutcome::kFailure, 5);
  End(*b, kB, CallOutcome::kSuccess, 5);
  Look(*b);  // t = 10: out until 20, times ejected 1
  Look(*b);  // t = 20: back
  End(*b, kA, CallOutcome::kFailure, 5);
  End(*b, kB, CallOutcome::kSuccess, 5);
  Look(*b);  // t = 30: out until 50, times ejected 2
  // No call until t = 95: the looks due at 40 .. 90 were missed; the one at
  // 50 would have un-ejected A, those at 60 .. 90 stepped down (to 0).
  clock_.Advance(absl::Seconds(55));
  Look(*b);  // t = 95
  End(*b, kA, CallOutcome::kFailure, 5);
  End(*b, kB, CallOutcome::kSuccess, 5);
  Look(*b);  // t = 105: out for base × 1
  EXPECT_EQ(StatsOf(*b, kA).ejections, 3u);
  EXPECT_TRUE(EjectedForExactly(*b, kA, absl::Seconds(10)));
}

TEST_F(IntervalEjectionTest, ConsecutiveFailuresStillEject) {
  BalancerOptions o = Options(FailurePercentage(50, 100, 5, 1000));
  o.ejection_consecutive_failures = 3;
  auto b = Make(kFive, o);
  End(*b, kC, CallOutcome::kFailure, 3);
  EXPECT_TRUE(StatsOf(*b, kC).ejected);
}

TEST_F(IntervalEjectionTest, InvalidOptionsAreRefused) {
  IntervalEjection zero;
  zero.interval = absl::ZeroDuration();
  EXPECT_EQ(Balancer::Create(Options(zero)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Balancer::Create(Options(FailurePercentage(101, 100, 5, 10)))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  IntervalEjection rate;
  rate.success_rate = IntervalEjection::SuccessRate{1900, 101, 5, 10};
  EXPECT_EQ(Balancer::Create(Options(rate)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mesh

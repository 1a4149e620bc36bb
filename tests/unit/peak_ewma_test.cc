#include "src/balance/peak_ewma.h"

#include <cmath>

#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kT0 = 5 * kSec;

TEST(PeakEwmaTest, StartsAtDefaultRtt) {
  PeakEwma ewma(30 * kMs, 10 * kSec, kT0);
  EXPECT_DOUBLE_EQ(ewma.Estimate(kT0), 30.0 * kMs);
}

TEST(PeakEwmaTest, SampleAboveEstimateReplacesItAtOnce) {
  PeakEwma ewma(30 * kMs, 10 * kSec, kT0);
  ewma.Observe(100 * kMs, kT0 + 1);
  EXPECT_DOUBLE_EQ(ewma.Estimate(kT0 + 1), 100.0 * kMs);
}

TEST(PeakEwmaTest, SampleBelowEstimateMovesTowardItByElapsedTime) {
  PeakEwma ewma(30 * kMs, 10 * kSec, kT0);
  ewma.Observe(100 * kMs, kT0);
  ewma.Observe(10 * kMs, kT0 + 1 * kSec);
  double w = std::exp(-0.1);  // Δt = 1 s, decay = 10 s
  EXPECT_NEAR(ewma.Estimate(kT0 + 1 * kSec),
              100.0 * kMs * w + 10.0 * kMs * (1 - w), 1.0);
}

TEST(PeakEwmaTest, LowSampleWithNoElapsedTimeLeavesEstimate) {
  PeakEwma ewma(30 * kMs, 10 * kSec, kT0);
  ewma.Observe(1 * kMs, kT0);
  EXPECT_DOUBLE_EQ(ewma.Estimate(kT0), 30.0 * kMs);
}

TEST(PeakEwmaTest, DecaysTowardZeroWithoutSamples) {
  PeakEwma ewma(30 * kMs, 10 * kSec, kT0);
  ewma.Observe(200 * kMs, kT0);
  EXPECT_NEAR(ewma.Estimate(kT0 + 10 * kSec), 200.0 * kMs * std::exp(-1.0),
              1.0);
  EXPECT_LT(ewma.Estimate(kT0 + 100 * kSec), 0.01 * kMs);
  // Time going backwards (a stale reading) never inflates the estimate.
  EXPECT_DOUBLE_EQ(ewma.Estimate(kT0 - kSec), 200.0 * kMs);
}

TEST(PeakEwmaTest, FailureSamplesOnlyRaiseTheEstimate) {
  PeakEwma ewma(30 * kMs, 10 * kSec, kT0);
  ewma.ObservePeak(1 * kMs, kT0 + 5 * kSec);  // a fast failure: ignored
  EXPECT_DOUBLE_EQ(ewma.Estimate(kT0), 30.0 * kMs);
  ewma.ObservePeak(80 * kMs, kT0);  // a slow failure: the new peak
  EXPECT_DOUBLE_EQ(ewma.Estimate(kT0), 80.0 * kMs);
  // Between samples the estimate still decays with time, as for any endpoint.
  EXPECT_NEAR(ewma.Estimate(kT0 + 10 * kSec), 80.0 * kMs * std::exp(-1.0), 1.0);
}

TEST(PeakEwmaTest, ShorterDecayForgetsFaster) {
  PeakEwma fast(30 * kMs, 1 * kSec, kT0);
  PeakEwma slow(30 * kMs, 10 * kSec, kT0);
  fast.Observe(100 * kMs, kT0);
  slow.Observe(100 * kMs, kT0);
  EXPECT_LT(fast.Estimate(kT0 + 2 * kSec), slow.Estimate(kT0 + 2 * kSec));
}

TEST(PeakEwmaTest, CopyFromCarriesHistory) {
  PeakEwma a(30 * kMs, 10 * kSec, kT0);
  PeakEwma b(30 * kMs, 10 * kSec, kT0);
  a.Observe(90 * kMs, kT0);
  b.CopyFrom(a);
  EXPECT_DOUBLE_EQ(b.Estimate(kT0), 90.0 * kMs);
}

TEST(PeakEwmaTest, ExpNearZeroAgreesWithStdExpTo12Digits) {
  // Across the polynomial's range, its edges and past them (std::exp).
  for (int i = -4096; i <= 4096; ++i) {
    const double x = i / (4096.0 * 16);  // [-1/16, 1/16]
    const double want = std::exp(x);
    EXPECT_LE(std::abs(ExpNearZero(x) - want) / want, 1.5e-12) << x;
  }
  for (double x : {-600.0, -3.0, -1.0 / 32, 1.0 / 32, 0.5, 3.0, 600.0}) {
    const double want = std::exp(x);
    EXPECT_LE(std::abs(ExpNearZero(x) - want) / want, 1.5e-12) << x;
  }
  // What the balancer compares: the decay weight of the time between calls.
  EXPECT_DOUBLE_EQ(DecayWeight(1'000'000, 10e9), std::exp(-1e-4));
  EXPECT_DOUBLE_EQ(DecayWeight(5'000'000'000, 10e9), std::exp(-0.5));
}

}  // namespace
}  // namespace mesh::internal

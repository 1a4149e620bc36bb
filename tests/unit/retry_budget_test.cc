// The retry budget ledger: reserve, deposits, ratio, expiry, validity.
#include "src/route/retry_budget.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_clock.h"

namespace mesh::internal {
namespace {

using ::mesh::testing::FakeClock;

RetryBudget Budget(double ratio, uint32_t min_per_second, absl::Duration ttl) {
  RetryBudget b;
  b.retry_ratio = ratio;
  b.min_retries_per_second = min_per_second;
  b.ttl = ttl;
  return b;
}

int WithdrawAll(RetryBudgetLedger& ledger, int cap = 100000) {
  int n = 0;
  while (n < cap && ledger.TryWithdraw()) ++n;
  return n;
}

TEST(RetryBudgetTest, ReserveIsMinPerSecondTimesTtl) {
  FakeClock clock;
  RetryBudgetLedger ledger(Budget(0.2, 10, absl::Seconds(10)), &clock);
  EXPECT_EQ(ledger.Balance(), 100);
  EXPECT_EQ(WithdrawAll(ledger), 100);
  EXPECT_FALSE(ledger.TryWithdraw());
}

TEST(RetryBudgetTest, DepositsAddRatioRetriesEach) {
  FakeClock clock;
  RetryBudgetLedger ledger(Budget(0.2, 0, absl::Seconds(10)), &clock);
  EXPECT_FALSE(ledger.TryWithdraw());  // no reserve, no deposits
  for (int i = 0; i < 50; ++i) ledger.Deposit();
  EXPECT_EQ(WithdrawAll(ledger), 10);  // 50 requests × 0.2
  for (int i = 0; i < 4; ++i) ledger.Deposit();
  EXPECT_FALSE(ledger.TryWithdraw());  // 4 × 0.2 < 1
  ledger.Deposit();
  EXPECT_TRUE(ledger.TryWithdraw());
}

TEST(RetryBudgetTest, TotalRetriesUnderOutageAreBounded) {
  // Every request fails and wants a retry: over one ttl window the retries
  // granted are at most ratio × requests + reserve.
  FakeClock clock;
  RetryBudgetLedger ledger(Budget(0.25, 5, absl::Seconds(2)), &clock);
  int granted = 0;
  const int kRequests = 400;
  for (int i = 0; i < kRequests; ++i) {
    ledger.Deposit();
    granted += ledger.TryWithdraw();
    clock.Advance(absl::Milliseconds(1));  // 400 ms: one window
  }
  EXPECT_LE(granted, kRequests * 0.25 + 5 * 2);
  EXPECT_GE(granted, kRequests * 0.25);  // and the budget is really spent
}

TEST(RetryBudgetTest, DepositsAndWithdrawalsExpireAfterTtl) {
  FakeClock clock;
  RetryBudgetLedger ledger(Budget(1.0, 1, absl::Seconds(1)), &clock);
  for (int i = 0; i < 20; ++i) ledger.Deposit();
  EXPECT_EQ(ledger.Balance(), 21);
  clock.Advance(absl::Milliseconds(1100));  // every slice is older than ttl
  EXPECT_EQ(ledger.Balance(), 1);           // only the reserve remains
  EXPECT_EQ(WithdrawAll(ledger), 1);
  clock.Advance(absl::Milliseconds(1100));  // the reserve's use expires too
  EXPECT_EQ(ledger.Balance(), 1);
}

TEST(RetryBudgetTest, RatioZeroLeavesOnlyTheReserve) {
  FakeClock clock;
  RetryBudgetLedger ledger(Budget(0, 2, absl::Seconds(1)), &clock);
  for (int i = 0; i < 1000; ++i) ledger.Deposit();
  EXPECT_EQ(WithdrawAll(ledger), 2);
}

// The extremes of every field: no value may overflow the arithmetic (a
// ratio of 1e-20 once turned 300 requests into 34,795 retries).
TEST(RetryBudgetTest, TinyRatiosLeaveOnlyTheReserve) {
  for (double ratio : {1e-20, 1e-300, 1e-9, 4.9e-324}) {
    FakeClock clock;
    RetryBudgetLedger ledger(Budget(ratio, 1, absl::Seconds(10)), &clock);
    for (int i = 0; i < 300; ++i) ledger.Deposit();
    EXPECT_EQ(ledger.Balance(), 10) << ratio;
    EXPECT_EQ(WithdrawAll(ledger), 10) << ratio;
    EXPECT_EQ(ledger.Balance(), 0) << ratio;
  }
}

TEST(RetryBudgetTest, RatioOneBillionthGivesNoRetryForAThousandRequests) {
  FakeClock clock;
  RetryBudgetLedger ledger(Budget(1e-9, 0, absl::Seconds(1)), &clock);
  for (int i = 0; i < 1000; ++i) ledger.Deposit();
  EXPECT_FALSE(ledger.TryWithdraw());
  EXPECT_EQ(ledger.Balance(), 0);
}

TEST(RetryBudgetTest, RatioOneThousandPaysAThousandRetriesPerRequest) {
  FakeClock clock;
  RetryBudgetLedger ledger(Budget(1000, 0, absl::Seconds(1)), &clock);
  ledger.Deposit();
  ledger.Deposit();
  EXPECT_EQ(ledger.Balance(), 2000);
  EXPECT_EQ(WithdrawAll(ledger), 2000);
  EXPECT_FALSE(ledger.TryWithdraw());
}

TEST(RetryBudgetTest, NonFiniteRatiosAreClampedNotTrusted) {
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  const double kInf = std::numeric_limits<double>::infinity();
  struct Case {
    double ratio;
    int64_t expected;  // after 3 deposits, reserve 5
  };
  for (Case c : {Case{kNan, 5}, Case{-kInf, 5}, Case{-1, 5}, Case{kInf, 3005},
                 Case{1e300, 3005}}) {
    FakeClock clock;
    RetryBudgetLedger ledger(Budget(c.ratio, 5, absl::Seconds(1)), &clock);
    for (int i = 0; i < 3; ++i) ledger.Deposit();
    EXPECT_EQ(ledger.Balance(), c.expected) << c.ratio;
    EXPECT_EQ(WithdrawAll(ledger, 10000), c.expected) << c.ratio;
  }
}

TEST(RetryBudgetTest, AHugeReserveNeitherOverflowsNorGoesNegative) {
  FakeClock clock;
  RetryBudgetLedger ledger(
      Budget(1000, std::numeric_limits<uint32_t>::max(), absl::Seconds(60)),
      &clock);
  const int64_t kReserve = int64_t{4294967295} * 60;
  EXPECT_EQ(ledger.Balance(), kReserve);
  for (int i = 0; i < 1000; ++i) ledger.Deposit();
  EXPECT_EQ(ledger.Balance(), kReserve + 1000 * 1000);
  EXPECT_EQ(WithdrawAll(ledger, 5000), 5000);
  EXPECT_EQ(ledger.Balance(), kReserve + 1000 * 1000 - 5000);
}

TEST(RetryBudgetTest, ZeroAndHugeTtlAreClampedToTheValidRange) {
  {
    // Zero (and negative) ttl: one second, not a division by zero.
    FakeClock clock;
    RetryBudgetLedger ledger(Budget(0, 3, absl::ZeroDuration()), &clock);
    EXPECT_EQ(WithdrawAll(ledger), 3);
    clock.Advance(absl::Milliseconds(1100));
    EXPECT_EQ(WithdrawAll(ledger), 3);  // the window moved on
    RetryBudgetLedger negative(Budget(0, 3, absl::Seconds(-5)), &clock);
    EXPECT_EQ(negative.Balance(), 3);
  }
  for (absl::Duration ttl : {absl::Hours(1e6), absl::InfiniteDuration()}) {
    // Huge ttl: sixty seconds, so the reserve is 60 × min and spent
    // retries come back after a minute.
    FakeClock clock;
    RetryBudgetLedger ledger(Budget(0, 2, ttl), &clock);
    EXPECT_EQ(WithdrawAll(ledger), 120);
    clock.Advance(absl::Seconds(59));
    EXPECT_FALSE(ledger.TryWithdraw());
    clock.Advance(absl::Seconds(7));
    EXPECT_EQ(ledger.Balance(), 120);
  }
}

TEST(RetryBudgetTest, TheReserveFollowsAFractionalTtl) {
  FakeClock clock;
  RetryBudgetLedger ledger(Budget(0, 2, absl::Milliseconds(1500)), &clock);
  EXPECT_EQ(ledger.Balance(), 3);  // 2/s × 1.5 s
}

TEST(RetryBudgetTest, ValidityRulesNameTheField) {
  EXPECT_TRUE(ValidateRetryBudget(Budget(0.2, 10, absl::Seconds(10))).ok());
  EXPECT_TRUE(ValidateRetryBudget(Budget(1000, 0, absl::Seconds(1))).ok());
  EXPECT_THAT(
      std::string(
          ValidateRetryBudget(Budget(-0.1, 10, absl::Seconds(10))).message()),
      ::testing::HasSubstr("retry_ratio"));
  EXPECT_THAT(
      std::string(
          ValidateRetryBudget(Budget(1001, 10, absl::Seconds(10))).message()),
      ::testing::HasSubstr("retry_ratio"));
  for (double bad : {std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
    EXPECT_THAT(
        std::string(
            ValidateRetryBudget(Budget(bad, 10, absl::Seconds(10))).message()),
        ::testing::HasSubstr("retry_ratio"));
  }
  EXPECT_TRUE(ValidateRetryBudget(Budget(1e-20, 10, absl::Seconds(10))).ok());
  EXPECT_THAT(
      std::string(ValidateRetryBudget(Budget(0.2, 10, absl::Milliseconds(999)))
                      .message()),
      ::testing::HasSubstr("ttl"));
  EXPECT_THAT(
      std::string(
          ValidateRetryBudget(Budget(0.2, 10, absl::Seconds(61))).message()),
      ::testing::HasSubstr("ttl"));
}

}  // namespace
}  // namespace mesh::internal

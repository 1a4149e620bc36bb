// The retry budget ledger: reserve, deposits, ratio, expiry, validity.
#include "src/route/retry_budget.h"

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

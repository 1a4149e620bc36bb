#include "src/route/retry_budget.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace mesh::internal {

absl::Status ValidateRetryBudget(const RetryBudget& budget) {
  if (!(budget.retry_ratio >= 0 && budget.retry_ratio <= 1000)) {
    return absl::InvalidArgumentError(absl::StrCat("retry budget: retry_ratio ",
                                                   budget.retry_ratio,
                                                   " is outside [0, 1000]"));
  }
  if (budget.ttl < absl::Seconds(1) || budget.ttl > absl::Seconds(60)) {
    return absl::InvalidArgumentError(
        absl::StrCat("retry budget: ttl ", absl::FormatDuration(budget.ttl),
                     " is outside [1s, 60s]"));
  }
  return absl::OkStatus();
}

namespace {

int64_t WithdrawalUnits(double ratio, int64_t scale) {
  // A ratio of 0 allows no retry from deposits (a withdrawal would cost a
  // billion requests' worth): only the reserve pays.
  if (ratio <= 0) return scale * 1'000'000'000;
  return static_cast<int64_t>(std::llround(static_cast<double>(scale) / ratio));
}

}  // namespace

RetryBudgetLedger::RetryBudgetLedger(const RetryBudget& budget,
                                     const Clock* clock)
    : clock_(clock),
      slice_ns_(absl::ToInt64Nanoseconds(budget.ttl) / kSlices),
      withdrawal_(WithdrawalUnits(budget.retry_ratio, kScale)),
      // The reserve is counted in retries, so in withdrawal units.
      reserve_(static_cast<int64_t>(budget.min_retries_per_second) *
               absl::ToInt64Seconds(budget.ttl)),
      current_start_ns_(clock->NowNanos()) {}

void RetryBudgetLedger::Advance() {
  int64_t now = clock_->NowNanos();
  int64_t steps = (now - current_start_ns_) / slice_ns_;
  if (steps <= 0) return;
  if (steps >= kSlices) {
    slices_.fill(0);
  } else {
    for (int64_t i = 1; i <= steps; ++i) {
      slices_[(current_slice_ + i) % kSlices] = 0;
    }
  }
  current_slice_ = (current_slice_ + steps) % kSlices;
  current_start_ns_ += steps * slice_ns_;
}

int64_t RetryBudgetLedger::Tokens() {
  int64_t sum = 0;
  for (int64_t s : slices_) sum += s;
  return sum;
}

void RetryBudgetLedger::Deposit() {
  PlainMutexLock lock(&mu_);
  Advance();
  slices_[current_slice_] += kScale;
}

bool RetryBudgetLedger::TryWithdraw() {
  PlainMutexLock lock(&mu_);
  Advance();
  // Deposits pay first; when they cannot, a retry comes out of the reserve,
  // counted as a withdrawal in the window so that it too expires with ttl.
  // In retries (doubles: the reserve times a withdrawal can exceed 64 bits).
  double available = static_cast<double>(Tokens()) / withdrawal_ + reserve_;
  if (available < 1) return false;
  slices_[current_slice_] -= withdrawal_;
  return true;
}

int64_t RetryBudgetLedger::Balance() {
  PlainMutexLock lock(&mu_);
  Advance();
  return static_cast<int64_t>(
      std::floor(static_cast<double>(Tokens()) / withdrawal_ + reserve_));
}

}  // namespace mesh::internal

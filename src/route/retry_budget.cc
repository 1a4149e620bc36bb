#include "src/route/retry_budget.h"

#include <algorithm>
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

double ClampRatio(double ratio) {
  if (!(ratio > 0)) return 0;  // NaN and negatives: deposits never pay
  return std::min(ratio, 1000.0);
}

absl::Duration ClampTtl(absl::Duration ttl) {
  return std::clamp(ttl, absl::Seconds(1), absl::Seconds(60));
}

}  // namespace

RetryBudgetLedger::RetryBudgetLedger(const RetryBudget& budget,
                                     const Clock* clock)
    : clock_(clock),
      slice_ns_(absl::ToInt64Nanoseconds(ClampTtl(budget.ttl)) / kSlices),
      ratio_(ClampRatio(budget.retry_ratio)),
      reserve_(static_cast<double>(budget.min_retries_per_second) *
               absl::ToDoubleSeconds(ClampTtl(budget.ttl))),
      current_start_ns_(clock->NowNanos()) {}

void RetryBudgetLedger::Advance() {
  int64_t now = clock_->NowNanos();
  int64_t steps = (now - current_start_ns_) / slice_ns_;
  if (steps <= 0) return;
  if (steps >= kSlices) {
    slices_.fill(Slice{});
  } else {
    for (int64_t i = 1; i <= steps; ++i) {
      slices_[(current_slice_ + i) % kSlices] = Slice{};
    }
  }
  current_slice_ = (current_slice_ + steps) % kSlices;
  current_start_ns_ += steps * slice_ns_;
}

double RetryBudgetLedger::Available() {
  int64_t requests = 0;
  int64_t retries = 0;
  for (const Slice& s : slices_) {
    requests += s.requests;
    retries += s.retries;
  }
  // Deposits pay first, the reserve when they cannot; a retry counts in the
  // window either way, so that it too expires with ttl.
  return ratio_ * static_cast<double>(requests) + reserve_ -
         static_cast<double>(retries);
}

void RetryBudgetLedger::Deposit() {
  MutexLock lock(&mu_);
  Advance();
  ++slices_[current_slice_].requests;
}

bool RetryBudgetLedger::TryWithdraw() {
  MutexLock lock(&mu_);
  Advance();
  if (Available() < 1) return false;
  ++slices_[current_slice_].retries;
  return true;
}

int64_t RetryBudgetLedger::Balance() {
  MutexLock lock(&mu_);
  Advance();
  // Clamped: a double past int64's range does not convert.
  double available = std::clamp(std::floor(Available()), 0.0, 9e18);
  return static_cast<int64_t>(available);
}

}  // namespace mesh::internal

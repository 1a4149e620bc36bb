// RetryBudget: how many retries a destination may make, after Finagle's
// RetryBudget and Linkerd's (which follows it).
//
// Every original request deposits one token; a retry withdraws
// 1/retry_ratio tokens; deposits expire after `ttl` (a windowed sum in ten
// slices), and a reserve of min_retries_per_second × ttl retries is always
// there. So over any ttl window retries are at most
//   retry_ratio × requests + min_retries_per_second × ttl,
// and a full outage cannot multiply the load by more than that.
//
// The window counts requests and retries apart (whole numbers, one each)
// and compares retry_ratio × requests + reserve − retries in doubles, so no
// ratio in [0, 1000] — 1e-20 included — and no reserve can overflow: a tiny
// ratio simply leaves the reserve alone to pay.
//
//   RetryBudgetLedger budget(config.retry_budget.value(), clock);
//   budget.Deposit();                        // each original request
//   if (budget.TryWithdraw()) { retry... }   // each retry
//
// Thread-safe.
#ifndef MESH_SRC_ROUTE_RETRY_BUDGET_H_
#define MESH_SRC_ROUTE_RETRY_BUDGET_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "mesh/service_config.h"
#include "src/base/clock.h"
#include "src/base/mutex.h"

namespace mesh::internal {

// OK, or INVALID_ARGUMENT naming the field: retry_ratio must be in
// [0, 1000], ttl in [1 s, 60 s] (Linkerd's validity rules).
absl::Status ValidateRetryBudget(const RetryBudget& budget);

class RetryBudgetLedger {
 public:
  // `budget` should pass ValidateRetryBudget; values outside its ranges are
  // clamped (NaN ratio as 0, ratio to [0, 1000], ttl to [1 s, 60 s]) rather
  // than trusted. `clock` must outlive this.
  RetryBudgetLedger(const RetryBudget& budget, const Clock* clock);

  // Records an original request.
  void Deposit();
  // Takes one retry's worth of tokens if the budget has them.
  bool TryWithdraw();
  // Retries available now (rounded down).
  int64_t Balance();

 private:
  static constexpr int kSlices = 10;

  struct Slice {
    int64_t requests = 0;
    int64_t retries = 0;
  };

  // Moves the window to now, dropping slices older than ttl.
  void Advance() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Retries the window allows now, before rounding (may be negative).
  double Available() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Clock* const clock_;
  const int64_t slice_ns_;
  const double ratio_;    // clamped to [0, 1000]
  const double reserve_;  // retries always available per window
  Mutex mu_;              // every call deposits: not an absl::Mutex (mutex.h)
  std::array<Slice, kSlices> slices_ ABSL_GUARDED_BY(mu_) = {};
  int64_t current_slice_ ABSL_GUARDED_BY(mu_) = 0;  // index of the slice
                                                    // holding "now"
  int64_t current_start_ns_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_ROUTE_RETRY_BUDGET_H_

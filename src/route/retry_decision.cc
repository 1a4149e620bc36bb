#include "src/route/retry_decision.h"

namespace mesh::internal {

bool RetryWanted(const AttemptEnd& end) {
  if (!end.replayable) return false;
  const bool gave_up = end.code == absl::StatusCode::kDeadlineExceeded ||
                       end.code == absl::StatusCode::kCancelled;
  if (end.route_retryable && end.classified_failure && !gave_up) return true;
  return end.never_sent && end.retry_connect_failures;
}

RetryVerdict DecideRetry(uint32_t attempts, uint32_t max_attempts,
                         absl::Time retry_at, absl::Time deadline,
                         absl::FunctionRef<bool()> withdraw) {
  if (max_attempts != 0 && attempts >= max_attempts) {
    return RetryVerdict::kMaxAttempts;
  }
  if (retry_at >= deadline) return RetryVerdict::kNoTime;
  if (!withdraw()) return RetryVerdict::kBudget;
  return RetryVerdict::kRetry;
}

}  // namespace mesh::internal

#include "src/route/retry_decision.h"

namespace mesh::internal {

namespace {

bool ConnectRetryWanted(const AttemptEnd& end) {
  return end.never_sent && end.retry_connect_failures &&
         end.connect_retries < kMaxConnectFailureRetries;
}

}  // namespace

bool RetryWanted(const AttemptEnd& end) {
  if (!end.replayable) return false;
  if (end.route_retryable && end.per_try_timed_out) return true;
  if (end.route_retryable && end.retry_on != nullptr &&
      !end.retry_on->empty()) {
    for (absl::StatusCode code : *end.retry_on) {
      if (code == end.code) return true;
    }
    return ConnectRetryWanted(end);
  }
  if (end.route_retryable && end.retry_on_http_status != nullptr &&
      !end.retry_on_http_status->empty()) {
    // A request that never reached a server is safe to send again; an
    // answer is retried by its HTTP status. Without a status (0) the attempt
    // is not retried: a gRPC answer sent as trailers only cannot be told
    // from a broken connection.
    if (end.never_sent) return true;
    for (const HttpStatusRange& range : *end.retry_on_http_status) {
      const uint32_t status = static_cast<uint32_t>(end.http_status);
      if (status >= range.min && status <= range.max) return true;
    }
    return false;
  }
  const bool gave_up = end.code == absl::StatusCode::kDeadlineExceeded ||
                       end.code == absl::StatusCode::kCancelled;
  if (end.route_retryable && end.classified_failure && !gave_up) return true;
  return ConnectRetryWanted(end);
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

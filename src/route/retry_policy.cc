#include "src/route/retry_policy.h"

#include <algorithm>

#include "absl/random/distributions.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace mesh::internal {

absl::Status ValidateRetryPolicy(const RetryPolicy& policy) {
  if (policy.backoff_base < absl::ZeroDuration() ||
      policy.backoff_base == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "retry_policy.backoff_base ", absl::FormatDuration(policy.backoff_base),
        " must be finite and >= 0"));
  }
  if (policy.backoff_max < absl::ZeroDuration() ||
      policy.backoff_max == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "retry_policy.backoff_max ", absl::FormatDuration(policy.backoff_max),
        " must be finite and >= 0"));
  }
  if (policy.backoff_max != absl::ZeroDuration() &&
      policy.backoff_max < policy.backoff_base) {
    return absl::InvalidArgumentError(absl::StrCat(
        "retry_policy.backoff_max ", absl::FormatDuration(policy.backoff_max),
        " is below backoff_base ", absl::FormatDuration(policy.backoff_base)));
  }
  if (policy.per_try_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("retry_policy.per_try_timeout ",
                     absl::FormatDuration(policy.per_try_timeout),
                     " must be > 0 (infinite: none)"));
  }
  for (const HttpStatusRange& range : policy.retry_on_http_status) {
    if (range.min < 100 || range.max > 999 || range.min > range.max) {
      return absl::InvalidArgumentError(
          absl::StrCat("retry_policy.retry_on_http_status range ", range.min,
                       "-", range.max, " is not within 100..999"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateHedgePolicy(const HedgePolicy& policy, bool retryable) {
  if (policy.max_attempts < 2 || policy.max_attempts > kMaxHedgedAttempts) {
    return absl::InvalidArgumentError(
        absl::StrCat("hedge_policy.max_attempts ", policy.max_attempts,
                     " is not within 2..", kMaxHedgedAttempts));
  }
  if (policy.delay < absl::ZeroDuration() ||
      policy.delay == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("hedge_policy.delay ", absl::FormatDuration(policy.delay),
                     " must be finite and >= 0"));
  }
  for (absl::StatusCode code : policy.non_fatal_codes) {
    const int n = static_cast<int>(code);
    if (code == absl::StatusCode::kOk || n < 0 || n > 16) {
      return absl::InvalidArgumentError(
          absl::StrCat("hedge_policy.non_fatal_codes: ", n,
                       " is not a gRPC status code other than OK (1..16)"));
    }
  }
  if (retryable) {
    return absl::InvalidArgumentError(
        "hedge_policy on a retryable route: a route hedges or retries, not "
        "both (gRFC A6)");
  }
  return absl::OkStatus();
}

Pushback ReadPushback(const Metadata& trailers) {
  Pushback out;
  for (const auto& [key, value] : trailers) {
    if (key != "grpc-retry-pushback-ms") continue;
    out.present = true;
    int64_t ms = 0;
    // A6: a value that is not a non-negative integer stops the attempts.
    if (absl::SimpleAtoi(value, &ms) && ms >= 0) {
      out.wait = absl::Milliseconds(ms);
    }
    return out;
  }
  return out;
}

absl::Duration RetryBackoff(const RetryPolicy& policy, int retry,
                            absl::BitGenRef gen) {
  if (policy.backoff_base <= absl::ZeroDuration() || retry < 1) {
    return absl::ZeroDuration();
  }
  absl::Duration cap = policy.backoff_max > absl::ZeroDuration()
                           ? policy.backoff_max
                           : policy.backoff_base * 10;
  absl::Duration ceiling = policy.backoff_base;
  for (int i = 1; i < retry && ceiling < cap; ++i) ceiling *= 2;
  ceiling = std::min(ceiling, cap);
  int64_t ceiling_ns = absl::ToInt64Nanoseconds(ceiling);
  return absl::Nanoseconds(
      absl::Uniform<int64_t>(absl::IntervalClosed, gen, 0, ceiling_ns));
}

}  // namespace mesh::internal

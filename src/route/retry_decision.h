// Whether a finished attempt is retried: the decision of the data path, as
// pure functions over what the attempt ended with and what the call has
// left (attempts, time, budget).
//
//   if (RetryWanted({...})) {
//     switch (DecideRetry(attempts, policy.max_attempts, now + wait,
//                         deadline, [&] { return budget.TryWithdraw(); })) {
//       case RetryVerdict::kRetry: ...
//
// Pure functions: thread-safe (the withdrawal is the caller's).
#ifndef MESH_SRC_ROUTE_RETRY_DECISION_H_
#define MESH_SRC_ROUTE_RETRY_DECISION_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "mesh/service_config.h"

namespace mesh::internal {

// A call's retries of requests that never reached a server, when the route
// itself would not retry them (ChannelOptions::retry_connect_failures
// alone): enough to step past a few dead endpoints, never a storm of
// attempts against a lone one that cannot be reached.
inline constexpr uint32_t kMaxConnectFailureRetries = 3;

// How an attempt ended, as far as retrying is concerned.
struct AttemptEnd {
  absl::StatusCode code = absl::StatusCode::kOk;
  bool classified_failure = false;      // by the route's response classes
  bool never_sent = false;              // the request never reached a server
  bool route_retryable = false;         // the route allows retries
  bool replayable = false;              // the request body was kept for replay
  bool retry_connect_failures = false;  // ChannelOptions: retry never_sent
  // The call's retries so far after attempts that were never sent.
  uint32_t connect_retries = 0;
  // RetryPolicy::retry_on of the route; null or empty: classified failures.
  const std::vector<absl::StatusCode>* retry_on = nullptr;
  // RetryPolicy::retry_on_http_status of the route, and the attempt's HTTP
  // status (0: no response).
  const std::vector<HttpStatusRange>* retry_on_http_status = nullptr;
  int http_status = 0;
  // The attempt passed the route's per-try timeout (not the call's
  // deadline).
  bool per_try_timed_out = false;
};

// A retry is wanted for an attempt that passed its per-try timeout on a
// retryable route; for a classified failure on a retryable route — never a
// timeout or a cancellation: the deadline covers every attempt — or, with
// `retry_on`, for an attempt that ended with one of its codes (the server's
// CANCELLED and DEADLINE_EXCEEDED included), or, with only
// `retry_on_http_status`, for an attempt answered with a status in one of its
// ranges or never sent, or, when
// the channel allows it, for a request that never reached a server (at most
// kMaxConnectFailureRetries times a call). Never for a request whose body
// was not kept.
bool RetryWanted(const AttemptEnd& end);

enum class RetryVerdict {
  kRetry,
  kMaxAttempts,  // the policy's attempts are used up
  kNoTime,       // the backoff would end at or after the deadline
  kBudget,       // the retry budget refused the withdrawal
};

// For a wanted retry after `attempts` attempts (max_attempts 0: no limit),
// to start at `retry_at`: retry, or why not. The checks run in that order;
// `withdraw` (which spends the budget) is called only if the others pass.
RetryVerdict DecideRetry(uint32_t attempts, uint32_t max_attempts,
                         absl::Time retry_at, absl::Time deadline,
                         absl::FunctionRef<bool()> withdraw);

}  // namespace mesh::internal

#endif  // MESH_SRC_ROUTE_RETRY_DECISION_H_

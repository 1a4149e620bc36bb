// The pieces of a retry policy the data path needs: the jittered wait before
// a retry and the validity rules of RetryPolicy.
//
//   absl::Duration wait = RetryBackoff(route.retry_policy, retry, gen);
//
// Pure functions; thread-safe when the generator is the caller's own.
#ifndef MESH_SRC_ROUTE_RETRY_POLICY_H_
#define MESH_SRC_ROUTE_RETRY_POLICY_H_

#include <optional>

#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "mesh/metadata.h"
#include "mesh/service_config.h"
#include "src/base/internal_export.h"

namespace mesh::internal {

// OK, or INVALID_ARGUMENT naming the field: negative or infinite backoff, a
// max below the base.
absl::Status ValidateRetryPolicy(const RetryPolicy& policy);

// The most attempts a hedged call makes (gRFC A6's limit).
inline constexpr uint32_t kMaxHedgedAttempts = 5;

// OK, or INVALID_ARGUMENT naming the field ("hedge_policy.max_attempts 7
// is not within 2..5"): attempts out of range, a negative or infinite
// delay, OK or a code that is not a gRPC status among the non-fatal codes,
// or a route that is also retryable (`retryable`).
MESH_INTERNAL_EXPORT absl::Status ValidateHedgePolicy(const HedgePolicy& policy,
                                                      bool retryable);

// Whether `trailers` (or headers) hold grpc-retry-pushback-ms, and what
// it says: the wait before the next attempt, or nullopt when it stops them
// (negative, or not a number). `present` is false when there is none.
struct Pushback {
  bool present = false;
  std::optional<absl::Duration> wait;
};
Pushback ReadPushback(const Metadata& trailers);

// The wait before retry `retry` (1 for the first retry): uniform in
// [0, min(base × 2^(retry-1), max)], where a zero max means 10 × base. Zero
// when the base is zero.
absl::Duration RetryBackoff(const RetryPolicy& policy, int retry,
                            absl::BitGenRef gen);

}  // namespace mesh::internal

#endif  // MESH_SRC_ROUTE_RETRY_POLICY_H_

// The pieces of a retry policy the data path needs: the jittered wait before
// a retry and the validity rules of RetryPolicy.
//
//   absl::Duration wait = RetryBackoff(route.retry_policy, retry, gen);
//
// Pure functions; thread-safe when the generator is the caller's own.
#ifndef MESH_SRC_ROUTE_RETRY_POLICY_H_
#define MESH_SRC_ROUTE_RETRY_POLICY_H_

#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "mesh/service_config.h"

namespace mesh::internal {

// OK, or INVALID_ARGUMENT naming the field: negative or infinite backoff, a
// max below the base.
absl::Status ValidateRetryPolicy(const RetryPolicy& policy);

// The wait before retry `retry` (1 for the first retry): uniform in
// [0, min(base × 2^(retry-1), max)], where a zero max means 10 × base. Zero
// when the base is zero.
absl::Duration RetryBackoff(const RetryPolicy& policy, int retry,
                            absl::BitGenRef gen);

}  // namespace mesh::internal

#endif  // MESH_SRC_ROUTE_RETRY_POLICY_H_

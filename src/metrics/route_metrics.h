// RouteMetrics: the counters and latency histogram of one route of one
// authority (route_* in docs/metrics.md). The call path holds a
// shared_ptr from MetricsRegistry::Route and records into it per call and
// per attempt.
//
//   std::shared_ptr<RouteMetrics> m = registry.Route("books:8080", "GetBook");
//   m->RecordRequest();
//   m->RecordAttempt(/*is_retry=*/false);
//   ...
//   m->RecordResponse(/*failure=*/false, /*grpc_code=*/0, elapsed);
//
// Thread-safe and lock-free: every field is a relaxed atomic (or built of
// them); recording never allocates. The fields are public for reading and
// for tests; the call path uses the Record methods.
#ifndef MESH_SRC_METRICS_ROUTE_METRICS_H_
#define MESH_SRC_METRICS_ROUTE_METRICS_H_

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "src/metrics/latency_histogram.h"
#include "src/metrics/response_counters.h"

namespace mesh::internal {

// Why a retry that the route allowed was not made.
enum class RetrySkipReason {
  kBudget,       // the retry budget had no token (route_retry_skipped_total
                 // reason="budget")
  kMaxAttempts,  // the call had made its maximum attempts
                 // (reason="max_attempts")
};

struct RouteMetrics {
  // One logical call, whatever its attempts.
  void RecordRequest() { Increment(requests); }
  // One attempt sent (the first or a retry); a retry also counts in
  // `retries`.
  void RecordAttempt(bool is_retry) {
    Increment(actual_requests);
    if (is_retry) Increment(retries);
  }
  // A hedged attempt sent (after the first): an attempt, and a hedge.
  void RecordHedge() {
    Increment(actual_requests);
    Increment(hedges);
  }
  // A hedge the policy asked for that the retry budget refused.
  void RecordHedgeSkipped() { Increment(hedges_skipped_budget); }
  void RecordRetrySkipped(RetrySkipReason reason) {
    Increment(reason == RetrySkipReason::kBudget
                  ? retries_skipped_budget
                  : retries_skipped_max_attempts);
  }
  // The end of one logical call: its final status and its whole latency,
  // retries included. A call ending DEADLINE_EXCEEDED (4) also counts in
  // `timeouts`, so the caller does not count it separately.
  void RecordResponse(bool failure, int grpc_code, absl::Duration elapsed) {
    responses.Record(failure, grpc_code);
    latency.Observe(elapsed);
    if (grpc_code == kDeadlineExceeded) Increment(timeouts);
  }

  std::atomic<uint64_t> requests{0};         // logical calls
  std::atomic<uint64_t> actual_requests{0};  // attempts, retries included
  std::atomic<uint64_t> retries{0};
  std::atomic<uint64_t> retries_skipped_budget{0};
  std::atomic<uint64_t> retries_skipped_max_attempts{0};
  std::atomic<uint64_t> hedges{0};
  std::atomic<uint64_t> hedges_skipped_budget{0};
  std::atomic<uint64_t> timeouts{0};  // calls ending DEADLINE_EXCEEDED
  ResponseCounters responses;         // one per logical call
  // A plain HTTP call's final answer (mesh::curl), besides `responses`.
  HttpStatusCounters http_responses;
  LatencyHistogram latency;  // whole call, retries included

 private:
  static constexpr int kDeadlineExceeded = 4;

  static void Increment(std::atomic<uint64_t>& counter) {
    counter.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace mesh::internal

#endif  // MESH_SRC_METRICS_ROUTE_METRICS_H_

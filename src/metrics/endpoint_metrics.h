// EndpointMetrics: attempts sent to one endpoint of one authority and their
// responses (endpoint_request_total, endpoint_response_total in
// docs/metrics.md).
//
// The destination makes it at the endpoint's first attempt and owns the
// shared_ptr from MetricsRegistry::Endpoint while the endpoint is in its
// set; the registry holds it weakly, so an endpoint that left stops being
// exposed once its last holder (including in-flight attempts that copied
// the pointer) lets go.
//
//   std::shared_ptr<EndpointMetrics> m = registry.Endpoint(authority, addr);
//   m->RecordAttempt();
//   m->RecordResponse(/*failure=*/true, /*grpc_code=*/14);
//
// Thread-safe and lock-free: relaxed atomics; recording never allocates.
#ifndef MESH_SRC_METRICS_ENDPOINT_METRICS_H_
#define MESH_SRC_METRICS_ENDPOINT_METRICS_H_

#include <atomic>
#include <cstdint>

#include "src/metrics/response_counters.h"
#include "src/model/endpoint_tls.h"

namespace mesh::internal {

struct EndpointMetrics {
  void RecordAttempt() { requests.fetch_add(1, std::memory_order_relaxed); }
  // The outcome of one attempt sent to this endpoint.
  void RecordResponse(bool failure, int grpc_code) {
    responses.Record(failure, grpc_code);
  }

  std::atomic<uint64_t> requests{0};  // attempts sent to this endpoint
  ResponseCounters responses;         // one per attempt
  // The endpoint's TLS labels (endpoint_tls.h), set before it is shared.
  LabelPairs tls;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_METRICS_ENDPOINT_METRICS_H_

// EndpointLoad is the per-endpoint state the balancer shares across snapshot
// swaps: the endpoint itself, pending calls, the Peak-EWMA estimate and the
// ejection state. Snapshots and in-flight CallHandles hold it by shared_ptr,
// so a removed endpoint's record lives until its last call settles.
//
// Thread-safe: every mutable field is atomic (or PeakEwma, itself
// thread-safe).
#ifndef MESH_SRC_BALANCE_ENDPOINT_LOAD_H_
#define MESH_SRC_BALANCE_ENDPOINT_LOAD_H_

#include <atomic>
#include <cstdint>

#include "mesh/balancer.h"
#include "mesh/endpoint.h"
#include "src/balance/peak_ewma.h"

namespace mesh::internal {

struct EndpointLoad {
  EndpointLoad(Endpoint e, const BalancerOptions& options, int64_t now_ns);

  // True while the endpoint is ejected at `now_ns`.
  bool Ejected(int64_t now_ns) const {
    return ejected_until_ns.load(std::memory_order_relaxed) > now_ns;
  }
  // Takes over the history of `other` (EWMA, failures, ejection, counters),
  // but not its pending calls, which settle on `other`.
  void InheritFrom(const EndpointLoad& other);
  // Records the end of one call that started at `start_ns`.
  void Settle(CallOutcome outcome, int64_t start_ns, int64_t now_ns);

  const Endpoint endpoint;
  const int64_t ejection_base_ns;
  const int64_t ejection_max_ns;
  PeakEwma ewma;
  std::atomic<int64_t> pending{0};
  std::atomic<uint64_t> picks{0};
  std::atomic<uint64_t> failures{0};
  std::atomic<uint32_t> consecutive_failures{0};
  std::atomic<int64_t> ejected_until_ns{0};
};

// Gives the balancers access to CallHandle's private constructor.
struct CallHandleAccess {
  static CallHandle Make(std::shared_ptr<EndpointLoad> load, const Clock* clock,
                         int64_t start_nanos);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_ENDPOINT_LOAD_H_

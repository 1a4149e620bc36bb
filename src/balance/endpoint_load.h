// EndpointLoad is the per-endpoint state the balancer shares across snapshot
// swaps: the endpoint itself, pending calls, the Peak-EWMA estimate and the
// ejection state. Snapshots and in-flight CallHandles hold it by shared_ptr,
// so a removed endpoint's record lives until its last call settles. The
// endpoint is held by shared_ptr too, so that a balancer fed by a
// destination shares the destination's copy instead of making its own.
//
// Thread-safe: every mutable field is atomic (or PeakEwma, itself
// thread-safe); the ejection fields are written only under the
// EjectionGroup's mutex, so picks read them without a lock.
#ifndef MESH_SRC_BALANCE_ENDPOINT_LOAD_H_
#define MESH_SRC_BALANCE_ENDPOINT_LOAD_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "mesh/balancer.h"
#include "mesh/endpoint.h"
#include "src/balance/call_handle.h"
#include "src/balance/ejection_reason.h"
#include "src/balance/peak_ewma.h"
#include "src/base/clock.h"

namespace mesh::internal {

class EjectionGroup;

struct EndpointLoad {
  // `ejection` is the balancer's group, shared by all its records.
  // REQUIRES: `e` not null.
  EndpointLoad(std::shared_ptr<const Endpoint> e,
               const BalancerOptions& options, int64_t now_ns,
               std::shared_ptr<EjectionGroup> ejection);

  // True while the endpoint is ejected at `now_ns`.
  bool Ejected(int64_t now_ns) const {
    return ejected_until_ns.load(std::memory_order_relaxed) > now_ns;
  }
  // Takes over the history of `other` (EWMA, failures, ejection, counters)
  // and its place in the ejection group, but not its pending calls, which
  // settle on `other`. REQUIRES: same group.
  void InheritFrom(const EndpointLoad& other);
  // Records the end of one call that started at `start_ns`, now on `clock`
  // (read only if needed: a success on a record that keeps no RTT estimate
  // and counts no intervals reads none). A success resets the consecutive
  // failures; a classified failure that makes them reach the group's
  // threshold, or any endpoint failure, asks the group to eject (the count
  // is reset only by a success or an ejection, so a failure refused by the
  // share limit, or seen while already ejected, keeps it).
  // `rtt_sampled`: SampleRtt took this call's sample already (a stream).
  void Settle(CallOutcome outcome, int64_t start_ns, const Clock& clock,
              bool rtt_sampled = false);
  // One RTT sample for a call that started at `start_ns` (a stream's first
  // response), if this record tracks RTT.
  void SampleRtt(int64_t start_ns, const Clock& clock);

  const std::shared_ptr<const Endpoint> endpoint;  // never null
  const std::shared_ptr<EjectionGroup> ejection;
  // Whether calls feed `ewma`: not for ring hash, which picks by hash alone
  // (its records show default_rtt).
  const bool tracks_rtt;
  PeakEwma ewma;
  std::atomic<int64_t> pending{0};
  std::atomic<uint64_t> picks{0};
  std::atomic<uint64_t> failures{0};  // kFailure and kEndpointFailure
  std::atomic<uint32_t> consecutive_failures{0};
  // Ejection state, written under the group's mutex. (The two 32-bit fields
  // side by side: no padding.)
  std::atomic<uint32_t> times_ejected{0};  // n of the backoff; may restart
  std::atomic<EjectionReason> ejection_reason{EjectionReason::kNone};
  std::atomic<int64_t> ejected_until_ns{0};  // end of the last ejection
  std::atomic<uint64_t> ejections{0};        // total, never restarts
  // Calls ended since the group's last look (interval ejection only).
  std::atomic<uint32_t> interval_successes{0};
  std::atomic<uint32_t> interval_failures{0};
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_ENDPOINT_LOAD_H_

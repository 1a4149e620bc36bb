// BackendPolicyState: what a destination's backend policy (balancing,
// ejection, drops and the circuit breaker, from discovery) means for the
// calls to it: the drop draw, the count of requests in flight against
// max_requests, the count of active injected faults, and the balancer
// options a channel's leg is made with. Attempts read it without a lock.
//
//   if (auto category = state.DrawDrop()) { /* refuse: dropped */ }
//   bool counted;
//   if (!state.TryStartRequest(&counted)) return state.CircuitBreakerStatus();
//   ...  if (counted) state.EndRequest();
//
// Thread-safe.
#ifndef MESH_SRC_CHANNEL_BACKEND_POLICY_STATE_H_
#define MESH_SRC_CHANNEL_BACKEND_POLICY_STATE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mesh/balancer.h"
#include "mesh/discovery.h"
#include "src/base/mutex.h"
#include "src/base/snapshot_cell.h"

namespace mesh::internal {

class BackendPolicyState {
 public:
  // `target` names the destination in the circuit breaker's error.
  explicit BackendPolicyState(std::string target);

  // Takes `policy`; false, changing nothing, when it equals the current one.
  bool Apply(const BackendPolicy& policy);
  static bool Same(const BackendPolicy& a, const BackendPolicy& b);

  // The category of the drop_overloads that drops this request, if one
  // does; the drop is counted. Without drops, one acquire load.
  std::optional<std::string> DrawDrop();
  // The circuit breaker: false when max_requests are in flight. Otherwise
  // true, and `*counted` says whether the request was counted (only with a
  // limit): then EndRequest when it ends, whatever the outcome. Without a
  // limit, one relaxed load.
  bool TryStartRequest(bool* counted);
  void EndRequest() { in_flight_.fetch_sub(1, std::memory_order_relaxed); }
  // UNAVAILABLE naming the limit, counting the refusal.
  absl::Status CircuitBreakerStatus();

  // Counts a fault starting (FaultInjection::max_active_faults; 0: no
  // limit): false, counting nothing, when `limit` faults are active.
  bool TryStartFault(uint32_t limit);
  void EndFault() { active_faults_.fetch_sub(1, std::memory_order_relaxed); }

  // A channel's balancer options with the policy's balancing and ejection
  // applied.
  BalancerOptions BalancerOptionsFor(const BalancerOptions& channel) const;
  // Counts the policies taken (0: none yet), so a leg sees when to ask
  // BalancerOptionsFor again. Lock-free.
  uint64_t generation() const {
    return generation_.load(std::memory_order_acquire);
  }

  // For Describe: the policy (nullopt before the first), the requests in
  // flight, the drops and the circuit breaker's refusals so far.
  std::optional<BackendPolicy> policy() const;
  int64_t in_flight() const {
    return in_flight_.load(std::memory_order_relaxed);
  }
  // BackendPolicy::queue_capacity (0: no limit) and fail_fast_timeout
  // (infinite: the channel's). Lock-free.
  uint32_t queue_capacity() const {
    return queue_capacity_.load(std::memory_order_relaxed);
  }
  absl::Duration fail_fast_timeout() const {
    const int64_t ns = fail_fast_ns_.load(std::memory_order_relaxed);
    return ns > 0 ? absl::Nanoseconds(ns) : absl::InfiniteDuration();
  }
  int64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  int64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  const std::string target_;
  std::atomic<uint32_t> max_requests_{0};
  std::atomic<uint32_t> queue_capacity_{0};
  std::atomic<int64_t> fail_fast_ns_{0};  // 0: none
  std::atomic<int64_t> in_flight_{0};
  std::atomic<bool> has_drops_{false};
  SnapshotCell<std::vector<BackendPolicy::Drop>> drops_{
      std::make_unique<std::vector<BackendPolicy::Drop>>()};
  std::atomic<int64_t> dropped_{0};
  std::atomic<int64_t> refusals_{0};
  std::atomic<uint32_t> active_faults_{0};
  std::atomic<uint64_t> generation_{0};
  mutable Mutex mu_;
  std::optional<BackendPolicy> policy_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_BACKEND_POLICY_STATE_H_

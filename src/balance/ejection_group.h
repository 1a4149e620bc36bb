// EjectionGroup decides, for the endpoints of one balancer, whether a failing
// endpoint may be ejected now (outlier ejection as in Envoy's outlier
// detection: consecutive failures, base × times-ejected backoff, a maximum
// ejected share), and records the ejection in the endpoint's EndpointLoad.
// Every EndpointLoad of a balancer holds the balancer's group by shared_ptr.
//
//   auto group = std::make_shared<EjectionGroup>(options, now);
//   group->SetMembers(loads);                  // on each SetEndpoints
//   if (group->TryEject(*load, now)) { ... }   // on a failure at threshold
//   load->Ejected(now);                        // picks: one relaxed load
//
// With BalancerOptions::interval_ejection, the group also takes a look every
// interval (MaybeSweep, from the call that ends first after the interval has
// passed): each member's calls since the last look are counted, and the
// success-rate and failure-percentage rules eject the endpoints that stand
// out (gRFC A50).
//
// Thread-safe. Only the failure and update paths, and the calls that end
// when a look is due, take its mutex; picks read
// EndpointLoad::ejected_until_ns without it.
#ifndef MESH_SRC_BALANCE_EJECTION_GROUP_H_
#define MESH_SRC_BALANCE_EJECTION_GROUP_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "mesh/balancer.h"
#include "src/balance/ejection_reason.h"
#include "src/base/mutex.h"

namespace mesh::internal {

struct EndpointLoad;

// The most endpoints of a set of `n` that may be ejected at once:
// floor(share × n), at least 1 when n >= 2, never n.
size_t MaxEjected(size_t n, double share);

// How long the `times`-th ejection lasts: min(base × times, max), or with
// `exponential` min(base × 2^(times-1), max), without overflow.
// REQUIRES: times >= 1, 0 < base_ns <= max_ns.
int64_t EjectionNanos(uint64_t times, int64_t base_ns, int64_t max_ns,
                      bool exponential = false);

class EjectionGroup {
 public:
  // REQUIRES: options valid (Balancer::Create checks them). `now_ns`
  // starts the first interval.
  EjectionGroup(const BalancerOptions& options, int64_t now_ns);
  EjectionGroup(const EjectionGroup&) = delete;
  EjectionGroup& operator=(const EjectionGroup&) = delete;

  // Classified failures in a row that eject; 0: never on classified failures.
  uint32_t consecutive_failures() const { return consecutive_failures_; }
  // Whether members count their calls per interval (interval_ejection set).
  bool counts_intervals() const { return interval_.has_value(); }

  // Makes `loads` the current set. Their ejection state is read as it is now
  // (an inheriting record has copied its predecessor's, see Replace).
  void SetMembers(const std::vector<std::shared_ptr<EndpointLoad>>& loads);

  // Moves the ejection state (deadline, times ejected, ejection count) of
  // `from` to `to`, which takes its place in the set, in one step: a failure
  // settling on `from` meanwhile cannot eject it behind `to`'s back.
  void Replace(const EndpointLoad& from, EndpointLoad& to);

  // Ejects `load` at `now_ns` if it is a member of the current set, is not
  // ejected already, and the ejected share allows one more. On success sets
  // its deadline, times ejected and ejection count, resets its consecutive
  // failures, and returns true; otherwise changes nothing and returns false.
  bool TryEject(EndpointLoad& load, int64_t now_ns);

  // With interval ejection, takes the look if an interval has passed since
  // the last one (at most one caller does; the others return at once):
  // reads and resets each member's interval counts, ejects by the
  // success-rate and failure-percentage rules, and steps down the backoff
  // of the members not ejected. Otherwise does nothing.
  void MaybeSweep(int64_t now_ns);

 private:
  // Whether one more of `members` may be ejected while `ejected` are.
  bool MayEjectOneMore(size_t ejected, size_t members) const;
  bool EjectLocked(
      EndpointLoad& load, int64_t now_ns,
      absl::flat_hash_map<const EndpointLoad*, int64_t>::iterator self,
      EjectionReason reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ejects `load`, an outlier of the look at `now_ns`, unless it is ejected
  // already, the share of the `members` forbids one more than `*ejected`,
  // or the enforcement draw says no; counts it in `*ejected`.
  void EjectOutlier(EndpointLoad& load, uint32_t enforcement_percentage,
                    int64_t now_ns, size_t members, size_t* ejected,
                    EjectionReason reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The look at `now_ns`; the last was at `last_look_ns` (or the group was
  // made then), `intervals` intervals ago.
  void SweepLocked(int64_t now_ns, int64_t last_look_ns, int64_t intervals)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const uint32_t consecutive_failures_;
  const int64_t base_ns_;
  const int64_t max_ns_;
  const bool exponential_;
  const double jitter_;
  const double max_share_;
  const uint32_t min_ready_;
  const std::optional<IntervalEjection> interval_;
  const int64_t interval_ns_;  // 0 without interval ejection
  // When the next look is due (written under mu_, read without it first).
  std::atomic<int64_t> next_sweep_ns_;
  // Failures settle on many threads at once (a Mutex: mutex.h).
  Mutex mu_;
  // The members, for the looks (interval ejection only; empty otherwise).
  std::vector<std::weak_ptr<EndpointLoad>> members_ ABSL_GUARDED_BY(mu_);
  // Draws for the enforcement percentages.
  absl::InsecureBitGen gen_ ABSL_GUARDED_BY(mu_);
  // Each member's ejection deadline, mirrored from its EndpointLoad
  // (written only under mu_), so that counting never touches a record that
  // may be gone. Keys are identities: never dereferenced.
  absl::flat_hash_map<const EndpointLoad*, int64_t> until_ns_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_EJECTION_GROUP_H_

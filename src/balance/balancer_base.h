// BalancerBase keeps what every balancer shares: the per-address load records
// that survive updates, and the immutable snapshot that picks read. Each
// policy (P2C, round robin) only implements Pick() over a Snapshot.
//
// Thread-safe (see mesh/balancer.h).
#ifndef MESH_SRC_BALANCE_BALANCER_BASE_H_
#define MESH_SRC_BALANCE_BALANCER_BASE_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/random/bit_gen_ref.h"
#include "absl/synchronization/mutex.h"
#include "mesh/balancer.h"
#include "src/balance/ejection_group.h"
#include "src/balance/endpoint_load.h"
#include "src/balance/snapshot_cell.h"
#include "src/balance/weighted_sampler.h"

namespace mesh::internal {

class BalancerBase : public Balancer {
 public:
  BalancerBase(const BalancerOptions& options, const Clock* clock,
               absl::BitGenRef* rng);

  void SetEndpoints(const std::vector<Endpoint>& endpoints) override;
  std::vector<EndpointStats> Stats() const override;

 protected:
  struct Snapshot {
    explicit Snapshot(std::vector<std::shared_ptr<EndpointLoad>> l);
    const std::vector<std::shared_ptr<EndpointLoad>> loads;
    const WeightedSampler sampler;
    mutable std::atomic<uint64_t> next{0};  // round-robin cursor
  };

  // The caller's random source: the injected one, or a per-thread generator.
  absl::BitGenRef Gen() const;
  // A handle on `load`, the call starting at `now_ns` (the pick's own clock
  // reading: one read per pick, not two).
  CallHandle Take(const std::shared_ptr<EndpointLoad>& load,
                  int64_t now_ns) const;
  static absl::Status NoEndpointsError();

  const BalancerOptions options_;
  const Clock* const clock_;
  absl::BitGenRef* const rng_;
  const std::shared_ptr<EjectionGroup> ejection_;  // shared by every record
  SnapshotCell<Snapshot> snapshot_;

 private:
  absl::Mutex mu_;  // serializes SetEndpoints
  absl::flat_hash_map<std::string, std::shared_ptr<EndpointLoad>> by_address_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_BALANCER_BASE_H_

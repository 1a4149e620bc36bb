// BalancerBase keeps what every balancer shares: the per-address load records
// that survive updates, and the immutable snapshot that picks read. Each
// policy (P2C, round robin, ring hash) only implements Pick() over a
// Snapshot; ring hash also builds its ring into each Snapshot (MakeRing).
//
// Memory: the snapshot's vector is the only resident index of the records
// (an update builds its address lookup for the time of the update), and a
// record holds its endpoint by shared_ptr: SetSharedEndpoints() lets a caller
// that already keeps one shared copy of each endpoint (the destination) hand
// those in, so the balancer copies no endpoint.
//
// Thread-safe (see balancer.h).
#ifndef MESH_SRC_BALANCE_BALANCER_BASE_H_
#define MESH_SRC_BALANCE_BALANCER_BASE_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/random/bit_gen_ref.h"
#include "mesh/balancer.h"
#include "src/balance/balancer.h"
#include "src/balance/ejection_group.h"
#include "src/balance/endpoint_load.h"
#include "src/balance/hash_ring.h"
#include "src/balance/weighted_sampler.h"
#include "src/base/mutex.h"
#include "src/base/snapshot_cell.h"

namespace mesh::internal {

class BalancerBase : public Balancer {
 public:
  BalancerBase(const BalancerOptions& options, const Clock* clock,
               absl::BitGenRef* rng);

  void SetEndpoints(const std::vector<Endpoint>& endpoints) override;
  std::vector<EndpointStats> Stats() const override;

  // As SetEndpoints over the `n` endpoints endpoint(0) .. endpoint(n - 1);
  // share(i) returns a shared_ptr to endpoint(i) (the same object, or an
  // equal one), which a new record keeps. Called only for the endpoints that
  // need a new record.
  void SetSharedEndpoints(
      size_t n, absl::FunctionRef<const Endpoint&(size_t)> endpoint,
      absl::FunctionRef<std::shared_ptr<const Endpoint>(size_t)> share)
      override;

 protected:
  struct Snapshot {
    explicit Snapshot(std::vector<std::shared_ptr<EndpointLoad>> l,
                      std::shared_ptr<const HashRing> r = nullptr);
    const std::vector<std::shared_ptr<EndpointLoad>> loads;
    const WeightedSampler sampler;
    mutable std::atomic<uint64_t> next{0};  // round-robin cursor
    // Ring hash: the ring over `loads` (null for the other policies; shared
    // by successive snapshots of the same addresses and weights), and a time
    // before which every endpoint on it is known to be ejected (0: not
    // known), so that picks then skip the walk around the ring.
    const std::shared_ptr<const HashRing> ring;
    mutable std::atomic<int64_t> ring_all_ejected_until_ns{0};
  };

  // The ring of a new snapshot over `loads`, called by SetSharedEndpoints
  // (serialized) before it publishes; `previous` is the snapshot it
  // replaces. Only the ring-hash policy has one: the default returns null.
  virtual std::shared_ptr<const HashRing> MakeRing(
      const std::vector<std::shared_ptr<EndpointLoad>>& loads,
      const Snapshot& previous) const;

  // The caller's random source: the injected one, or a per-thread generator.
  absl::BitGenRef Gen() const;
  // 64 random bits from the same source; without an injected one, a direct
  // call of the per-thread generator (no type-erased call per draw).
  uint64_t RandomBits() const;
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
  Mutex mu_;  // serializes SetEndpoints
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_BALANCER_BASE_H_

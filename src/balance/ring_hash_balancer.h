// RingHashBalancer: consistent hashing over a ring (gRFC A42, xDS
// RING_HASH; the ring itself is hash_ring.h). A call's hash picks the
// endpoint of the first ring entry at or after it, so equal hashes reach the
// same endpoint while the set stays and a change of the set moves few of
// them. A call without a hash gets a random one (A42: a random endpoint).
//
// Ejection: if the hash's endpoint is ejected, the pick walks on around the
// ring to the next endpoints, taking the first one not ejected (A42 walks
// past endpoints in TRANSIENT_FAILURE the same way); if every endpoint is
// ejected it takes the hash's own. Once a walk has found them all ejected,
// picks skip the walk until the first ejection ends.
//
//   options.kind = BalancerKind::kRingHash;
//   auto b = Balancer::Create(options);
//   (*b)->PickHashed(XxHash64(user_id));
//
// Thread-safe (see balancer.h).
#ifndef MESH_SRC_BALANCE_RING_HASH_BALANCER_H_
#define MESH_SRC_BALANCE_RING_HASH_BALANCER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "src/balance/balancer_base.h"

namespace mesh::internal {

class RingHashBalancer final : public BalancerBase {
 public:
  using BalancerBase::BalancerBase;

  // A random hash's endpoint: spread in proportion to the ring's arcs,
  // which follow the weights.
  absl::StatusOr<CallHandle> Pick() override;
  // The endpoint of `hash`'s ring entry (or the next not ejected), or
  // UNAVAILABLE if the set is empty.
  absl::StatusOr<CallHandle> PickHashed(uint64_t hash) override;

  // Entries of the current ring (0 with no endpoints), for tests and
  // debugging.
  size_t RingSize() const;

 protected:
  // Builds the ring, or keeps the previous one if the addresses and weights
  // are the same, in the same order.
  std::shared_ptr<const HashRing> MakeRing(
      const std::vector<std::shared_ptr<EndpointLoad>>& loads,
      const Snapshot& previous) const override;

 private:
  // The index in snap.loads of the endpoint a pick takes when the endpoint
  // at ring position `pos` (index `first`) is ejected at `now_ns`.
  static uint32_t WalkPastEjected(const Snapshot& snap, size_t pos,
                                  uint32_t first, int64_t now_ns);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_RING_HASH_BALANCER_H_

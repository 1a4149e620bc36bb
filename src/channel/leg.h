// One backend a channel sends to: its destination and the channel's
// balancer over that destination's endpoints. A direct endpoint's leg has a
// balancer over that one endpoint, not attached to the destination's set.
//
// Thread-safe. Owned by the channel's pickers (shared) and by the attempts
// sent through it.
#ifndef MESH_SRC_CHANNEL_LEG_H_
#define MESH_SRC_CHANNEL_LEG_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "mesh/balancer.h"
#include "src/balance/balancer.h"
#include "src/channel/destination.h"

namespace mesh::internal {

struct Leg {
  Leg(std::shared_ptr<Destination> d, std::unique_ptr<Balancer> b,
      bool attach = true);
  // Detaches the balancer and stops listening.
  ~Leg();
  Leg(const Leg&) = delete;
  Leg& operator=(const Leg&) = delete;

  // Runs `on_change` after each change of the destination's config or
  // backend policy (Destination::AddChangeListener), while the leg lives.
  // Call at most once.
  void Listen(absl::AnyInvocable<void()> on_change);

  const std::shared_ptr<Destination> destination;
  const std::unique_ptr<Balancer> balancer;
  const bool attached;
  // True when the destination has taken a backend policy since the
  // balancer was made (or last found to fit).
  bool Stale() const {
    return policy_generation.load(std::memory_order_acquire) !=
           destination->backend_policy().generation();
  }
  // The destination's backend policy the balancer was made for (its
  // policy_generation) and the options it made it with.
  std::atomic<uint64_t> policy_generation{0};
  BalancerOptions options;

 private:
  uint64_t listener_ = 0;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_LEG_H_

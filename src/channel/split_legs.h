// The legs of one channel: the backends it sends to, each a destination and
// the channel's own balancer over that destination's endpoints. The target
// itself (the apex), each backend of the destination's traffic split (made
// at its first call, dropped when a newer split no longer has it), and the
// config's direct endpoint.
//
//   bool kept;
//   std::shared_ptr<Leg> leg = legs.For(backend, routes, &kept);
//
// Thread-safe.
#ifndef MESH_SRC_CHANNEL_SPLIT_LEGS_H_
#define MESH_SRC_CHANNEL_SPLIT_LEGS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "mesh/balancer.h"
#include "src/balance/balancer.h"
#include "src/base/mutex.h"
#include "src/channel/destination.h"
#include "src/channel/mesh_core.h"

namespace mesh::internal {

// One backend a channel sends to: its destination and this channel's
// balancer over that destination's endpoints. A direct endpoint's leg has a
// balancer over that one endpoint, not attached to the destination's set.
struct Leg {
  Leg(std::shared_ptr<Destination> d, std::unique_ptr<Balancer> b,
      bool attach = true);
  ~Leg();
  const std::shared_ptr<Destination> destination;
  const std::unique_ptr<Balancer> balancer;
  const bool attached;
  // True when the destination has taken a backend policy since the
  // balancer was made (or last found to fit): SplitLegs::For then checks it.
  bool Stale() const {
    return policy_generation.load(std::memory_order_acquire) !=
           destination->backend_policy().generation();
  }
  // The destination's backend policy the balancer was made for (its
  // policy_generation) and the options it made it with.
  std::atomic<uint64_t> policy_generation{0};
  BalancerOptions options;
};

class SplitLegs {
 public:
  SplitLegs(std::string target, const BalancerOptions& options,
            std::shared_ptr<MeshCore> mesh, std::shared_ptr<Leg> apex);

  // The target's own leg.
  const std::shared_ptr<Leg>& apex() const { return apex_; }

  // The leg for a split backend, made on first use; null if the mesh is
  // shut down. Under a split older than the legs', or for a backend the
  // current routes no longer name, a backend without a leg gets a one-off
  // leg (`*kept` false); only a newer split prunes.
  // `key` is the backend's TrafficSplit::key.
  std::shared_ptr<Leg> For(const WeightedBackend& backend,
                           const std::string& key,
                           const Destination::Routes& routes, bool* kept);
  // The balancer statistics of the apex and of every backend's leg.
  std::vector<EndpointStats> Stats();
  // True when `leg` is a split backend's leg made before its backend's
  // latest policy, which For would make anew. The apex's leg never is:
  // For returns it as it is.
  bool Outdated(const Leg& leg) const {
    return &leg != apex_.get() && leg.Stale();
  }
  // The leg for the config's direct endpoint, made when it changes.
  std::shared_ptr<Leg> Direct(const std::shared_ptr<const Endpoint>& to);

 private:
  const std::string target_;
  const BalancerOptions options_;
  const std::shared_ptr<MeshCore> mesh_;
  const std::shared_ptr<Leg> apex_;
  Mutex mu_;
  // The config generation the legs were made for; legs of backends a newer
  // split no longer has are dropped.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<Leg>> legs_
      ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const Endpoint> direct_to_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Leg> direct_leg_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_SPLIT_LEGS_H_

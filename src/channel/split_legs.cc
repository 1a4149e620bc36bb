#include "src/channel/split_legs.h"

#include <utility>

#include "src/base/destroy_later.h"

namespace mesh::internal {

Leg::Leg(std::shared_ptr<Destination> d, std::unique_ptr<Balancer> b,
         bool attach)
    : destination(std::move(d)), balancer(std::move(b)), attached(attach) {
  if (attached) destination->Attach(balancer.get());
}

Leg::~Leg() {
  if (attached) destination->Detach(balancer.get());
}

SplitLegs::SplitLegs(std::string target, const BalancerOptions& options,
                     std::shared_ptr<MeshCore> mesh, std::shared_ptr<Leg> apex)
    : target_(std::move(target)),
      options_(options),
      mesh_(std::move(mesh)),
      apex_(std::move(apex)) {}

std::shared_ptr<Leg> SplitLegs::For(const WeightedBackend& backend,
                                    const std::string& key,
                                    const Destination::Routes& routes,
                                    bool* kept) {
  *kept = true;
  if (backend.cluster.empty() && backend.authority == target_) return apex_;
  std::vector<std::shared_ptr<Leg>> dropped;
  std::shared_ptr<Leg> leg;
  {
    MutexLock lock(&mu_);
    if (routes.generation > generation_) {
      // A newer split: backends it no longer has are dropped (in-flight
      // attempts keep their leg alive until they end). Calls still under an
      // older split never prune.
      for (auto it = legs_.begin(); it != legs_.end();) {
        if (routes.backend_keys->contains(it->first)) {
          ++it;
        } else {
          dropped.push_back(std::move(it->second));
          legs_.erase(it++);
        }
      }
      generation_ = routes.generation;
    }
    auto found = legs_.find(key);
    if (found != legs_.end() && found->second->Stale()) {
      // The backend's policy changed: a leg whose balancer it no longer
      // fits is made anew (in-flight attempts keep the old one alive).
      const Leg& old = *found->second;
      BalancerOptions wanted =
          old.destination->backend_policy().BalancerOptionsFor(options_);
      if (!SameBalancerOptions(wanted, old.options)) {
        dropped.push_back(std::move(found->second));
        legs_.erase(found);
        found = legs_.end();
      } else {
        found->second->policy_generation.store(
            old.destination->backend_policy().generation(),
            std::memory_order_release);
      }
    }
    if (found != legs_.end()) {
      leg = found->second;
    } else {
      absl::StatusOr<std::shared_ptr<Destination>> dest =
          backend.cluster.empty()
              ? mesh_->GetDestination(backend.authority)
              : mesh_->GetClusterDestination(target_, backend.cluster);
      // The channel's options were validated when it was made; a backend
      // policy's ring sizes are the source's to validate.
      uint64_t generation =
          dest.ok() ? (*dest)->backend_policy().generation() : 0;
      BalancerOptions options =
          dest.ok() ? (*dest)->backend_policy().BalancerOptionsFor(options_)
                    : options_;
      absl::StatusOr<std::unique_ptr<Balancer>> balancer =
          Balancer::Create(options);
      if (!balancer.ok()) {
        options = options_;
        balancer = Balancer::Create(options);
      }
      if (dest.ok() && balancer.ok()) {
        leg = std::make_shared<Leg>(*std::move(dest), *std::move(balancer));
        leg->policy_generation.store(generation, std::memory_order_release);
        leg->options = options;
        // A backend of an older split (a retry's) is used once, not kept.
        if (routes.generation == generation_ &&
            routes.backend_keys->contains(key)) {
          legs_[key] = leg;
        } else {
          *kept = false;
        }
      }
    }
  }
  // Possibly the last owners of destinations (and their transports): not
  // on this thread, which may be a gRPC callback thread.
  if (!dropped.empty()) DestroyLater([d = std::move(dropped)] {});
  return leg;
}

std::vector<EndpointStats> SplitLegs::Stats() {
  std::vector<EndpointStats> stats = apex_->balancer->Stats();
  std::vector<std::shared_ptr<Leg>> legs;
  {
    MutexLock lock(&mu_);
    for (const auto& [key, leg] : legs_) legs.push_back(leg);
  }
  for (const auto& leg : legs) {
    std::vector<EndpointStats> more = leg->balancer->Stats();
    stats.insert(stats.end(), more.begin(), more.end());
  }
  return stats;
}

std::shared_ptr<Leg> SplitLegs::Direct(
    const std::shared_ptr<const Endpoint>& to) {
  MutexLock lock(&mu_);
  if (direct_to_ != nullptr && *direct_to_ == *to) return direct_leg_;
  absl::StatusOr<std::unique_ptr<Balancer>> balancer =
      Balancer::Create(options_);
  if (!balancer.ok()) return nullptr;
  (*balancer)->SetEndpoints({*to});
  // The old one (not attached, same destination) may go on this thread.
  direct_leg_ = std::make_shared<Leg>(apex_->destination, *std::move(balancer),
                                      /*attach=*/false);
  direct_to_ = to;
  return direct_leg_;
}

}  // namespace mesh::internal

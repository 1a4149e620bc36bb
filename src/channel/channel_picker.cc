#include "src/channel/channel_picker.h"

#include <limits>
#include <utility>

#include "src/base/destroy_later.h"

namespace mesh::internal {
namespace {

// The placeholder a publisher starts and closes with: no legs, never
// current.
std::shared_ptr<const ChannelPicker> Placeholder(
    const std::shared_ptr<Leg>& apex) {
  auto picker = std::make_shared<ChannelPicker>();
  picker->routes = apex->destination->routes();
  picker->apex_epoch = std::numeric_limits<uint64_t>::max();
  return picker;
}

}  // namespace

std::vector<std::pair<const WeightedBackend*, const std::string*>>
SplitBackendsOf(const Destination::Routes& routes) {
  std::vector<std::pair<const WeightedBackend*, const std::string*>> out;
  auto add = [&out](const std::shared_ptr<const TrafficSplit>& split) {
    if (split == nullptr) return;
    for (size_t i = 0; i < split->size(); ++i) {
      out.emplace_back(&split->backends()[i], &split->key(i));
    }
  };
  add(routes.split);
  for (size_t i = 0; i < routes.table->size(); ++i) {
    add(routes.table->At(i).split);
  }
  return out;
}

ChannelPicker::~ChannelPicker() {
  if (!legs.empty()) DestroyLater([l = std::move(legs)] {});
}

PickerPublisher::PickerPublisher(std::string target,
                                 const BalancerOptions& options,
                                 std::shared_ptr<MeshCore> mesh,
                                 std::shared_ptr<Leg> apex)
    : target_(std::move(target)),
      options_(options),
      mesh_(std::move(mesh)),
      apex_(std::move(apex)),
      current_(Placeholder(apex_)),
      cell_(std::make_unique<std::shared_ptr<const ChannelPicker>>(current_)) {}

PickerPublisher::~PickerPublisher() = default;

void PickerPublisher::Listen(std::weak_ptr<PickerPublisher> self) {
  {
    MutexLock lock(&mu_);
    self_ = std::move(self);
    ListenTo(*apex_);
  }
  Rebuild();
}

void PickerPublisher::ListenTo(Leg& leg) {
  leg.Listen([self = self_] {
    std::shared_ptr<PickerPublisher> publisher = self.lock();
    if (publisher == nullptr) return;
    publisher->Rebuild();
    // Possibly the channel's last owner now: its legs and destinations end
    // on DestroyLater's thread, not the timer thread.
    DestroyLater([p = std::move(publisher)] {});
  });
}

std::shared_ptr<Leg> PickerPublisher::MakeLeg(const WeightedBackend& backend) {
  if (backend.cluster.empty() && backend.authority == target_) return apex_;
  absl::StatusOr<std::shared_ptr<Destination>> dest =
      backend.cluster.empty()
          ? mesh_->GetDestination(backend.authority)
          : mesh_->GetClusterDestination(target_, backend.cluster);
  if (!dest.ok()) return nullptr;
  BackendPolicyState& policy = (*dest)->backend_policy();
  // The generation first: a policy coming meanwhile leaves the leg stale,
  // to be refitted by the next build.
  uint64_t generation = policy.generation();
  // The channel's options were validated when it was made; a backend
  // policy's ring sizes are the source's to validate.
  BalancerOptions options = policy.BalancerOptionsFor(options_);
  absl::StatusOr<std::unique_ptr<Balancer>> balancer =
      Balancer::Create(options);
  if (!balancer.ok()) {
    options = options_;
    balancer = Balancer::Create(options);
    if (!balancer.ok()) return nullptr;
  }
  auto leg = std::make_shared<Leg>(*std::move(dest), *std::move(balancer));
  leg->policy_generation.store(generation, std::memory_order_release);
  leg->options = options;
  ListenTo(*leg);
  return leg;
}

std::shared_ptr<const ChannelPicker> PickerPublisher::Rebuild() {
  std::shared_ptr<const ChannelPicker> previous;
  std::shared_ptr<const ChannelPicker> next;
  {
    MutexLock lock(&mu_);
    if (closed_) return current_;
    Destination& apex = *apex_->destination;
    const uint64_t epoch = apex.change_epoch();
    // Also when the routes or the wait for them changed before the apex
    // counted the change (PickerForCall).
    bool outdated = current_->apex_epoch != epoch ||
                    current_->awaits_routes != apex.AwaitsRoutes() ||
                    current_->routes != apex.routes();
    for (const auto& [key, leg] : current_->legs) {
      if (outdated) break;
      outdated = leg != nullptr && current_->Outdated(*leg);
    }
    if (!outdated) return current_;  // built meanwhile by another thread

    auto picker = std::make_shared<ChannelPicker>();
    picker->apex_epoch = epoch;
    // After the epoch: state newer than it makes the next call build again.
    // The wait before the routes: the routes are published before the
    // wait ends, so a picker never has a table older than its wait.
    picker->awaits_routes = apex.AwaitsRoutes();
    picker->routes = apex.routes();
    picker->apex = apex_;
    const ChannelPicker& last = *current_;
    for (const auto& [backend_ptr, key_ptr] :
         SplitBackendsOf(*picker->routes)) {
      const WeightedBackend& backend = *backend_ptr;
      const std::string& key = *key_ptr;
      if (picker->legs.contains(key)) continue;
      std::shared_ptr<Leg> leg;
      if (auto found = last.legs.find(key); found != last.legs.end()) {
        leg = found->second;
      }
      if (leg != nullptr && last.Outdated(*leg)) {
        // The backend's policy changed: a balancer it no longer fits is
        // made anew (in-flight attempts keep the old leg alive).
        BackendPolicyState& policy = leg->destination->backend_policy();
        uint64_t generation = policy.generation();
        if (SameBalancerOptions(policy.BalancerOptionsFor(options_),
                                leg->options)) {
          leg->policy_generation.store(generation, std::memory_order_release);
        } else {
          leg = nullptr;
        }
      }
      if (leg == nullptr) leg = MakeLeg(backend);
      picker->legs.emplace(key, std::move(leg));
    }
    if (const auto& to = picker->routes->direct; to != nullptr) {
      if (last.direct != nullptr && last.routes->direct != nullptr &&
          *last.routes->direct == *to) {
        picker->direct = last.direct;
      } else {
        picker->direct = DirectLeg(to);
      }
    }
    next = std::move(picker);
    previous = std::exchange(current_, next);
    cell_.Publish(std::make_unique<std::shared_ptr<const ChannelPicker>>(next));
  }
  // `previous` may be the last owner of legs the new one dropped: its
  // destructor hands them to DestroyLater.
  return next;
}

std::shared_ptr<Leg> PickerPublisher::DirectLeg(
    const std::shared_ptr<const Endpoint>& to) {
  absl::StatusOr<std::unique_ptr<Balancer>> balancer =
      Balancer::Create(options_);
  if (!balancer.ok()) return nullptr;
  (*balancer)->SetEndpoints({*to});
  return std::make_shared<Leg>(apex_->destination, *std::move(balancer),
                               /*attach=*/false);
}

std::shared_ptr<Leg> PickerPublisher::OneOffLeg(
    const WeightedBackend& backend) {
  MutexLock lock(&mu_);
  if (closed_) return nullptr;
  return MakeLeg(backend);
}

void PickerPublisher::Close() {
  std::shared_ptr<const ChannelPicker> last;
  {
    MutexLock lock(&mu_);
    closed_ = true;
    last = std::exchange(current_, Placeholder(apex_));
    cell_.Publish(
        std::make_unique<std::shared_ptr<const ChannelPicker>>(current_));
  }
  // `last` ends here unless calls still hold it.
}

std::vector<EndpointStats> PickerPublisher::Stats() {
  std::shared_ptr<const ChannelPicker> picker;
  {
    MutexLock lock(&mu_);
    picker = current_;
  }
  std::vector<EndpointStats> stats = apex_->balancer->Stats();
  for (const auto& [key, leg] : picker->legs) {
    if (leg == nullptr || leg == apex_) continue;
    std::vector<EndpointStats> more = leg->balancer->Stats();
    stats.insert(stats.end(), more.begin(), more.end());
  }
  return stats;
}

}  // namespace mesh::internal

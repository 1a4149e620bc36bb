#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "mesh/discovery.h"
#include "src/base/mutex.h"
#include "src/model/address.h"
#include "src/model/endpoint_set.h"
#include "src/route/retry_policy.h"

namespace mesh {

struct StaticDiscovery::State {
  struct Target {
    internal::EndpointSet set;
    std::vector<EndpointObserver*> observers;
    std::optional<ServiceConfig> config;
    std::vector<ServiceConfigObserver*> config_observers;
  };
  // Held while observers are called, so calls per target are serialized and
  // an unsubscribed observer is never called again.
  internal::Mutex mu;
  absl::flat_hash_map<std::string, Target> targets ABSL_GUARDED_BY(mu);
};

namespace {

class StaticSubscription final : public DiscoverySubscription {
 public:
  explicit StaticSubscription(std::function<void()> cancel)
      : cancel_(std::move(cancel)) {}
  ~StaticSubscription() override { cancel_(); }

 private:
  std::function<void()> cancel_;
};

}  // namespace

StaticDiscovery::StaticDiscovery() : state_(std::make_shared<State>()) {}
StaticDiscovery::~StaticDiscovery() = default;

std::shared_ptr<StaticDiscovery> StaticDiscovery::Create() {
  return std::shared_ptr<StaticDiscovery>(new StaticDiscovery());
}

absl::Status StaticDiscovery::Update(const std::string& target,
                                     const EndpointUpdate& update) {
  absl::Status valid = internal::ValidateDestination(target);
  if (!valid.ok()) return valid;
  internal::MutexLock lock(&state_->mu);
  State::Target& t = state_->targets[target];
  absl::Status applied = t.set.Apply(update);
  if (!applied.ok()) {
    return absl::Status(applied.code(),
                        absl::StrCat("static discovery for '", target,
                                     "': ", applied.message()));
  }
  for (EndpointObserver* o : t.observers) o->OnEndpointUpdate(update);
  return absl::OkStatus();
}

absl::Status StaticDiscovery::SetEndpoints(const std::string& target,
                                           std::vector<Endpoint> endpoints) {
  return Update(target, EndpointUpdate::Reset(std::move(endpoints)));
}

std::unique_ptr<DiscoverySubscription> StaticDiscovery::Subscribe(
    const std::string& target, EndpointObserver* observer) {
  std::weak_ptr<State> weak = state_;
  {
    internal::MutexLock lock(&state_->mu);
    State::Target& t = state_->targets[target];
    t.observers.push_back(observer);
    if (t.set.has_update()) {
      if (t.set.size() == 0) {
        observer->OnEndpointUpdate(EndpointUpdate::NoEndpoints(t.set.exists()));
      } else {
        observer->OnEndpointUpdate(EndpointUpdate::Reset(t.set.Endpoints()));
      }
    }
  }
  return std::make_unique<StaticSubscription>(
      [weak, target, observer] { Unsubscribe(weak, target, observer); });
}

absl::Status StaticDiscovery::SetServiceConfig(const std::string& target,
                                               ServiceConfig config) {
  absl::Status valid = internal::ValidateDestination(target);
  if (!valid.ok()) return valid;
  for (size_t i = 0; i < config.routes.size(); ++i) {
    const Route& route = config.routes[i];
    if (!route.hedge_policy) continue;
    if (absl::Status s = internal::ValidateHedgePolicy(*route.hedge_policy,
                                                       route.is_retryable);
        !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ServiceConfig.routes[", i, "].", s.message()));
    }
  }
  internal::MutexLock lock(&state_->mu);
  State::Target& t = state_->targets[target];
  t.config = std::move(config);
  for (ServiceConfigObserver* o : t.config_observers) {
    o->OnServiceConfig(*t.config);
  }
  return absl::OkStatus();
}

std::unique_ptr<DiscoverySubscription> StaticDiscovery::SubscribeConfig(
    const std::string& target, ServiceConfigObserver* observer) {
  std::weak_ptr<State> weak = state_;
  {
    internal::MutexLock lock(&state_->mu);
    State::Target& t = state_->targets[target];
    t.config_observers.push_back(observer);
    if (t.config) observer->OnServiceConfig(*t.config);
  }
  return std::make_unique<StaticSubscription>(
      [weak, target, observer] { Unsubscribe(weak, target, observer); });
}

void StaticDiscovery::Unsubscribe(const std::weak_ptr<State>& weak,
                                  const std::string& target,
                                  const void* observer) {
  std::shared_ptr<State> state = weak.lock();
  if (state == nullptr) return;
  internal::MutexLock lock(&state->mu);
  auto it = state->targets.find(target);
  if (it == state->targets.end()) return;
  State::Target& t = it->second;
  auto drop = [observer](auto& list) {
    list.erase(std::remove_if(list.begin(), list.end(),
                              [observer](const auto* o) {
                                return static_cast<const void*>(o) == observer;
                              }),
               list.end());
  };
  drop(t.observers);
  drop(t.config_observers);
  // A target nobody watches and nobody set is forgotten.
  if (t.observers.empty() && t.config_observers.empty() &&
      !t.set.has_update() && !t.config) {
    state->targets.erase(it);
  }
}

}  // namespace mesh

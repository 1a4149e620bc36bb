#include <algorithm>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "mesh/discovery.h"
#include "src/model/address.h"
#include "src/model/endpoint_set.h"

namespace mesh {

struct StaticDiscovery::State {
  struct Target {
    internal::EndpointSet set;
    std::vector<EndpointObserver*> observers;
  };
  // Held while observers are called, so calls per target are serialized and
  // an unsubscribed observer is never called again.
  absl::Mutex mu;
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
  absl::MutexLock lock(&state_->mu);
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
    absl::MutexLock lock(&state_->mu);
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
  return std::make_unique<StaticSubscription>([weak, target, observer] {
    std::shared_ptr<State> state = weak.lock();
    if (state == nullptr) return;
    absl::MutexLock lock(&state->mu);
    auto it = state->targets.find(target);
    if (it == state->targets.end()) return;
    auto& observers = it->second.observers;
    observers.erase(std::remove(observers.begin(), observers.end(), observer),
                    observers.end());
    // A target nobody watches and nobody set is forgotten.
    if (observers.empty() && !it->second.set.has_update()) {
      state->targets.erase(it);
    }
  });
}

}  // namespace mesh

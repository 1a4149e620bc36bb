#include "src/discovery/linkerd/policy_backends.h"

#include <utility>
#include <vector>

namespace mesh::internal::linkerd {

template <>
void PolicyBackends::Tell(EndpointObserver* observer,
                          const BackendPolicy* policy) {
  // Destinations ignore a policy sent again unchanged.
  observer->OnBackendPolicy(policy != nullptr ? *policy : BackendPolicy{});
}

template <>
void ForwardBackends::Tell(EndpointObserver* observer,
                           const Endpoint* endpoint) {
  // (Sent again unchanged, the Reset leaves the set as it is: an endpoint
  // set keeps its entries when an update changes nothing.)
  observer->OnEndpointUpdate(
      endpoint != nullptr
          ? EndpointUpdate::Reset({*endpoint})
          : EndpointUpdate::NoEndpoints(
                /*exists=*/false,
                "no outbound policy forwards to this backend any more"));
}

template <typename Value>
std::unique_ptr<typename BackendRegistry<Value>::Registration>
BackendRegistry<Value>::Register(const std::string& target,
                                 EndpointObserver* observer) {
  MutexLock lock(&mu_);
  Entry& entry = targets_[target];
  entry.observers.insert(observer);
  if (entry.value) Tell(observer, &*entry.value);
  return std::make_unique<Registration>(this, target, observer);
}

template <typename Value>
void BackendRegistry<Value>::Remove(const std::string& target,
                                    EndpointObserver* observer) {
  MutexLock lock(&mu_);
  auto it = targets_.find(target);
  if (it == targets_.end()) return;
  it->second.observers.erase(observer);
  EraseIfUnusedLocked(target);
}

template <typename Value>
void BackendRegistry<Value>::SetFromParent(
    const std::string& parent, const std::map<std::string, Value>& values) {
  MutexLock lock(&mu_);
  // What the parent set before and sets no more: the entries it is the
  // setter of (collected first: clearing may erase an entry).
  std::vector<std::string> dropped;
  for (const auto& [target, entry] : targets_) {
    if (entry.setter == parent && !values.count(target)) {
      dropped.push_back(target);
    }
  }
  for (const std::string& target : dropped) {
    SetLocked(target, parent, std::nullopt);
  }
  for (const auto& [backend, value] : values) {
    SetLocked(backend, parent, value);
  }
}

template <typename Value>
void BackendRegistry<Value>::ClearParent(const std::string& parent) {
  SetFromParent(parent, {});
}

template <typename Value>
void BackendRegistry<Value>::SetLocked(const std::string& target,
                                       const std::string& parent,
                                       const std::optional<Value>& value) {
  if (!value) {
    // Clears only what this parent set: another parent's stays.
    auto it = targets_.find(target);
    if (it == targets_.end() || it->second.setter != parent ||
        !it->second.value) {
      return;
    }
    it->second.value.reset();
    it->second.setter.clear();
    for (EndpointObserver* o : it->second.observers) Tell(o, nullptr);
    EraseIfUnusedLocked(target);
    return;
  }
  Entry& entry = targets_[target];
  entry.setter = parent;
  entry.value = value;
  for (EndpointObserver* o : entry.observers) Tell(o, &*value);
}

template <typename Value>
void BackendRegistry<Value>::EraseIfUnusedLocked(const std::string& target) {
  auto it = targets_.find(target);
  if (it != targets_.end() && it->second.observers.empty() &&
      !it->second.value) {
    targets_.erase(it);
  }
}

template <typename Value>
size_t BackendRegistry<Value>::EntriesForTest() const {
  MutexLock lock(&mu_);
  return targets_.size();
}

template class BackendRegistry<BackendPolicy>;
template class BackendRegistry<Endpoint>;

}  // namespace mesh::internal::linkerd

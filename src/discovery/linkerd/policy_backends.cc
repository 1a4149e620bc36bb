#include "src/discovery/linkerd/policy_backends.h"

#include <utility>
#include <vector>

namespace mesh::internal::linkerd {

std::unique_ptr<PolicyBackends::Registration> PolicyBackends::Register(
    const std::string& target, EndpointObserver* observer) {
  MutexLock lock(&mu_);
  Entry& entry = targets_[target];
  entry.observers.insert(observer);
  if (entry.policy) observer->OnBackendPolicy(*entry.policy);
  return std::make_unique<Registration>(this, target, observer);
}

void PolicyBackends::Remove(const std::string& target,
                            EndpointObserver* observer) {
  MutexLock lock(&mu_);
  auto it = targets_.find(target);
  if (it == targets_.end()) return;
  it->second.observers.erase(observer);
  EraseIfUnusedLocked(target);
}

void PolicyBackends::SetFromParent(
    const std::string& parent,
    const std::map<std::string, BackendPolicy>& policies) {
  MutexLock lock(&mu_);
  // What the parent set before and sets no more: the entries it is the
  // setter of (collected first: clearing may erase an entry).
  std::vector<std::string> dropped;
  for (const auto& [target, entry] : targets_) {
    if (entry.setter == parent && !policies.count(target)) {
      dropped.push_back(target);
    }
  }
  for (const std::string& target : dropped) {
    SetLocked(target, parent, std::nullopt);
  }
  for (const auto& [backend, policy] : policies) {
    SetLocked(backend, parent, policy);
  }
}

void PolicyBackends::ClearParent(const std::string& parent) {
  SetFromParent(parent, {});
}

void PolicyBackends::SetLocked(const std::string& target,
                               const std::string& parent,
                               const std::optional<BackendPolicy>& policy) {
  if (!policy) {
    // Clears only what this parent set: another parent's stays.
    auto it = targets_.find(target);
    if (it == targets_.end() || it->second.setter != parent ||
        !it->second.policy) {
      return;
    }
    it->second.policy.reset();
    it->second.setter.clear();
    for (EndpointObserver* o : it->second.observers) {
      o->OnBackendPolicy(BackendPolicy{});
    }
    EraseIfUnusedLocked(target);
    return;
  }
  Entry& entry = targets_[target];
  entry.setter = parent;
  entry.policy = policy;
  // Destinations ignore a policy sent again unchanged.
  for (EndpointObserver* o : entry.observers) o->OnBackendPolicy(*policy);
}

void PolicyBackends::EraseIfUnusedLocked(const std::string& target) {
  auto it = targets_.find(target);
  if (it != targets_.end() && it->second.observers.empty() &&
      !it->second.policy) {
    targets_.erase(it);
  }
}

size_t PolicyBackends::EntriesForTest() const {
  MutexLock lock(&mu_);
  return targets_.size();
}

}  // namespace mesh::internal::linkerd

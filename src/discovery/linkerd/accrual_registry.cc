#include "src/discovery/linkerd/accrual_registry.h"

#include <utility>

namespace mesh::internal::linkerd {
namespace {

BackendPolicy PolicyOf(const std::optional<BackendPolicy::Ejection>& e) {
  BackendPolicy p;
  p.ejection = e;
  return p;
}

}  // namespace

std::unique_ptr<AccrualRegistry::Registration> AccrualRegistry::Register(
    const std::string& target, EndpointObserver* observer) {
  MutexLock lock(&mu_);
  Entry& entry = targets_[target];
  entry.observers.insert(observer);
  if (entry.ejection) observer->OnBackendPolicy(PolicyOf(entry.ejection));
  return std::make_unique<Registration>(this, target, observer);
}

void AccrualRegistry::Remove(const std::string& target,
                             EndpointObserver* observer) {
  MutexLock lock(&mu_);
  auto it = targets_.find(target);
  if (it == targets_.end()) return;
  it->second.observers.erase(observer);
  EraseIfUnusedLocked(target);
}

void AccrualRegistry::SetFromParent(
    const std::string& parent, const std::vector<std::string>& backends,
    const std::optional<BackendPolicy::Ejection>& accrual) {
  MutexLock lock(&mu_);
  std::vector<std::string>& before = parents_[parent];
  std::set<std::string> now(backends.begin(), backends.end());
  for (const std::string& old : before) {
    if (!now.count(old)) SetLocked(old, parent, std::nullopt);
  }
  for (const std::string& b : now) SetLocked(b, parent, accrual);
  if (accrual) {
    before.assign(now.begin(), now.end());
  } else {
    parents_.erase(parent);  // nothing of its own is set
  }
}

void AccrualRegistry::ClearParent(const std::string& parent) {
  SetFromParent(parent, {}, std::nullopt);
}

void AccrualRegistry::SetLocked(
    const std::string& target, const std::string& parent,
    const std::optional<BackendPolicy::Ejection>& ejection) {
  if (!ejection) {
    // Clears only what this parent set: another parent's stays.
    auto it = targets_.find(target);
    if (it == targets_.end() || it->second.setter != parent ||
        !it->second.ejection) {
      return;
    }
    it->second.ejection.reset();
    it->second.setter.clear();
    for (EndpointObserver* o : it->second.observers) {
      o->OnBackendPolicy(BackendPolicy{});
    }
    EraseIfUnusedLocked(target);
    return;
  }
  Entry& entry = targets_[target];
  entry.setter = parent;
  entry.ejection = ejection;
  // Destinations ignore a policy sent again unchanged.
  for (EndpointObserver* o : entry.observers) {
    o->OnBackendPolicy(PolicyOf(entry.ejection));
  }
}

void AccrualRegistry::EraseIfUnusedLocked(const std::string& target) {
  auto it = targets_.find(target);
  if (it != targets_.end() && it->second.observers.empty() &&
      !it->second.ejection) {
    targets_.erase(it);
  }
}

size_t AccrualRegistry::EntriesForTest() const {
  MutexLock lock(&mu_);
  return targets_.size();
}

}  // namespace mesh::internal::linkerd

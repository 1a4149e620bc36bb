// AccrualRegistry: the ejection each Linkerd target's endpoints take from the
// failure accrual of the outbound policies that route to it. linkerd2-proxy
// breaks circuits per endpoint of every backend a parent's routes send to;
// here a policy (its parent, the watched target) sets the ejection of each
// backend its routes name, the last parent to set a backend wins, and a
// parent whose policy drops a backend or its accrual (or goes) clears what
// it set. The endpoint observers registered for a target get its policy at
// once and at each change, through OnBackendPolicy.
//
//   auto registration = registry.Register("books:8080", observer);
//   registry.SetFromParent("web:80", {"books:8080"}, ejection);
//
// Thread-safe. Observer calls are made under the registry's lock: once a
// Registration is destroyed, its observer gets no more.
#ifndef MESH_SRC_DISCOVERY_LINKERD_ACCRUAL_REGISTRY_H_
#define MESH_SRC_DISCOVERY_LINKERD_ACCRUAL_REGISTRY_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mesh/endpoint.h"
#include "src/base/mutex.h"

namespace mesh::internal::linkerd {

class AccrualRegistry {
 public:
  // Holds one observer's registration; unregisters it when destroyed.
  class Registration {
   public:
    Registration(AccrualRegistry* registry, std::string target,
                 EndpointObserver* observer)
        : registry_(registry),
          target_(std::move(target)),
          observer_(observer) {}
    ~Registration() { registry_->Remove(target_, observer_); }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    AccrualRegistry* const registry_;
    const std::string target_;
    EndpointObserver* const observer_;
  };

  // `observer` (which outlives the result) gets the target's policy now if
  // one is set, and each change until the result is destroyed.
  std::unique_ptr<Registration> Register(const std::string& target,
                                         EndpointObserver* observer);

  // `parent`'s policy routes to `backends` with `accrual` (unset: none).
  void SetFromParent(const std::string& parent,
                     const std::vector<std::string>& backends,
                     const std::optional<BackendPolicy::Ejection>& accrual);
  // `parent` has no policy any more: what it set is cleared.
  void ClearParent(const std::string& parent);

  // Targets with an observer or an ejection: for tests of the bounds.
  size_t EntriesForTest() const;

 private:
  struct Entry {
    std::set<EndpointObserver*> observers;
    std::optional<BackendPolicy::Ejection> ejection;
    std::string setter;  // the parent that set `ejection`
  };

  void Remove(const std::string& target, EndpointObserver* observer);
  // Sets (or clears) the target's ejection as `parent`'s and tells its
  // observers when it changed.
  void SetLocked(const std::string& target, const std::string& parent,
                 const std::optional<BackendPolicy::Ejection>& ejection)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseIfUnusedLocked(const std::string& target)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::map<std::string, Entry> targets_ ABSL_GUARDED_BY(mu_);
  // The backends each parent set last.
  std::map<std::string, std::vector<std::string>> parents_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal::linkerd

#endif  // MESH_SRC_DISCOVERY_LINKERD_ACCRUAL_REGISTRY_H_

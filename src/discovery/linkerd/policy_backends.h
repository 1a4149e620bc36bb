// PolicyBackends: the backend policy each Linkerd target's endpoints take
// from the outbound policies that route to it — the failure accrual of the
// parent's protocol (as an ejection) and the backend's own Peak-EWMA
// tuning. linkerd2-proxy builds a balancer per backend of every parent; here
// a policy (its parent, the watched target) sets the policy of each backend
// its routes name, the last parent to set a backend wins, and a parent whose
// policy drops a backend (or goes) clears what it set. The endpoint
// observers registered for a target get its policy at once and at each
// change, through OnBackendPolicy.
//
//   auto registration = backends.Register("books:8080", observer);
//   backends.SetFromParent("web:80", {{"books:8080", policy}});
//
// Thread-safe. Observer calls are made under the registry's lock: once a
// Registration is destroyed, its observer gets no more.
#ifndef MESH_SRC_DISCOVERY_LINKERD_POLICY_BACKENDS_H_
#define MESH_SRC_DISCOVERY_LINKERD_POLICY_BACKENDS_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "mesh/endpoint.h"
#include "src/base/mutex.h"

namespace mesh::internal::linkerd {

class PolicyBackends {
 public:
  // Holds one observer's registration; unregisters it when destroyed.
  class Registration {
   public:
    Registration(PolicyBackends* registry, std::string target,
                 EndpointObserver* observer)
        : registry_(registry),
          target_(std::move(target)),
          observer_(observer) {}
    ~Registration() { registry_->Remove(target_, observer_); }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    PolicyBackends* const registry_;
    const std::string target_;
    EndpointObserver* const observer_;
  };

  // `observer` (which outlives the result) gets the target's policy now if
  // one is set, and each change until the result is destroyed.
  std::unique_ptr<Registration> Register(const std::string& target,
                                         EndpointObserver* observer);

  // `parent`'s policy sets these backends' policies (authority → policy);
  // the backends it set before and not now are cleared.
  void SetFromParent(const std::string& parent,
                     const std::map<std::string, BackendPolicy>& policies);
  // `parent` has no policy any more: what it set is cleared.
  void ClearParent(const std::string& parent);

  // Targets with an observer or a policy: for tests of the bounds.
  size_t EntriesForTest() const;

 private:
  struct Entry {
    std::set<EndpointObserver*> observers;
    std::optional<BackendPolicy> policy;
    std::string setter;  // the parent that set `policy`
  };

  void Remove(const std::string& target, EndpointObserver* observer);
  // Sets (or, nullopt, clears if `parent` set it) the target's policy and
  // tells its observers.
  void SetLocked(const std::string& target, const std::string& parent,
                 const std::optional<BackendPolicy>& policy)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseIfUnusedLocked(const std::string& target)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::map<std::string, Entry> targets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal::linkerd

#endif  // MESH_SRC_DISCOVERY_LINKERD_POLICY_BACKENDS_H_

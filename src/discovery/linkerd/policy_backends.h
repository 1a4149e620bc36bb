// BackendRegistry: what each Linkerd backend takes from the outbound
// policies that route to it. linkerd2-proxy builds a balancer per backend
// of every parent; here a policy (its parent, the watched target) sets the
// value of each backend its routes name, the last parent to set a backend
// wins, and a parent whose policy drops a backend (or goes) clears what it
// set. The endpoint observers registered for a backend get its value at
// once and at each change. Two kinds:
//  - PolicyBackends: a balanced backend's BackendPolicy (the failure
//    accrual of the parent's protocol as an ejection, its Peak-EWMA tuning,
//    its queue), by DestinationGet path, through OnBackendPolicy (cleared:
//    the default policy);
//  - ForwardBackends: a `forward` backend's one endpoint, by its cluster
//    name, as a Reset of one endpoint (cleared: no endpoints, for good).
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

template <typename Value>
class BackendRegistry {
 public:
  // Holds one observer's registration; unregisters it when destroyed.
  class Registration {
   public:
    Registration(BackendRegistry* registry, std::string target,
                 EndpointObserver* observer)
        : registry_(registry),
          target_(std::move(target)),
          observer_(observer) {}
    ~Registration() { registry_->Remove(target_, observer_); }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    BackendRegistry* const registry_;
    const std::string target_;
    EndpointObserver* const observer_;
  };

  // `observer` (which outlives the result) gets the target's value now if
  // one is set, and each change until the result is destroyed.
  std::unique_ptr<Registration> Register(const std::string& target,
                                         EndpointObserver* observer);

  // `parent`'s policy sets these backends' values (backend → value); the
  // backends it set before and not now are cleared.
  void SetFromParent(const std::string& parent,
                     const std::map<std::string, Value>& values);
  // `parent` has no policy any more: what it set is cleared.
  void ClearParent(const std::string& parent);

  // Targets with an observer or a value: for tests of the bounds.
  size_t EntriesForTest() const;

 private:
  struct Entry {
    std::set<EndpointObserver*> observers;
    std::optional<Value> value;
    std::string setter;  // the parent that set `value`
  };

  // Tells `observer` the backend's value (null: cleared).
  static void Tell(EndpointObserver* observer, const Value* value);
  void Remove(const std::string& target, EndpointObserver* observer);
  // Sets (or, nullopt, clears if `parent` set it) the target's value and
  // tells its observers.
  void SetLocked(const std::string& target, const std::string& parent,
                 const std::optional<Value>& value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseIfUnusedLocked(const std::string& target)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::map<std::string, Entry> targets_ ABSL_GUARDED_BY(mu_);
};

using PolicyBackends = BackendRegistry<BackendPolicy>;
using ForwardBackends = BackendRegistry<Endpoint>;

}  // namespace mesh::internal::linkerd

#endif  // MESH_SRC_DISCOVERY_LINKERD_POLICY_BACKENDS_H_

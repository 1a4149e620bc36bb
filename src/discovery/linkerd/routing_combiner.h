// RoutingCombiner: one target's routes from its two Linkerd sources — the
// service profile (Destination.GetProfile) and the outbound policy
// (OutboundPolicies.Watch) — combined as linkerd2-proxy combines them, into
// the one ServiceConfig the target's observer gets:
//  - a profile with routes or a traffic split overrides the policy;
//  - otherwise the policy's routes apply (with the profile's direct
//    endpoint, if it names one);
//  - with no policy (none watched yet, none answered, or the controller
//    said NotFound or Unimplemented: OnPolicyGone), the profile alone, as
//    before policies existed.
// Each event delivers the config in force if it changed what is known.
// While a policy is watched, nothing is delivered until both have
// answered (or the profile overrides): the target's calls wait for their
// routes (the source requires them) rather than take a route the other
// answer would change. Either stream's first failure lets the other route
// meanwhile; an error reaches the observer only once a config has, or when
// neither stream can answer (so a refused policy connection does not fail
// calls that the profile, still on its way, will route).
//
//   RoutingCombiner combiner(observer);
//   combiner.OnProfile(ConvertProfile(profile).config);  // from one stream
//   combiner.OnPolicy(*ConvertPolicy(policy, target));    // from the other
//
// Thread-safe: the two streams call it from their own threads; the
// observer's calls are serialized, and none is made under the lock that
// Report() takes.
#ifndef MESH_SRC_DISCOVERY_LINKERD_ROUTING_COMBINER_H_
#define MESH_SRC_DISCOVERY_LINKERD_ROUTING_COMBINER_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "mesh/service_config.h"
#include "src/base/mutex.h"
#include "src/discovery/linkerd/convert_policy.h"

namespace mesh::internal::linkerd {

class RoutingCombiner {
 public:
  // `observer` outlives this.
  explicit RoutingCombiner(ServiceConfigObserver* observer)
      : observer_(observer) {}

  void OnProfile(ServiceConfig config);
  // The profile stream ended or a profile was rejected: the last one stays.
  void OnProfileError(const absl::Status& status);
  // The controller will send no profile (the target is not a mesh service):
  // an empty one stands for it.
  void OnProfileGone(const absl::Status& why);
  void OnPolicy(PolicyConversion policy);
  // A policy was refused or its stream ended (it reconnects): the last good
  // policy stays in force.
  void OnPolicyError(const absl::Status& status);
  // The controller has no policy for the target, for good (NotFound,
  // Unimplemented, …): the profile alone routes from now on.
  void OnPolicyGone(const absl::Status& why);

  // What routes the target now, for Describe.
  struct Report {
    // "policy", "profile", "default" (neither has routes for it yet),
    // or "" (nothing has come).
    std::string routing;
    // The policy: "watching", "received", "none (<why>)", or "" when no
    // policy is watched.
    std::string policy_state;
    std::string policy_parent;    // PolicyConversion::parent
    std::string policy_protocol;  // PolicyConversion::protocol
    std::string policy_error;     // the last refusal or stream end
  };
  Report GetReport() const;
  // Says a policy is being watched (before any answer).
  void SetWatching();

 private:
  // The config in force and what routes it, from what is known.
  std::optional<ServiceConfig> Effective(std::string* routing) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Delivers Effective() to the observer. Under deliver_mu_ only.
  void Deliver() ABSL_EXCLUSIVE_LOCKS_REQUIRED(deliver_mu_);
  // Whether a stream's error goes on to the observer now.
  bool ForwardError() const ABSL_LOCKS_EXCLUDED(mu_);

  ServiceConfigObserver* const observer_;
  // Held across an observer call: its calls come one at a time, in the
  // order of the events.
  Mutex deliver_mu_;
  mutable Mutex mu_ ABSL_ACQUIRED_AFTER(deliver_mu_);
  std::optional<ServiceConfig> profile_ ABSL_GUARDED_BY(mu_);
  std::optional<PolicyConversion> policy_ ABSL_GUARDED_BY(mu_);
  bool watching_ ABSL_GUARDED_BY(mu_) = false;
  bool policy_failed_ ABSL_GUARDED_BY(mu_) = false;  // a stream ended once
  bool profile_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool delivered_ ABSL_GUARDED_BY(mu_) = false;  // a config went out
  std::string gone_ ABSL_GUARDED_BY(mu_);        // why no policy, if so
  std::string policy_error_ ABSL_GUARDED_BY(mu_);
  std::string routing_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal::linkerd

#endif  // MESH_SRC_DISCOVERY_LINKERD_ROUTING_COMBINER_H_

// What the local control plane serves over Linkerd's OutboundPolicies API,
// made from its configuration (config.h, policy_config.h): a target's
// policy, or Linkerd's default policy for a target without one.
//
//   absl::StatusOr<out::OutboundPolicy> p = PolicyFor(config,
//   "books.local:7001");
//
// Pure functions; thread-safe.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_POLICY_RESOURCES_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_POLICY_RESOURCES_H_

#include <string>

#include "absl/status/statusor.h"
#include "linkerd/outbound.pb.h"
#include "tools/mesh-control-plane/config.h"

namespace mesh::controlplane {

// The policy for the target `authority` ("name:port"): the parent is a
// Service named by the host's first label in the namespace of its second
// ("default" without one); routes are Gateway API HTTPRoutes or GRPCRoutes
// in that namespace; a backend balances the endpoints Destination.Get
// gives for its authority (Peak-EWMA, default_rtt 30 ms, decay 10 s; a queue
// of 100, fail-fast 3 s). A target without a policy gets Linkerd's default:
// protocol detection, one route sending every request to the target.
// NOT_FOUND for a target the config does not name.
absl::StatusOr<io::linkerd::proxy::outbound::OutboundPolicy> PolicyFor(
    const Config& config, const std::string& authority);

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_POLICY_RESOURCES_H_

// What the local control plane serves over Linkerd's Destination API, made
// from its configuration (config.h): an endpoint as a WeightedAddr (Get),
// a target's profile as a DestinationProfile (GetProfile).
//
//   dst::DestinationProfile p = ProfileFor(config, "books.local:7001");
//
// Pure functions; thread-safe.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_LINKERD_RESOURCES_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_LINKERD_RESOURCES_H_

#include <string>

#include "linkerd/destination.pb.h"
#include "tools/mesh-control-plane/config.h"

namespace mesh::controlplane {

// `method` as Linkerd's wire spells it: a registered method ("GET", …) by
// its enum value, any other by name.
void SetHttpMethod(const std::string& method,
                   io::linkerd::proxy::http_types::HttpMethod* out);

// An endpoint of a Get answer: address, weight, labels, identity, h2.
io::linkerd::proxy::destination::WeightedAddr ToWire(const EndpointSpec& e);
// The profile for `target`: its own, or Linkerd's default (no routes; budget
// 0.2, 10/s, 10 s; fully_qualified_name = the target's name). Routes that
// only xDS can carry (header conditions, backends of their own) are left
// out.
io::linkerd::proxy::destination::DestinationProfile ProfileFor(
    const Config& config, const std::string& target);

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_LINKERD_RESOURCES_H_

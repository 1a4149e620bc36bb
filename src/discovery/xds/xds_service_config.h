// From a listener and its route configuration to the ServiceConfig the route
// engine compiles for one target: the virtual host for the target's
// authority, its routes in order with their clusters, timeouts, retries and
// faults.
//
//   absl::StatusOr<ServiceConfig> c =
//       BuildServiceConfig(listener, route_config, "echo.local:7000");
//
// Limits: only the listener's first fault filter applies (a second one and
// its overrides are ignored); weighted clusters' own filter overrides are
// not read.
//
// Pure functions: thread-safe.
#ifndef MESH_SRC_DISCOVERY_XDS_XDS_SERVICE_CONFIG_H_
#define MESH_SRC_DISCOVERY_XDS_XDS_SERVICE_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mesh/service_config.h"
#include "src/discovery/xds/xds_resources.h"

namespace mesh::internal::xds {

// The virtual host whose domains match `authority` best, as gRPC and Envoy
// choose (gRFC A27/A28): an exact domain, else the longest "*suffix", else
// the longest "prefix*", else "*"; compared without regard to ASCII case.
// A wildcard stands for one character or more. `authority` is matched as
// given, port included ("echo.local" does not match "echo.local:7000").
// A domain with any other '*' (in the middle, or two) never matches. Among
// equally good domains the first virtual host wins. Null if none matches.
const VirtualHostResource* SelectVirtualHost(const RouteConfigResource& config,
                                             absl::string_view authority);

// The ServiceConfig for calls to `authority` through `listener`, whose
// routes are `route_config` (the inline one or the RDS resource). Each route
// of the chosen virtual host, in order, keeps its match, name and retry
// policy and gets: its clusters as backends (WeightedBackend::cluster); as
// timeout its max_stream_duration, else the listener's (zero: none); the
// fault of the listener's first fault filter, replaced by the virtual
// host's then the route's config for that filter name (no fault filter: no
// fault, overrides ignored). A route with an unsupported action gets no
// backends and a fault that aborts every call with UNAVAILABLE, its message
// naming the route configuration, the route (its name, else "#index") and
// the action. fully_qualified_name is the authority's host; no retry budget.
// UNAVAILABLE naming the route configuration, the authority and (at most
// ten of) the domains when no virtual host matches.
absl::StatusOr<ServiceConfig> BuildServiceConfig(
    const ListenerResource& listener, const RouteConfigResource& route_config,
    absl::string_view authority);

// The cluster names `config`'s routes and its split send to
// (WeightedBackend::cluster, empty ones left out), sorted, each once.
std::vector<std::string> ClustersOf(const ServiceConfig& config);

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_XDS_SERVICE_CONFIG_H_

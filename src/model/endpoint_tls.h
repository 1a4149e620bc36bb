// How the default transport reaches an endpoint, in Linkerd's labels for
// metrics and tap: `tls="true"` with `server_id` (the identity its
// certificate was checked against), or `tls="no_identity"` with a
// `no_tls_reason`: "not_provided_by_service_discovery" (the endpoint has no
// identity) or "disabled" (the Mesh has no identity of its own, or a
// transport of the application's). An endpoint with an EndpointTls (xDS) is
// TLS with or without the Mesh's identity; server_id is its tls_identity.
//
//   TlsLabels(endpoint, /*identity_in_use=*/true, /*default_transport=*/true)
//     // {{"tls", "true"}, {"server_id", "web.ns.serviceaccount..."}}
//
// Thread-safe (a pure function).
#ifndef MESH_SRC_MODEL_ENDPOINT_TLS_H_
#define MESH_SRC_MODEL_ENDPOINT_TLS_H_

#include <string>
#include <utility>
#include <vector>

#include "mesh/endpoint.h"

namespace mesh::internal {

using LabelPairs = std::vector<std::pair<std::string, std::string>>;

// `default_transport`: mesh's own transport, which honours Endpoint::tls
// (an application's transport does not).
inline LabelPairs TlsLabels(const Endpoint& endpoint, bool identity_in_use,
                            bool default_transport) {
  if (endpoint.tls != nullptr && default_transport) {
    if (endpoint.tls_identity.empty()) return {{"tls", "true"}};
    return {{"tls", "true"}, {"server_id", endpoint.tls_identity}};
  }
  if (!identity_in_use) {
    return {{"tls", "no_identity"}, {"no_tls_reason", "disabled"}};
  }
  if (endpoint.tls_identity.empty()) {
    return {{"tls", "no_identity"},
            {"no_tls_reason", "not_provided_by_service_discovery"}};
  }
  return {{"tls", "true"}, {"server_id", endpoint.tls_identity}};
}

}  // namespace mesh::internal

#endif  // MESH_SRC_MODEL_ENDPOINT_TLS_H_

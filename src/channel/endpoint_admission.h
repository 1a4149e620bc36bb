// Endpoint admission: which endpoints of a discovery update a destination
// takes, given what the Mesh's identity settings and transport can carry
// out. An update whose control-plane TLS cannot work (a server-name matcher
// with an empty value or a bad regex) is rejected whole; with
// require_identity, endpoints without an identity are left out; with an
// application's transport (MeshOptions::transport_factory), endpoints that
// carry the control plane's TLS are left out, since that transport would
// call them in plaintext.
//
//   AdmittedUpdate a = AdmitEndpoints(update, tls);
//   if (!a.rejected.ok()) { /* keep the set, log a.rejected */ }
//   else apply(a.filtered ? a.kept : update);
//
// Pure functions of their arguments; thread-safe.
#ifndef MESH_SRC_CHANNEL_ENDPOINT_ADMISSION_H_
#define MESH_SRC_CHANNEL_ENDPOINT_ADMISSION_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mesh/discovery.h"
#include "mesh/endpoint.h"

namespace mesh::internal {

// What the Mesh's identity means for a destination's endpoints.
struct DestinationTls {
  // The default transport with MeshOptions::identity: endpoints with an
  // identity are reached over mutual TLS (metrics and tap say so).
  bool identity_in_use = false;
  // MeshOptions::identity.require_identity: endpoints without an identity
  // are left out of the set (logged).
  bool require_identity = false;
  // Mesh's own transport (not MeshOptions::transport_factory's), which
  // honours Endpoint::tls.
  bool default_transport = true;
};

struct AdmittedUpdate {
  // Not OK: the update is rejected whole, naming the endpoint and matcher.
  absl::Status rejected;
  // False: the update is taken as it came (`kept` is empty).
  bool filtered = false;
  // The update without the endpoints left out (when `filtered`).
  EndpointUpdate kept;
  // The addresses left out, and why: "N endpoint(s) <reason>, e.g. ADDR"
  // (empty when none was).
  std::vector<std::string> left_out;
  std::string why;
};

// Decides on `update` (Reset and Add are looked at; other kinds, and
// updates whose endpoints are invalid, which the set itself rejects, pass
// unfiltered).
AdmittedUpdate AdmitEndpoints(const EndpointUpdate& update,
                              const DestinationTls& tls);

// OK, or the first EndpointTls of `endpoints` whose server-name matchers
// cannot work (an empty value, a bad regex), named. Each context once.
absl::Status ValidateEndpointTls(const std::vector<Endpoint>& endpoints);

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_ENDPOINT_ADMISSION_H_

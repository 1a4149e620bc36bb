// Identity: the workload's own certificate for mutual TLS to meshed
// endpoints (MeshOptions::identity).
//
// With an identity set, every endpoint that discovery gives an identity
// (Endpoint::tls_identity: Linkerd's DNS-like names and SPIFFE URIs, or
// code's) is reached over mutual TLS: mesh presents this certificate,
// verifies the server's chain against the trust roots, and refuses a server
// whose certificate does not carry the expected identity (a DNS SAN for a
// DNS-like name, also sent as the server name; a URI SAN for
// "scheme://..."). Endpoints without an identity stay plaintext unless
// require_identity is set. Used by the default transport only (with
// MeshOptions::transport_factory, Mesh::Create refuses an identity).
//
//   mesh::IdentityOptions id;
//   id.cert_chain_file = "/var/run/secrets/mesh/cert.pem";
//   id.private_key_file = "/var/run/secrets/mesh/key.pem";
//   id.trust_roots_file = "/var/run/secrets/mesh/ca.pem";
//   options.identity = id;  // MeshOptions
//
// Files are read again every refresh_interval: a replaced certificate is
// used by new connections without a restart (connections already made keep
// theirs); a replacement that is not valid (unparsable, key not matching,
// expired) is refused with a log line naming the file and the reason, and
// the identity in use is kept.
//
// Plain value type: thread-compatible.
#ifndef MESH_TLS_H_
#define MESH_TLS_H_

#include <string>

#include "absl/time/time.h"

namespace mesh {

struct IdentityOptions {
  // PEM files: the workload's certificate chain (leaf first), its private
  // key, and the CA certificates that servers' chains must verify against.
  // Watched (see above).
  std::string cert_chain_file;
  std::string private_key_file;
  std::string trust_roots_file;
  // PEM in memory, for any of the three whose file is empty. Never reread.
  std::string cert_chain_pem;
  std::string private_key_pem;
  std::string trust_roots_pem;
  // How often the files are read again; at least 10 ms.
  absl::Duration refresh_interval = absl::Seconds(60);
  // Leave endpoints that discovery gives no identity out of every
  // destination's set (logged) instead of calling them in plaintext.
  bool require_identity = false;

  // Whether an identity is configured at all (a chain, file or PEM).
  bool enabled() const {
    return !cert_chain_file.empty() || !cert_chain_pem.empty();
  }
};

}  // namespace mesh

#endif  // MESH_TLS_H_

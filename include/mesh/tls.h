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
// Files are watched: a replaced certificate is used by new connections
// without a restart (connections already made keep theirs), within a second
// of being written where their directories can be watched (Linux inotify;
// a Kubernetes volume's `..data` symlink swap too), else at the next
// refresh_interval; a replacement that is not valid (unparsable, key not
// matching, expired) is refused with a log line naming the file and the
// reason, and the identity in use is kept.
//
// Plain value type: thread-compatible.
#ifndef MESH_TLS_H_
#define MESH_TLS_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "mesh/export.h"

namespace mesh {

struct MESH_EXPORT IdentityOptions {
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
  // How often the files are read again whatever the watch says (the
  // fallback where directories cannot be watched); at least 10 ms.
  absl::Duration refresh_interval = absl::Seconds(60);
  // Leave endpoints that discovery gives no identity out of every
  // destination's set (logged) instead of calling them in plaintext.
  bool require_identity = false;

  // Whether an identity is configured at all (a chain, file or PEM).
  bool enabled() const {
    return !cert_chain_file.empty() || !cert_chain_pem.empty();
  }

  friend MESH_EXPORT bool operator==(const IdentityOptions& a,
                                     const IdentityOptions& b);
};

// One accepted name for a server (EndpointTls::server_names): the server's
// certificate must carry a subject alternative name of `san_type` that
// matches `value` as `kind` says. An exact match also accepts a wildcard
// DNS name ("*.example.com" for "a.example.com").
struct MESH_EXPORT ServerNameMatcher {
  enum class Kind { kExact, kPrefix, kSuffix, kContains, kRegex };
  enum class SanType { kAny, kDns, kUri, kEmail, kIp };
  Kind kind = Kind::kExact;
  std::string value;         // kRegex: RE2, matched against the whole name
  bool ignore_case = false;  // ASCII; not with kRegex
  SanType san_type = SanType::kAny;

  friend MESH_EXPORT bool operator==(const ServerNameMatcher& a,
                                     const ServerNameMatcher& b);
};

// TLS to an endpoint as a control plane describes it beyond one identity
// (xDS: a cluster's UpstreamTlsContext with the bootstrap's certificate
// providers). Set on Endpoint::tls, it replaces MeshOptions::identity and
// Endpoint::tls_identity for that endpoint: mesh presents `certificates`'
// chain (none: no client certificate), verifies the server's chain against
// its roots, and accepts a server whose certificate matches one of
// `server_names` (none: any certificate those roots sign). Files are read
// again every refresh_interval like MeshOptions::identity's.
struct MESH_EXPORT EndpointTls {
  // trust_roots_* required; cert_chain_* and private_key_* together or
  // not at all. require_identity is not used here.
  IdentityOptions certificates;
  std::vector<ServerNameMatcher> server_names;
  // The server name sent in the handshake (SNI); none when empty.
  std::string sni;

  friend MESH_EXPORT bool operator==(const EndpointTls& a,
                                     const EndpointTls& b);
};

}  // namespace mesh

#endif  // MESH_TLS_H_

// Who may see the admin page over mutual TLS (MeshOptions::admin_tls): a
// client whose certificate chains to the page's client CA and names an
// allowed identity, wherever it connects from. The chain is checked by
// GnuTLS (libmicrohttpd's TLS library) against the CA the server was given;
// the names are read with the TLS API the rest of mesh uses (src/tls), and
// compared as the tap server compares them.
//
// Thread-safe (pure function over one connection's session).
#ifndef MESH_SRC_ADMIN_ADMIN_PEER_CHECK_H_
#define MESH_SRC_ADMIN_ADMIN_PEER_CHECK_H_

#include <gnutls/gnutls.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace mesh::internal {

// OK when the session's client certificate is trusted and carries one of
// `allowed` (exactly: a SAN URI or DNS name, or the subject CN). Else
// PERMISSION_DENIED saying why: no certificate, not trusted (GnuTLS's
// reason: "The certificate issuer is unknown", "expired", ...), or the
// identities it names, none allowed.
absl::Status CheckAdminPeer(gnutls_session_t session,
                            const std::vector<std::string>& allowed);

}  // namespace mesh::internal

#endif  // MESH_SRC_ADMIN_ADMIN_PEER_CHECK_H_

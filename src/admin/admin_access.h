// Who may see the admin page: peers on this host only (127.0.0.1, ::1,
// and 127.0.0.1 mapped into IPv6), as the tap server without TLS.
//
// Pure functions; thread-safe.
#ifndef MESH_SRC_ADMIN_ADMIN_ACCESS_H_
#define MESH_SRC_ADMIN_ADMIN_ACCESS_H_

#include <sys/socket.h>

#include <string>

namespace mesh::internal {

// Whether `peer` (null: unknown) may see the page.
bool IsLocalPeer(const sockaddr* peer);

// `peer`'s address as text ("10.0.0.7", "fd00::1"; "(unknown)").
std::string PeerText(const sockaddr* peer);

}  // namespace mesh::internal

#endif  // MESH_SRC_ADMIN_ADMIN_ACCESS_H_

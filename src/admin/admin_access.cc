#include "src/admin/admin_access.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace mesh::internal {

bool IsLocalPeer(const sockaddr* peer) {
  if (peer == nullptr) return false;
  if (peer->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(peer);
    return ntohl(in->sin_addr.s_addr) == INADDR_LOOPBACK;
  }
  if (peer->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(peer);
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      const uint8_t* b = in6->sin6_addr.s6_addr;
      return b[12] == 127 && b[13] == 0 && b[14] == 0 && b[15] == 1;
    }
  }
  return false;
}

std::string PeerText(const sockaddr* peer) {
  if (peer == nullptr) return "(unknown)";
  char text[INET6_ADDRSTRLEN] = {};
  if (peer->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(peer)->sin_addr,
              text, sizeof(text));
  } else if (peer->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(peer)->sin6_addr,
              text, sizeof(text));
  }
  return text;
}

}  // namespace mesh::internal

// AdminServer: the in-process admin page (MeshOptions::admin_address), an
// HTTP/1.1 server on libmicrohttpd, the small, long-kept C server that
// Debian ships (libmicrohttpd-dev): it parses requests, bounds each
// connection's memory, closes idle connections and caps their number, on
// threads of its own. gRPC's public API has no HTTP/1.1 server.
//
//   AdminSources sources{describe, metrics, tap};
//   auto server = AdminServer::Start("127.0.0.1:0", std::move(sources));
//   (*server)->address();  // "127.0.0.1:41873"
//
// Serves peers on this host only (127.0.0.1, ::1): others get 403 naming
// them. With AdminTls, over mutual TLS instead, to clients whose
// certificate names an allowed identity, wherever they are (others get 403
// saying why: admin_peer_check.h). What it serves: admin_router.h. Thread-safe;
// destroying it ends every connection (tap streams within a fraction of a
// second) and waits for its threads.
#ifndef MESH_SRC_ADMIN_ADMIN_SERVER_H_
#define MESH_SRC_ADMIN_ADMIN_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "src/admin/admin_router.h"

namespace mesh::internal {

// Mutual TLS for the page (MeshOptions::admin_tls), PEM. Empty
// cert_chain_pem: plain HTTP, to this host only.
struct AdminTls {
  std::string cert_chain_pem;
  std::string private_key_pem;
  // What client certificates must chain to.
  std::string client_ca_pem;
  std::vector<std::string> allowed_identities;

  bool enabled() const { return !cert_chain_pem.empty(); }
};

class AdminServer {
 public:
  // `address` is "ip:port" ("127.0.0.1:0" picks a port; "[::1]:0";
  // "0.0.0.0:9990" listens everywhere but still serves this host only).
  // INVALID_ARGUMENT naming the address when it does not parse or cannot
  // be bound, or when TLS is asked for and its certificate, key or CA is
  // refused by the TLS library.
  static absl::StatusOr<std::unique_ptr<AdminServer>> Start(
      const std::string& address, AdminSources sources,
      const AdminLimits& limits = {}, AdminTls tls = {});
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // "ip:port" as bound (the port picked when 0 was asked).
  const std::string& address() const;
  // "https" with AdminTls, else "http".
  const char* scheme() const;

  struct State;

 private:
  explicit AdminServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_ADMIN_ADMIN_SERVER_H_

// ObserveServer serves Linkerd's tap API (io.linkerd.proxy.tap.Tap/Observe)
// from a TapHub: each Observe call becomes a subscription, and its events are
// streamed back until the limit's last exchange ends, the client goes away,
// or the server stops. `linkerd viz tap` and `mesh-tap` are its clients.
//
// Access: without TLS, only peers on 127.0.0.1 or ::1 (the same host) are
// served. With TLS (TapTlsOptions), mutual TLS: a client must present a
// certificate signed by the configured CA, and is served iff one of its
// identities (SAN URIs and DNS names, subject CN) is allowed, wherever it
// connects from. Everyone else gets UNAUTHENTICATED. A subscriber that reads
// too slowly loses events; their count is sent in the trailing metadata
// `mesh-tap-dropped-events`. Streams are served with gRPC's callback API: an
// open stream holds no thread, whether its client reads or not; the hub's
// subscription cap bounds how many are open (RESOURCE_EXHAUSTED beyond it).
//
// Other services given to Start (CSDS, DiscoverySource::StatusService) are
// served on the same port under the same rule: every call of a peer it
// refuses, to any method, is cancelled with UNAUTHENTICATED as it arrives,
// before its handler can answer.
//
//   auto server = ObserveServer::Start("127.0.0.1:4190", hub, tls, {csds});
//   int port = (*server)->port();
//
// Thread-safe. The destructor ends the streams in flight and waits for their
// handlers.
#ifndef MESH_SRC_TAP_OBSERVE_SERVER_H_
#define MESH_SRC_TAP_OBSERVE_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mesh/tap.h"
#include "src/tap/tap_hub.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace mesh::internal {

class ObserveServer {
 public:
  // Listens on `address` ("host:port"; port 0 picks one), with mutual TLS
  // when tls.cert_chain_pem is set (the caller has validated `tls`: key, CA
  // and allowed identities present), serving Observe and `services` (each
  // once; they must not be null, nor serve a method twice), which it keeps
  // until it is destroyed. UNAVAILABLE naming the address if it cannot
  // listen (or the PEM is unusable, or a method is served twice).
  static absl::StatusOr<std::unique_ptr<ObserveServer>> Start(
      const std::string& address, std::shared_ptr<TapHub> hub,
      const TapTlsOptions& tls = {},
      std::vector<std::shared_ptr<grpc::Service>> services = {});
  ~ObserveServer();
  ObserveServer(const ObserveServer&) = delete;
  ObserveServer& operator=(const ObserveServer&) = delete;

  // The port it listens on.
  int port() const { return port_; }

 private:
  class Service;
  ObserveServer() = default;

  std::unique_ptr<Service> service_;
  std::vector<std::shared_ptr<grpc::Service>> services_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// Whether a gRPC peer string ("ipv4:127.0.0.1:5000", "ipv6:[::1]:5000") is
// on this host: 127.0.0.1, ::1, or ::ffff:127.0.0.1. Other 127/8 addresses
// count as remote (tests use 127.0.0.2 as a remote peer).
bool IsLocalPeer(absl::string_view peer);

// Whether any of the identities a TLS client `presented` is in `allowed`
// (exact, case-sensitive comparison). False when either is empty.
bool IsAllowedIdentity(const std::vector<std::string>& presented,
                       const std::vector<std::string>& allowed);

}  // namespace mesh::internal

#endif  // MESH_SRC_TAP_OBSERVE_SERVER_H_

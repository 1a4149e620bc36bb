// GrpcTransport: the default Transport (see mesh/transport.h).
//
// With an identity (MeshOptions::identity), an endpoint that has a
// tls_identity is reached over mutual TLS checked against that identity
// (src/tls/tls_credentials.h); its channel belongs to (address, identity,
// version of the workload's certificate), so a changed identity or a
// rotated certificate makes a new connection while calls on the old one
// finish. Endpoints without an identity are plaintext, or refused when the
// identity requires one. An endpoint with an EndpointTls (xDS clusters) is
// reached as it says, with its own certificates, whatever the Mesh's.
//
// Thread-safe. Every call in flight is registered so that Shutdown() can
// cancel it and wait for its callback.
#ifndef MESH_SRC_TRANSPORT_GRPC_TRANSPORT_H_
#define MESH_SRC_TRANSPORT_GRPC_TRANSPORT_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "mesh/transport.h"
#include "src/base/mutex.h"
#include "src/model/address_set.h"
#include "src/tls/identity_store.h"
#include "src/tls/tls_credentials.h"

namespace mesh::internal {

class GrpcTransport final : public Transport {
 public:
  // `identity` null: plaintext to every endpoint without an EndpointTls.
  // `endpoint_stores`: where EndpointTls certificates are kept (MeshCore's
  // are shared and refreshed on its timer thread); null: the transport's
  // own, never read again.
  explicit GrpcTransport(
      const GrpcTransportOptions& options,
      std::shared_ptr<IdentityStore> identity = nullptr,
      std::shared_ptr<EndpointStores> endpoint_stores = nullptr);
  ~GrpcTransport() override;

  void Send(const Endpoint& endpoint, TransportRequest request,
            Callback done) override;
  // On the caller's thread: a generic call on that thread's completion
  // queue, which the thread itself polls while it waits.
  TransportResponse SendAndWait(const Endpoint& endpoint,
                                TransportRequest request) override;
  std::unique_ptr<TransportStream> StartStream(
      const Endpoint& endpoint, TransportRequest request,
      TransportStreamObserver* observer) override;
  void RetainOnly(const std::vector<std::string>& addresses) override;
  std::vector<std::pair<std::string, std::string>> DescribeConnection(
      const std::string& address) const override;
  void Shutdown() override;

  // Number of cached per-endpoint channels (for tests and Describe).
  size_t ChannelCount() const;
  // True if a channel to `address` is cached.
  bool HasChannel(const std::string& address) const;

 private:
  struct Call;
  class Stream;
  class StreamHandle;

  // One endpoint's channel, and for TLS what its handshakes saw.
  struct Connection {
    std::shared_ptr<grpc::Channel> channel;
    // Expected server identity (with `policy`, its server_names described);
    // empty: plaintext.
    std::string identity;
    // The endpoint's EndpointTls; null: tls_identity and the Mesh's.
    std::shared_ptr<const EndpointTls> policy;
    // The certificates presented and their version; null: plaintext.
    std::shared_ptr<IdentityStore> store;
    uint64_t generation = 0;
    std::shared_ptr<HandshakeRecord> handshakes;  // null: plaintext
  };

  // The channel for `endpoint`, cached when its address is live; whether
  // it is TLS into `tls`. An error if the address does not parse, or it has
  // no identity and one is required.
  absl::StatusOr<std::shared_ptr<grpc::Channel>> ChannelFor(
      const Endpoint& endpoint, bool* tls) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `c` is still right for `endpoint` (same TLS, certificates not
  // replaced since).
  bool Fits(Connection& c, const Endpoint& endpoint) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Registers a call to `endpoint` in in_flight_ with its channel; an error
  // (shut down, a bad address, no identity where one is required) if it
  // cannot be sent.
  absl::Status Admit(const Endpoint& endpoint,
                     const std::shared_ptr<Call>& call);
  // Prepares the call's context and request from `request`, and follows
  // its cancellation.
  static void Begin(Call* call, const Endpoint& endpoint,
                    TransportRequest& request);
  void Finish(Call* call, const grpc::Status& status);
  // A stream's OnDone: forgets it (Shutdown waits for this).
  void StreamEnded(Stream* stream);
  // Cancels `stream` (Shutdown; grpc_stream.cc knows the type).
  static void CancelStream(Stream& stream);

  grpc::ChannelArguments args_;
  const std::shared_ptr<IdentityStore> identity_;
  const std::shared_ptr<EndpointStores> endpoint_stores_;
  // Taken twice per call (Send, Finish): not an absl::Mutex (mutex.h).
  mutable Mutex mu_;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  // Until the first RetainOnly, every address counts as live.
  bool retained_known_ ABSL_GUARDED_BY(mu_) = false;
  // The live addresses, packed (one buffer; no per-address allocation).
  AddressSet retained_ ABSL_GUARDED_BY(mu_);
  // By address.
  absl::flat_hash_map<std::string, Connection> channels_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<Call*, std::shared_ptr<Call>> in_flight_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<Stream*, std::shared_ptr<Stream>> streams_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_TRANSPORT_GRPC_TRANSPORT_H_

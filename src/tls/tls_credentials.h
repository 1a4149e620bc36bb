// Mutual TLS to one server identity: gRPC channel credentials that present
// the workload's certificate, verify the server's chain against the trust
// roots, and accept only a server certificate carrying the expected
// identity (certificate_check.h's CarriesIdentity). The refusal names the
// expected and the presented identity (gRPC puts it in the failed call's
// message); each handshake's outcome goes into a HandshakeRecord, which
// Describe() shows.
//
//   auto record = std::make_shared<HandshakeRecord>();
//   auto creds = MutualTlsCredentials(*store->Current(), "web.ns.sa.id",
//   record);
//
// Thread-safe.
#ifndef MESH_SRC_TLS_TLS_CREDENTIALS_H_
#define MESH_SRC_TLS_TLS_CREDENTIALS_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "src/base/internal_export.h"
#include "src/base/mutex.h"
#include "src/tls/identity_store.h"

namespace mesh::internal {

// How the identity check's refusal begins; gRPC carries the refusal into
// the failed connection's message, where the transport finds it.
inline constexpr char kIdentityMismatch[] = "server identity mismatch: ";

// What the handshakes with one (address, identity) saw.
class HandshakeRecord {
 public:
  struct Summary {
    uint64_t succeeded = 0;
    uint64_t refused = 0;
    // The last refusal ("server identity mismatch: ..."), and when.
    std::string last_refusal;
    absl::Time last_refusal_at = absl::InfinitePast();
    // The names the server's certificate carried at the last handshake.
    std::string presented;
  };

  void Succeeded(std::string presented);
  void Refused(std::string presented, std::string why);
  Summary Get() const;

 private:
  mutable Mutex mu_;
  Summary summary_ ABSL_GUARDED_BY(mu_);
};

std::shared_ptr<grpc::ChannelCredentials> MutualTlsCredentials(
    const IdentityMaterial& identity, const std::string& expected_identity,
    std::shared_ptr<HandshakeRecord> record);

// TLS as an endpoint's EndpointTls says, with `certificates` (a version of
// its certificates: with a chain, mutual TLS): the server's chain verified
// against their roots, its certificate checked against tls.server_names,
// the refusal naming the matchers and the names presented.
std::shared_ptr<grpc::ChannelCredentials> EndpointTlsCredentials(
    const IdentityMaterial& certificates, const EndpointTls& tls,
    std::shared_ptr<HandshakeRecord> record);

// Mutual TLS to a control plane that must carry `server_identity`, with
// `identity` checked first (IdentityStore::Create's INVALID_ARGUMENT
// otherwise). Its files, when all three parts are files, are followed by
// gRPC's own file watcher (every refresh_interval, at least a second), so
// that reconnections present a rotated certificate; PEM given in memory is
// used as it is.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
ControlPlaneTlsCredentials(const IdentityOptions& identity,
                           const std::string& server_identity);

// TLS to a server checked the usual way (its certificate chains to
// `ca_file` and names the host it was reached by), presenting the
// certificate of `cert_file` and `key_file` when given (mutual TLS).
// gRPC's file watcher reads the files again every `refresh` (at least a
// second) for new connections. The files are checked first: INVALID_ARGUMENT
// naming the one that cannot be read or does not check out.
MESH_INTERNAL_EXPORT absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
WatchedFileTlsCredentials(const std::string& ca_file,
                          const std::string& cert_file,
                          const std::string& key_file, absl::Duration refresh);

// Sets the TLS server name (SNI) a DNS-like `identity` calls for; nothing
// for a URI identity.
void SetServerNameFor(const std::string& identity,
                      grpc::ChannelArguments* args);

}  // namespace mesh::internal

#endif  // MESH_SRC_TLS_TLS_CREDENTIALS_H_

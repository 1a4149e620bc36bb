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

#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"
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

}  // namespace mesh::internal

#endif  // MESH_SRC_TLS_TLS_CREDENTIALS_H_

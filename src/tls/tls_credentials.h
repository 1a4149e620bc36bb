// Mutual TLS to one server identity: gRPC channel credentials that present
// the workload's certificate, verify the server's chain against the trust
// roots, and accept only a server certificate carrying the expected
// identity (certificate_check.h's CarriesIdentity). Each handshake's outcome
// goes into a HandshakeRecord, from which a failed call's status and
// Describe() name the expected and the presented identity.
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
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "src/base/mutex.h"
#include "src/tls/identity_store.h"

namespace mesh::internal {

// What the handshakes with one (address, identity) saw.
class HandshakeRecord {
 public:
  struct Summary {
    uint64_t succeeded = 0;
    uint64_t refused = 0;
    // The last refusal ("server identity mismatch: ..."), and when.
    std::string last_refusal;
    absl::Time last_refusal_at = absl::InfinitePast();
    // Whether the last handshake was refused.
    bool last_refused = false;
    // The names the server's certificate carried at the last handshake.
    std::string presented;
  };

  void Succeeded(std::string presented);
  void Refused(std::string presented, std::string why);
  Summary Get() const;
  // The last refusal, if the last handshake was refused.
  std::optional<std::string> LastRefusal() const;

 private:
  mutable Mutex mu_;
  Summary summary_ ABSL_GUARDED_BY(mu_);
};

std::shared_ptr<grpc::ChannelCredentials> MutualTlsCredentials(
    const IdentityMaterial& identity, const std::string& expected_identity,
    std::shared_ptr<HandshakeRecord> record);

}  // namespace mesh::internal

#endif  // MESH_SRC_TLS_TLS_CREDENTIALS_H_

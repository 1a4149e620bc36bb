// The tools' server TLS from PEM files (--tls-cert, --tls-key, --tls-ca):
// checked first (certificate_check.h) so that a bad file is named rather
// than refused by gRPC at the first handshake.
//
//   auto creds = ServerTlsFromFiles(cert, key, ca);  // null: plaintext
//
// Thread-safe (reads files; no state).
#ifndef MESH_TOOLS_COMMON_SERVER_TLS_H_
#define MESH_TOOLS_COMMON_SERVER_TLS_H_

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/common/flag_parser.h"

namespace mesh::tools {

// The --tls-cert, --tls-key and --tls-ca flags of a tool that serves, into
// these strings.
std::vector<Flag> ServerTlsFlags(std::string* cert, std::string* key,
                                 std::string* ca);

// All empty: null (plaintext). `cert` and `key` set: TLS; with `ca` too,
// client certificates are required and verified against it (mutual TLS).
// INVALID_ARGUMENT naming the flag (--tls-cert, --tls-key, --tls-ca) for a
// missing partner, an unreadable file or one that does not check out.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerTlsFromFiles(
    const std::string& cert, const std::string& key, const std::string& ca);

}  // namespace mesh::tools

#endif  // MESH_TOOLS_COMMON_SERVER_TLS_H_

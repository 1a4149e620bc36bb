// The server's certificate chain verified against trust roots by the TLS
// library itself (X509_verify_cert, as the TLS handshake would), so that a
// refusal can say why in OpenSSL's own words: "certificate has expired",
// "self-signed certificate", "certificate chain too long", not only
// "certificate verify failed". mesh's gRPC verifiers call it in place of
// gRPC's own chain check, whose reason gRPC 1.51 does not pass on.
//
//   absl::Status s = VerifyServerChain(request->peer_cert_full_chain(),
//                                      roots_pem, absl::Now());
//   // UNAUTHENTICATED "certificate has expired (depth 0: serial 1A, CN
//   // books)"
//
// Thread-safe (pure function).
#ifndef MESH_SRC_TLS_CHAIN_VERIFY_H_
#define MESH_SRC_TLS_CHAIN_VERIFY_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/base/internal_export.h"

namespace mesh::internal {

// How a chain refusal begins in a failed connection's message, where the
// transport finds it.
inline constexpr char kChainRefused[] = "server certificate verify failed: ";

// The most certificates between the leaf and a trust root: OpenSSL's
// default verify depth, which gRPC's own handshakes used.
inline constexpr int kMaxVerifyDepth = 100;

// Verifies `chain_pem` (the server's leaf first, then the intermediates it
// sent) against `roots_pem` at `now` for a TLS server, with the checks and
// depth a TLS client's handshake makes (purpose "ssl_server"). OK, or
// UNAUTHENTICATED: OpenSSL's verify result, the depth it failed at and
// that certificate's serial and CN; INVALID_ARGUMENT when the chain or
// the roots cannot be read at all.
MESH_INTERNAL_EXPORT absl::Status VerifyServerChain(absl::string_view chain_pem,
                                                    absl::string_view roots_pem,
                                                    absl::Time now);

}  // namespace mesh::internal

#endif  // MESH_SRC_TLS_CHAIN_VERIFY_H_

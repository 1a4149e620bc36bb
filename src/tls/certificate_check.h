// What mesh reads from PEM certificates and keys before it uses them, with
// the TLS API that OpenSSL and BoringSSL share: a chain and key that belong
// together and are valid now, trust roots that parse, and the names a
// certificate carries.
//
// Thread-safe (pure functions).
#ifndef MESH_SRC_TLS_CERTIFICATE_CHECK_H_
#define MESH_SRC_TLS_CERTIFICATE_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/base/internal_export.h"

namespace mesh::internal {

// A certificate's facts, as logs, Describe() and tests show them.
struct CertificateFacts {
  // Upper-case hex of whole bytes, as BN_bn2hex prints it: 0x1A "1A",
  // 0x100 "0100".
  std::string serial;
  std::string subject_cn;
  std::vector<std::string> dns_names;  // subjectAltName DNS entries
  std::vector<std::string> uri_names;  // subjectAltName URI entries
  absl::Time not_before;
  absl::Time not_after;
  // False if either date could not be read (the validity check fails).
  bool validity_readable = true;
};

// The contents of a PEM file (any file), or INVALID_ARGUMENT "<what>
// '<path>' cannot be read".
absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        absl::string_view what);

// The first certificate of a PEM chain. INVALID_ARGUMENT if there is none
// or it does not parse.
MESH_INTERNAL_EXPORT absl::StatusOr<CertificateFacts> ReadLeafCertificate(
    absl::string_view pem);

// One DER certificate (as a TLS library hands over a peer's). INVALID_ARGUMENT
// if it does not parse.
absl::StatusOr<CertificateFacts> ReadDerCertificate(absl::string_view der);

// Checks that `chain_pem` (leaf first) and `key_pem` make an identity usable
// at `now`: every certificate of the chain and the key parse (an encrypted
// key does not: no passphrase is asked for), the key is the leaf's, and the
// leaf is within its validity. The leaf's facts, or INVALID_ARGUMENT saying
// which check failed.
absl::StatusOr<CertificateFacts> CheckKeyPair(absl::string_view chain_pem,
                                              absl::string_view key_pem,
                                              absl::Time now);

// Checks that `pem` holds at least one certificate and every one parses.
absl::Status CheckTrustRoots(absl::string_view pem);

// Whether a certificate with these names carries `identity`: a URI-like
// identity ("spiffe://...", anything with "://") must be one of the URI
// names, a DNS-like one one of the DNS names (case-insensitive, exact: no
// wildcards, as Linkerd's identities are exact names).
MESH_INTERNAL_EXPORT bool CarriesIdentity(
    absl::string_view identity, const std::vector<std::string>& dns_names,
    const std::vector<std::string>& uri_names);

// "DNS:a, URI:spiffe://b" for messages; "no DNS or URI names" when empty.
MESH_INTERNAL_EXPORT std::string DescribeNames(
    const std::vector<std::string>& dns_names,
    const std::vector<std::string>& uri_names);

}  // namespace mesh::internal

#endif  // MESH_SRC_TLS_CERTIFICATE_CHECK_H_

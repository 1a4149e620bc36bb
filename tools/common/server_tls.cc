#include "tools/common/server_tls.h"

#include <grpcpp/security/server_credentials.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/tls/certificate_check.h"

namespace mesh::tools {
std::vector<Flag> ServerTlsFlags(std::string* cert, std::string* key,
                                 std::string* ca) {
  return {
      {"tls-cert", "FILE", TextFlag(cert, "needs a file"),
       "serve TLS with this certificate chain (PEM)"},
      {"tls-key", "FILE", TextFlag(key, "needs a file"),
       "and this private key (PEM)"},
      {"tls-ca", "FILE", TextFlag(ca, "needs a file"),
       "require client certificates that chain to these\nCA certificates "
       "(PEM): mutual TLS"},
  };
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerTlsFromFiles(
    const std::string& cert_file, const std::string& key_file,
    const std::string& ca_file) {
  if (cert_file.empty() && key_file.empty() && ca_file.empty()) {
    return nullptr;
  }
  if (cert_file.empty() || key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key go together (and --tls-ca needs both)");
  }
  absl::StatusOr<std::string> cert =
      internal::ReadPemFile(cert_file, "--tls-cert:");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key =
      internal::ReadPemFile(key_file, "--tls-key:");
  if (!key.ok()) return key.status();
  absl::StatusOr<internal::CertificateFacts> checked =
      internal::CheckKeyPair(*cert, *key, absl::Now());
  if (!checked.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-cert/--tls-key: ", checked.status().message()));
  }
  std::string ca;
  if (!ca_file.empty()) {
    absl::StatusOr<std::string> read =
        internal::ReadPemFile(ca_file, "--tls-ca:");
    if (!read.ok()) return read.status();
    if (absl::Status s = internal::CheckTrustRoots(*read); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tls-ca: ", s.message()));
    }
    ca = *std::move(read);
  }
  grpc::SslServerCredentialsOptions ssl(
      ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                 : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = ca;
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace mesh::tools

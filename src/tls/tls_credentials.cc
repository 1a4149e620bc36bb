#include "src/tls/tls_credentials.h"

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/tls/certificate_check.h"
#include "src/tls/server_name_match.h"

namespace mesh::internal {
namespace {

using grpc::experimental::TlsCustomVerificationCheckRequest;

std::vector<std::string> Strings(const std::vector<grpc::string_ref>& refs) {
  std::vector<std::string> out;
  out.reserve(refs.size());
  for (const grpc::string_ref& r : refs) out.emplace_back(r.data(), r.size());
  return out;
}

// Runs after gRPC has verified the server's chain against the trust roots:
// the leaf must carry the expected identity. Synchronous.
class ServerIdentityVerifier final
    : public grpc::experimental::ExternalCertificateVerifier {
 public:
  ServerIdentityVerifier(std::string expected,
                         std::shared_ptr<HandshakeRecord> record)
      : expected_(std::move(expected)), record_(std::move(record)) {}

  bool Verify(TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> /*callback*/,
              grpc::Status* sync_status) override {
    std::vector<std::string> dns = Strings(request->dns_names());
    std::vector<std::string> uri = Strings(request->uri_names());
    std::string presented = DescribeNames(dns, uri);
    if (CarriesIdentity(expected_, dns, uri)) {
      record_->Succeeded(std::move(presented));
      *sync_status = grpc::Status::OK;
    } else {
      std::string why =
          absl::StrCat(kIdentityMismatch, "expected '", expected_,
                       "', the server's certificate carries ", presented);
      record_->Refused(presented, why);
      *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, why);
    }
    return true;  // done synchronously
  }

  void Cancel(TlsCustomVerificationCheckRequest* /*request*/) override {}

 private:
  const std::string expected_;
  const std::shared_ptr<HandshakeRecord> record_;
};

// The same, for EndpointTls::server_names (any kind of SAN).
class ServerNameVerifier final
    : public grpc::experimental::ExternalCertificateVerifier {
 public:
  ServerNameVerifier(std::vector<ServerNameMatcher> matchers,
                     std::shared_ptr<HandshakeRecord> record)
      : check_(std::move(matchers)), record_(std::move(record)) {}

  bool Verify(TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> /*callback*/,
              grpc::Status* sync_status) override {
    PresentedNames names{
        Strings(request->dns_names()), Strings(request->uri_names()),
        Strings(request->email_names()), Strings(request->ip_names())};
    std::string presented = DescribePresented(names);
    if (check_.Matches(names)) {
      record_->Succeeded(std::move(presented));
      *sync_status = grpc::Status::OK;
    } else {
      std::string why = absl::StrCat(
          kIdentityMismatch, "expected ", DescribeMatchers(check_.matchers()),
          ", the server's certificate carries ", presented);
      record_->Refused(presented, why);
      *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, why);
    }
    return true;  // done synchronously
  }

  void Cancel(TlsCustomVerificationCheckRequest* /*request*/) override {}

 private:
  const ServerNameCheck check_;
  const std::shared_ptr<HandshakeRecord> record_;
};

}  // namespace

void HandshakeRecord::Succeeded(std::string presented) {
  MutexLock lock(&mu_);
  ++summary_.succeeded;
  summary_.presented = std::move(presented);
}

void HandshakeRecord::Refused(std::string presented, std::string why) {
  MutexLock lock(&mu_);
  ++summary_.refused;
  summary_.presented = std::move(presented);
  summary_.last_refusal = std::move(why);
  summary_.last_refusal_at = absl::Now();
}

HandshakeRecord::Summary HandshakeRecord::Get() const {
  MutexLock lock(&mu_);
  return summary_;
}

namespace {

// Mutual TLS with `provider`'s certificates: the chain is verified against
// the roots, and the name check is ours (the expected identity, not the
// host name or the call's authority).
std::shared_ptr<grpc::ChannelCredentials> IdentityCheckedCredentials(
    std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider,
    const std::string& expected_identity,
    std::shared_ptr<HandshakeRecord> record) {
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(std::move(provider));
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  options.set_verify_server_certs(true);
  options.set_check_call_host(false);
  options.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<
          ServerIdentityVerifier>(expected_identity, std::move(record)));
  return grpc::experimental::TlsCredentials(options);
}

// Without a chain (EndpointTls without a client certificate): roots only.
std::shared_ptr<grpc::experimental::CertificateProviderInterface>
StaticProvider(const IdentityMaterial& identity) {
  if (identity.cert_chain_pem.empty()) {
    return std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
        identity.trust_roots_pem);
  }
  return std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
      identity.trust_roots_pem,
      std::vector<grpc::experimental::IdentityKeyCertPair>{
          {identity.private_key_pem, identity.cert_chain_pem}});
}

}  // namespace

std::shared_ptr<grpc::ChannelCredentials> MutualTlsCredentials(
    const IdentityMaterial& identity, const std::string& expected_identity,
    std::shared_ptr<HandshakeRecord> record) {
  return IdentityCheckedCredentials(StaticProvider(identity), expected_identity,
                                    std::move(record));
}

std::shared_ptr<grpc::ChannelCredentials> EndpointTlsCredentials(
    const IdentityMaterial& certificates, const EndpointTls& tls,
    std::shared_ptr<HandshakeRecord> record) {
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(StaticProvider(certificates));
  options.watch_root_certs();
  if (!certificates.cert_chain_pem.empty()) {
    options.watch_identity_key_cert_pairs();
  }
  options.set_verify_server_certs(true);
  options.set_check_call_host(false);
  options.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<
          ServerNameVerifier>(tls.server_names, std::move(record)));
  return grpc::experimental::TlsCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
ControlPlaneTlsCredentials(const IdentityOptions& identity,
                           const std::string& server_identity) {
  absl::StatusOr<std::shared_ptr<IdentityStore>> store =
      IdentityStore::Create(identity);
  if (!store.ok()) return store.status();
  if (server_identity.empty()) {
    return absl::InvalidArgumentError(
        "server_identity is required with identity: what the control "
        "plane's certificate must carry");
  }
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider;
  if (!identity.cert_chain_file.empty() && !identity.private_key_file.empty() &&
      !identity.trust_roots_file.empty()) {
    const int64_t seconds =
        std::max<int64_t>(1, absl::ToInt64Seconds(identity.refresh_interval));
    provider =
        std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
            identity.private_key_file, identity.cert_chain_file,
            identity.trust_roots_file, static_cast<unsigned int>(seconds));
  } else {
    provider = StaticProvider(*(*store)->Current());
  }
  return IdentityCheckedCredentials(std::move(provider), server_identity,
                                    std::make_shared<HandshakeRecord>());
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
WatchedFileTlsCredentials(const std::string& ca_file,
                          const std::string& cert_file,
                          const std::string& key_file, absl::Duration refresh) {
  absl::StatusOr<std::string> roots =
      ReadPemFile(ca_file, "ca_certificate_file");
  if (!roots.ok()) return roots.status();
  if (absl::Status s = CheckTrustRoots(*roots); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ca_certificate_file '", ca_file, "': ", s.message()));
  }
  if (!cert_file.empty()) {
    absl::StatusOr<std::string> cert =
        ReadPemFile(cert_file, "certificate_file");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPemFile(key_file, "private_key_file");
    if (!key.ok()) return key.status();
    absl::StatusOr<CertificateFacts> checked =
        CheckKeyPair(*cert, *key, absl::Now());
    if (!checked.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("certificate_file '", cert_file,
                       "' with "
                       "private_key_file '",
                       key_file, "': ", checked.status().message()));
    }
  }
  const unsigned int seconds = static_cast<unsigned int>(
      std::max<int64_t>(1, absl::ToInt64Seconds(refresh)));
  grpc::experimental::TlsChannelCredentialsOptions options;
  if (cert_file.empty()) {
    options.set_certificate_provider(
        std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
            ca_file, seconds));
  } else {
    options.set_certificate_provider(
        std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
            key_file, cert_file, ca_file, seconds));
    options.watch_identity_key_cert_pairs();
  }
  options.watch_root_certs();
  options.set_verify_server_certs(true);
  // gRPC's default check of the server's name (HostNameCertificateVerifier).
  return grpc::experimental::TlsCredentials(options);
}

void SetServerNameFor(const std::string& identity,
                      grpc::ChannelArguments* args) {
  if (!identity.empty() && !absl::StrContains(identity, "://")) {
    args->SetSslTargetNameOverride(identity);
  }
}

}  // namespace mesh::internal

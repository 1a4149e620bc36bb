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
#include "src/tls/chain_verify.h"
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

absl::string_view View(const grpc::string_ref& r) {
  return absl::string_view(r.data(), r.size());
}

// The trust roots a verifier checks the server's chain against: a version
// of an identity's (fixed), or a control plane's file, read again at most
// every `refresh` as gRPC's file watcher reads it for the handshake.
class TrustRoots {
 public:
  explicit TrustRoots(std::string pem)
      : pem_(std::make_shared<const std::string>(std::move(pem))) {}
  TrustRoots(std::string file, std::string pem, absl::Duration refresh)
      : file_(std::move(file)),
        refresh_(refresh),
        pem_(std::make_shared<const std::string>(std::move(pem))),
        read_at_(absl::Now()) {}

  // The roots last read that check out (a file being rewritten is not
  // taken half-written: the last good version stays).
  std::shared_ptr<const std::string> Get() {
    MutexLock lock(&mu_);
    if (!file_.empty() && absl::Now() - read_at_ >= refresh_) {
      read_at_ = absl::Now();
      absl::StatusOr<std::string> read = ReadPemFile(file_, "trust_roots_file");
      if (read.ok() && *read != *pem_ && CheckTrustRoots(*read).ok()) {
        pem_ = std::make_shared<const std::string>(*std::move(read));
      }
    }
    return pem_;
  }

 private:
  const std::string file_;  // empty: fixed
  const absl::Duration refresh_ = absl::InfiniteDuration();
  Mutex mu_;
  std::shared_ptr<const std::string> pem_ ABSL_GUARDED_BY(mu_);
  absl::Time read_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

// gRPC's own chain check is turned off (set_verify_server_certs(false)):
// its refusal says only "certificate verify failed". This one runs it
// again with the TLS library, naming OpenSSL's verify result ("certificate
// has expired"), and then the names check of the subclass. Synchronous.
class ChainCheckingVerifier
    : public grpc::experimental::ExternalCertificateVerifier {
 public:
  ChainCheckingVerifier(std::shared_ptr<TrustRoots> roots,
                        std::shared_ptr<HandshakeRecord> record)
      : roots_(std::move(roots)), record_(std::move(record)) {}

  bool Verify(TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> callback,
              grpc::Status* sync_status) final {
    absl::Status chain = VerifyServerChain(
        View(request->peer_cert_full_chain()), *roots_->Get(), absl::Now());
    if (!chain.ok()) {
      std::string why = absl::StrCat(kChainRefused, chain.message());
      record_->Refused(Presented(*request), why);
      *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, why);
      return true;
    }
    return CheckNames(request, std::move(callback), sync_status);
  }

  void Cancel(TlsCustomVerificationCheckRequest* /*request*/) override {}

 protected:
  // After the chain verified: the server's names, as Verify() answers.
  virtual bool CheckNames(TlsCustomVerificationCheckRequest* request,
                          std::function<void(grpc::Status)> callback,
                          grpc::Status* sync_status) = 0;
  // The names the server's certificate carries, for the record.
  virtual std::string Presented(
      const TlsCustomVerificationCheckRequest& request) const = 0;

  HandshakeRecord& record() { return *record_; }

 private:
  const std::shared_ptr<TrustRoots> roots_;
  const std::shared_ptr<HandshakeRecord> record_;
};

// The leaf must carry the expected identity.
class ServerIdentityVerifier final : public ChainCheckingVerifier {
 public:
  ServerIdentityVerifier(std::shared_ptr<TrustRoots> roots,
                         std::string expected,
                         std::shared_ptr<HandshakeRecord> record)
      : ChainCheckingVerifier(std::move(roots), std::move(record)),
        expected_(std::move(expected)) {}

 private:
  bool CheckNames(TlsCustomVerificationCheckRequest* request,
                  std::function<void(grpc::Status)> /*callback*/,
                  grpc::Status* sync_status) override {
    std::vector<std::string> dns = Strings(request->dns_names());
    std::vector<std::string> uri = Strings(request->uri_names());
    std::string presented = DescribeNames(dns, uri);
    if (CarriesIdentity(expected_, dns, uri)) {
      record().Succeeded(std::move(presented));
      *sync_status = grpc::Status::OK;
    } else {
      std::string why =
          absl::StrCat(kIdentityMismatch, "expected '", expected_,
                       "', the server's certificate carries ", presented);
      record().Refused(presented, why);
      *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, why);
    }
    return true;  // done synchronously
  }

  std::string Presented(
      const TlsCustomVerificationCheckRequest& request) const override {
    return DescribeNames(Strings(request.dns_names()),
                         Strings(request.uri_names()));
  }

  const std::string expected_;
};

// The same, for EndpointTls::server_names (any kind of SAN).
class ServerNameVerifier final : public ChainCheckingVerifier {
 public:
  ServerNameVerifier(std::shared_ptr<TrustRoots> roots,
                     std::vector<ServerNameMatcher> matchers,
                     std::shared_ptr<HandshakeRecord> record)
      : ChainCheckingVerifier(std::move(roots), std::move(record)),
        check_(std::move(matchers)) {}

 private:
  static PresentedNames Names(
      const TlsCustomVerificationCheckRequest& request) {
    return PresentedNames{
        Strings(request.dns_names()), Strings(request.uri_names()),
        Strings(request.email_names()), Strings(request.ip_names())};
  }

  bool CheckNames(TlsCustomVerificationCheckRequest* request,
                  std::function<void(grpc::Status)> /*callback*/,
                  grpc::Status* sync_status) override {
    PresentedNames names = Names(*request);
    std::string presented = DescribePresented(names);
    if (check_.Matches(names)) {
      record().Succeeded(std::move(presented));
      *sync_status = grpc::Status::OK;
    } else {
      std::string why = absl::StrCat(
          kIdentityMismatch, "expected ", DescribeMatchers(check_.matchers()),
          ", the server's certificate carries ", presented);
      record().Refused(presented, why);
      *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, why);
    }
    return true;  // done synchronously
  }

  std::string Presented(
      const TlsCustomVerificationCheckRequest& request) const override {
    return DescribePresented(Names(request));
  }

  const ServerNameCheck check_;
};

// The server's name checked as gRPC checks it by default (the host it was
// reached by), by gRPC's own HostNameCertificateVerifier.
class HostNameVerifier final : public ChainCheckingVerifier {
 public:
  explicit HostNameVerifier(std::shared_ptr<TrustRoots> roots)
      : ChainCheckingVerifier(std::move(roots),
                              std::make_shared<HandshakeRecord>()) {}

 private:
  bool CheckNames(TlsCustomVerificationCheckRequest* request,
                  std::function<void(grpc::Status)> callback,
                  grpc::Status* sync_status) override {
    return host_names_.Verify(request, std::move(callback), sync_status);
  }

  std::string Presented(
      const TlsCustomVerificationCheckRequest& request) const override {
    return DescribeNames(Strings(request.dns_names()),
                         Strings(request.uri_names()));
  }

  grpc::experimental::HostNameCertificateVerifier host_names_;
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
// `roots` and the name check is ours (the expected identity, not the host
// name or the call's authority), both in ServerIdentityVerifier.
std::shared_ptr<grpc::ChannelCredentials> IdentityCheckedCredentials(
    std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider,
    std::shared_ptr<TrustRoots> roots, const std::string& expected_identity,
    std::shared_ptr<HandshakeRecord> record) {
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(std::move(provider));
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  // The verifier checks the chain itself, to say why it refuses one.
  options.set_verify_server_certs(false);
  options.set_check_call_host(false);
  options.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<
          ServerIdentityVerifier>(std::move(roots), expected_identity,
                                  std::move(record)));
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
  return IdentityCheckedCredentials(
      StaticProvider(identity),
      std::make_shared<TrustRoots>(identity.trust_roots_pem), expected_identity,
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
  // The verifier checks the chain itself, to say why it refuses one.
  options.set_verify_server_certs(false);
  options.set_check_call_host(false);
  options.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<
          ServerNameVerifier>(
          std::make_shared<TrustRoots>(certificates.trust_roots_pem),
          tls.server_names, std::move(record)));
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
  std::shared_ptr<TrustRoots> roots;
  const std::string& roots_pem = (*store)->Current()->trust_roots_pem;
  if (!identity.cert_chain_file.empty() && !identity.private_key_file.empty() &&
      !identity.trust_roots_file.empty()) {
    const int64_t seconds =
        std::max<int64_t>(1, absl::ToInt64Seconds(identity.refresh_interval));
    provider =
        std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
            identity.private_key_file, identity.cert_chain_file,
            identity.trust_roots_file, static_cast<unsigned int>(seconds));
    roots = std::make_shared<TrustRoots>(identity.trust_roots_file, roots_pem,
                                         absl::Seconds(seconds));
  } else {
    provider = StaticProvider(*(*store)->Current());
    roots = std::make_shared<TrustRoots>(roots_pem);
  }
  return IdentityCheckedCredentials(std::move(provider), std::move(roots),
                                    server_identity,
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
  // The chain checked by the verifier, to say why it refuses one; the name
  // by gRPC's default HostNameCertificateVerifier after it.
  options.set_verify_server_certs(false);
  options.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<HostNameVerifier>(
          std::make_shared<TrustRoots>(ca_file, *std::move(roots),
                                       absl::Seconds(seconds))));
  return grpc::experimental::TlsCredentials(options);
}

void SetServerNameFor(const std::string& identity,
                      grpc::ChannelArguments* args) {
  if (!identity.empty() && !absl::StrContains(identity, "://")) {
    args->SetSslTargetNameOverride(identity);
  }
}

}  // namespace mesh::internal

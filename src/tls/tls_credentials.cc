#include "src/tls/tls_credentials.h"

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/tls/certificate_check.h"

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

std::shared_ptr<grpc::ChannelCredentials> MutualTlsCredentials(
    const IdentityMaterial& identity, const std::string& expected_identity,
    std::shared_ptr<HandshakeRecord> record) {
  auto provider =
      std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
          identity.trust_roots_pem,
          std::vector<grpc::experimental::IdentityKeyCertPair>{
              {identity.private_key_pem, identity.cert_chain_pem}});
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(std::move(provider));
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  // The chain is verified against the roots; the name check is ours (the
  // expected identity, not the host name or the call's authority).
  options.set_verify_server_certs(true);
  options.set_check_call_host(false);
  options.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<
          ServerIdentityVerifier>(expected_identity, std::move(record)));
  return grpc::experimental::TlsCredentials(options);
}

}  // namespace mesh::internal

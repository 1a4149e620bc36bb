#include "src/tls/chain_verify.h"

#include <openssl/bio.h>
#include <openssl/buffer.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/tls/certificate_check.h"
#include "src/tls/openssl_owners.h"

namespace mesh::internal {
namespace {

// The stack does not own its certificates: `Certificates` does.
struct FreeStack {
  void operator()(STACK_OF(X509) * s) const { sk_X509_free(s); }
};
using Certificates = std::vector<Certificate>;

// Leaves the library's error queue empty, however the verification ends.
struct ClearErrorsOnExit {
  ~ClearErrorsOnExit() { ERR_clear_error(); }
};

// Every certificate of `pem`, in order.
Certificates ParseCertificates(absl::string_view pem) {
  Certificates out;
  if (pem.empty()) return out;
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (bio == nullptr) return out;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    out.emplace_back(cert);
  }
  return out;
}

// "depth 0: serial 1A, CN books" for the certificate verification stopped
// at.
std::string WhereItFailed(X509_STORE_CTX* context) {
  std::string where =
      absl::StrCat("depth ", X509_STORE_CTX_get_error_depth(context));
  X509* cert = X509_STORE_CTX_get_current_cert(context);
  Bio bio(BIO_new(BIO_s_mem()));
  if (cert == nullptr || bio == nullptr ||
      PEM_write_bio_X509(bio.get(), cert) != 1) {
    return where;
  }
  BUF_MEM* pem = nullptr;
  BIO_get_mem_ptr(bio.get(), &pem);
  if (pem == nullptr) return where;
  absl::StatusOr<CertificateFacts> facts =
      ReadLeafCertificate(absl::string_view(pem->data, pem->length));
  if (!facts.ok()) return where;
  absl::StrAppend(&where, ": serial ", facts->serial);
  if (!facts->subject_cn.empty()) {
    absl::StrAppend(&where, ", CN ", facts->subject_cn);
  }
  return where;
}

}  // namespace

absl::Status VerifyServerChain(absl::string_view chain_pem,
                               absl::string_view roots_pem, absl::Time now) {
  ClearErrorsOnExit clear;
  Certificates chain = ParseCertificates(chain_pem);
  if (chain.empty()) {
    return absl::InvalidArgumentError(
        "the server sent no certificate that can be read");
  }
  Certificates roots = ParseCertificates(roots_pem);
  if (roots.empty()) {
    return absl::InvalidArgumentError("no trust root can be read");
  }
  std::unique_ptr<X509_STORE, FreeStore> store(X509_STORE_new());
  std::unique_ptr<STACK_OF(X509), FreeStack> untrusted(sk_X509_new_null());
  std::unique_ptr<X509_STORE_CTX, FreeStoreContext> context(
      X509_STORE_CTX_new());
  if (store == nullptr || untrusted == nullptr || context == nullptr) {
    return absl::ResourceExhaustedError("out of memory verifying a chain");
  }
  for (const auto& root : roots) {
    // The same root twice in the file is not an error.
    X509_STORE_add_cert(store.get(), root.get());
  }
  ERR_clear_error();
  for (size_t i = 1; i < chain.size(); ++i) {
    if (sk_X509_push(untrusted.get(), chain[i].get()) == 0) {
      return absl::ResourceExhaustedError("out of memory verifying a chain");
    }
  }
  if (X509_STORE_CTX_init(context.get(), store.get(), chain[0].get(),
                          untrusted.get()) != 1) {
    return absl::ResourceExhaustedError("out of memory verifying a chain");
  }
  // What a TLS client's handshake checks of its server (OpenSSL's
  // ssl_verify_cert_chain sets the same), with an explicit depth and clock.
  X509_STORE_CTX_set_default(context.get(), "ssl_server");
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(context.get());
  X509_VERIFY_PARAM_set_depth(param, kMaxVerifyDepth);
  X509_VERIFY_PARAM_set_time(param, absl::ToTimeT(now));
  if (X509_verify_cert(context.get()) == 1) return absl::OkStatus();
  const int error = X509_STORE_CTX_get_error(context.get());
  return absl::UnauthenticatedError(
      absl::StrCat(X509_verify_cert_error_string(error), " (",
                   WhereItFailed(context.get()), ")"));
}

}  // namespace mesh::internal

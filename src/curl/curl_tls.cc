#include "src/curl/curl_tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"
#include "src/tls/certificate_check.h"
#include "src/tls/chain_verify.h"
#include "src/tls/tls_credentials.h"

namespace mesh::internal {
namespace {

std::string PemOf(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  return pem;
}

// Presents `chain_pem` (leaf first) and `key_pem` on `ctx`.
bool UseIdentity(SSL_CTX* ctx, const std::string& chain_pem,
                 const std::string& key_pem) {
  BIO* chain =
      BIO_new_mem_buf(chain_pem.data(), static_cast<int>(chain_pem.size()));
  X509* leaf = PEM_read_bio_X509(chain, nullptr, nullptr, nullptr);
  bool ok = leaf != nullptr && SSL_CTX_use_certificate(ctx, leaf) == 1;
  X509_free(leaf);
  while (ok) {
    X509* extra = PEM_read_bio_X509(chain, nullptr, nullptr, nullptr);
    if (extra == nullptr) break;
    if (SSL_CTX_add_extra_chain_cert(ctx, extra) != 1) X509_free(extra);
  }
  BIO_free(chain);
  BIO* key_bio =
      BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  ok = ok && key != nullptr && SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  ERR_clear_error();  // the end of the chain reads as an error
  return ok;
}

}  // namespace

CURLcode CurlTls::OnSslCtx(CURL* /*easy*/, void* ssl_ctx, void* self) {
  auto* tls = static_cast<CurlTls*>(self);
  auto* ctx = static_cast<SSL_CTX*>(ssl_ctx);
  tls->refusal_.clear();
  if (tls->identity_ == nullptr ||
      !UseIdentity(ctx, tls->identity_->cert_chain_pem,
                   tls->identity_->private_key_pem)) {
    tls->refusal_ = "the Mesh's certificate could not be loaded";
    return CURLE_SSL_CERTPROBLEM;
  }
  // mesh checks the chain and the names itself (curl's own checks are off
  // for the attempt): a refusal names the reason.
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_cert_verify_callback(ctx, &CurlTls::Verify, tls);
  return CURLE_OK;
}

int CurlTls::Verify(::x509_store_ctx_st* store, void* self) {
  auto* tls = static_cast<CurlTls*>(self);
  X509* leaf = X509_STORE_CTX_get0_cert(store);
  if (leaf == nullptr) {
    tls->refusal_ =
        absl::StrCat(kChainRefused, "the server sent no certificate");
    return 0;
  }
  std::string chain = PemOf(leaf);
  STACK_OF(X509)* untrusted = X509_STORE_CTX_get0_untrusted(store);
  for (int i = 0; untrusted != nullptr && i < sk_X509_num(untrusted); ++i) {
    X509* cert = sk_X509_value(untrusted, i);
    if (X509_cmp(cert, leaf) != 0) chain += PemOf(cert);
  }
  absl::Status verified =
      VerifyServerChain(chain, tls->identity_->trust_roots_pem, absl::Now());
  if (!verified.ok()) {
    tls->refusal_ = absl::StrCat(kChainRefused, verified.message());
    return 0;
  }
  absl::StatusOr<CertificateFacts> facts = ReadLeafCertificate(chain);
  if (!facts.ok()) {
    tls->refusal_ = absl::StrCat(kChainRefused, facts.status().message());
    return 0;
  }
  if (!CarriesIdentity(tls->expected_, facts->dns_names, facts->uri_names)) {
    tls->refusal_ =
        absl::StrCat(kIdentityMismatch, "expected '", tls->expected_,
                     "', the server's certificate carries ",
                     DescribeNames(facts->dns_names, facts->uri_names));
    return 0;
  }
  return 1;
}

}  // namespace mesh::internal

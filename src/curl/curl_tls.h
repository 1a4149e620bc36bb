// Mutual TLS for a mesh::curl attempt to an endpoint with an identity,
// through curl's OpenSSL hook (CURLOPT_SSL_CTX_FUNCTION): the Mesh's
// certificate is presented, and the server's chain and names are checked
// by mesh itself, with the same checks and refusal messages as the gRPC
// transport (the chain against the Mesh's trust roots, in OpenSSL's words;
// then the expected identity among the leaf's DNS or URI names).
//
//   CurlTls tls{identity, "books.ns.serviceaccount.identity.linkerd..."};
//   curl_easy_setopt(easy, CURLOPT_SSL_CTX_FUNCTION, &CurlTls::OnSslCtx);
//   curl_easy_setopt(easy, CURLOPT_SSL_CTX_DATA, &tls);
//   // after a refused handshake: tls.refusal() says why
//
// Thread-compatible: one attempt's, used on the loop's thread; must live
// until the attempt's transfer has ended.
#ifndef MESH_SRC_CURL_CURL_TLS_H_
#define MESH_SRC_CURL_CURL_TLS_H_

#include <curl/curl.h>

#include <memory>
#include <string>

#include "src/tls/identity_store.h"

struct x509_store_ctx_st;  // OpenSSL's X509_STORE_CTX

namespace mesh::internal {

class CurlTls {
 public:
  CurlTls() = default;
  CurlTls(std::shared_ptr<const IdentityMaterial> identity,
          std::string expected)
      : identity_(std::move(identity)), expected_(std::move(expected)) {}

  // CURLOPT_SSL_CTX_FUNCTION: `self` is a CurlTls.
  static CURLcode OnSslCtx(CURL* easy, void* ssl_ctx, void* self);

  const std::string& expected() const { return expected_; }
  // Why the last handshake was refused; empty if it was not.
  const std::string& refusal() const { return refusal_; }

 private:
  static int Verify(::x509_store_ctx_st* store, void* self);

  std::shared_ptr<const IdentityMaterial> identity_;
  std::string expected_;
  std::string refusal_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CURL_CURL_TLS_H_

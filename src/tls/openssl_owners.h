// Owners for the TLS library's objects, so that each is freed whatever
// path a function leaves by (bssl::UniquePtr is BoringSSL's alone; this is
// the API OpenSSL and BoringSSL share).
//
//   Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
//   Certificate cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
//
// Types only; each owner is thread-compatible like std::unique_ptr.
#ifndef MESH_SRC_TLS_OPENSSL_OWNERS_H_
#define MESH_SRC_TLS_OPENSSL_OWNERS_H_

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <memory>

namespace mesh::internal {

struct FreeBio {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct FreeX509 {
  void operator()(X509* x) const { X509_free(x); }
};
struct FreeKey {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct FreeNames {
  void operator()(GENERAL_NAMES* n) const { GENERAL_NAMES_free(n); }
};
struct FreeBignum {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct FreeStore {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct FreeStoreContext {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};

using Bio = std::unique_ptr<BIO, FreeBio>;
using Certificate = std::unique_ptr<X509, FreeX509>;

}  // namespace mesh::internal

#endif  // MESH_SRC_TLS_OPENSSL_OWNERS_H_

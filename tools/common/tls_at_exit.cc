#include "tools/common/tls_at_exit.h"

#include <openssl/crypto.h>

namespace mesh::tools {

void KeepTlsLibraryAtExit() {
#ifdef OPENSSL_INIT_NO_ATEXIT  // OpenSSL 1.1.1 and later; not BoringSSL
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
#endif
}

}  // namespace mesh::tools

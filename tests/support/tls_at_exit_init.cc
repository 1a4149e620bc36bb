// Linked into every test program (mesh_test in tests/CMakeLists.txt): keeps
// OpenSSL's state alive at process exit, as the tools do (KeepTlsLibrary-
// AtExit). When a test's main returns, gRPC's own threads may still be
// reconnecting to a TLS server (a handshake refused is retried with
// backoff), and OpenSSL's atexit cleanup would free the state under that
// handshake: ASan saw a SEGV in EVP_PKEY_generate on a gRPC thread after
// every test of the program had passed. Runs before main, so before gRPC or
// OpenSSL start.
#include "tools/common/tls_at_exit.h"

namespace {

struct KeepTlsAtExit {
  KeepTlsAtExit() { mesh::tools::KeepTlsLibraryAtExit(); }
};
[[maybe_unused]] const KeepTlsAtExit keep_tls_at_exit;

}  // namespace

// Keeps the TLS library's state alive at process exit.
//
// When main returns, OpenSSL frees its state in an atexit handler, while
// gRPC's own threads may still be reconnecting (a control plane refused at
// the handshake is retried with backoff) and crash inside a handshake. A
// tool calls this first thing in main, before gRPC or OpenSSL start; the
// process's memory goes back to the system at exit anyway.
//
//   int main(int argc, char** argv) {
//     mesh::tools::KeepTlsLibraryAtExit();
//
// Thread-compatible: call once, from main, before other threads start.
#ifndef MESH_TOOLS_COMMON_TLS_AT_EXIT_H_
#define MESH_TOOLS_COMMON_TLS_AT_EXIT_H_

namespace mesh::tools {

void KeepTlsLibraryAtExit();

}  // namespace mesh::tools

#endif  // MESH_TOOLS_COMMON_TLS_AT_EXIT_H_

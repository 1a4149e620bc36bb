// ChildServer: a server program started as a child process on a free port
// of 127.0.0.1 (nghttpx as a proxy hop, nghttpd as an HTTP/2 backend), for
// the end-to-end benchmarks that measure against a real peer in another
// process. Its output is discarded; it is stopped (SIGTERM) on destruction.
//
//   std::string why;
//   auto proxy = ChildServer::Start(
//       {"nghttpx", "--frontend=127.0.0.1,{port};no-tls", ...}, &why);
//   if (proxy == nullptr) ... why;  // proxy->port()
//
// Thread-compatible.
#ifndef MESH_BENCH_E2E_CHILD_SERVER_H_
#define MESH_BENCH_E2E_CHILD_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace mesh::bench {

class ChildServer {
 public:
  // Runs `args` (args[0] found on PATH) with "{port}" in any argument
  // replaced by a free port, and waits up to 5 s for it to accept there.
  // Null, with the reason in `why`, if the binary is missing, exits, or
  // does not listen in time.
  static std::unique_ptr<ChildServer> Start(std::vector<std::string> args,
                                            std::string* why);
  ~ChildServer();
  ChildServer(const ChildServer&) = delete;
  ChildServer& operator=(const ChildServer&) = delete;

  int port() const { return port_; }

 private:
  ChildServer(pid_t pid, int port) : pid_(pid), port_(port) {}
  pid_t pid_;
  int port_;
};

// A free TCP port on 127.0.0.1 (bound and released; racy but fine here).
int FreePort();

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_CHILD_SERVER_H_

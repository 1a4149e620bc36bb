// mesh-control-plane: Linkerd's Destination API (Get, GetProfile) served from
// a JSON file, following its edits. For laptops and tests, not clusters.
//
//   mesh-control-plane --config=mesh.json [--listen=127.0.0.1:8086]
#include <csignal>
#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "src/base/utf8.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace {

int Usage(const std::string& problem) {
  std::fprintf(stderr,
               "mesh-control-plane: %s\n"
               "usage: mesh-control-plane --config=FILE [--listen=HOST:PORT] "
               "[--max-config-bytes=N]\n"
               "  --config            JSON file of targets, endpoints and "
               "profiles (docs/linkerd.md)\n"
               "  --listen            address to serve on (default "
               "127.0.0.1:8086)\n"
               "  --max-config-bytes  larger config files are refused "
               "(default 67108864, 64 MiB)\n",
               mesh::internal::PrintableText(problem).c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  std::string listen = "127.0.0.1:8086";
  int64_t max_bytes = mesh::controlplane::kDefaultMaxConfigBytes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (absl::StartsWith(arg, "--config=")) {
      config_path = arg.substr(9);
    } else if (absl::StartsWith(arg, "--listen=")) {
      listen = arg.substr(9);
    } else if (absl::StartsWith(arg, "--max-config-bytes=")) {
      if (!absl::SimpleAtoi(arg.substr(19), &max_bytes) || max_bytes < 1) {
        return Usage("--max-config-bytes takes a positive number of bytes");
      }
    } else {
      return Usage("unknown argument " + arg);
    }
  }
  if (config_path.empty()) return Usage("--config is required");

  // Block the stop signals before gRPC starts threads, then wait for one.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto cp = mesh::controlplane::ControlPlane::Start(listen, {});
  if (!cp.ok()) {
    std::fprintf(stderr, "mesh-control-plane: %s\n",
                 cp.status().ToString().c_str());
    return 1;
  }
  if (absl::Status s =
          (*cp)->WatchFile(config_path, absl::Milliseconds(200), max_bytes);
      !s.ok()) {
    std::fprintf(stderr, "mesh-control-plane: %s\n",
                 mesh::internal::PrintableText(s.message()).c_str());
    return 1;
  }
  std::printf(
      "mesh-control-plane: serving %s on 127.0.0.1:%d (Destination.Get, "
      "GetProfile)\n",
      config_path.c_str(), (*cp)->port());
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop, &signal);
  std::printf("mesh-control-plane: signal %d, stopping\n", signal);
  (*cp)->Kill();
  return 0;
}

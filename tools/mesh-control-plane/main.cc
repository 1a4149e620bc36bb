// mesh-control-plane: Linkerd's Destination API (Get, GetProfile) and xDS's
// ADS served from one JSON file, following its edits. For laptops and tests,
// not clusters.
//
//   mesh-control-plane --config=mesh.json [--listen=127.0.0.1:8086] [--verbose]
//       [--tls-cert=FILE --tls-key=FILE [--tls-ca=FILE]]
//
// With --tls-cert and --tls-key it serves TLS; with --tls-ca too, mutual
// TLS (client certificates required).
// Exits 0 after SIGINT/SIGTERM, 1 if it cannot start or read the file, 2
// for bad flags.
#include <csignal>
#include <cstdio>
#include <string>
#include <utility>

#include "src/base/utf8.h"
#include "tools/common/flag_parser.h"
#include "tools/common/server_tls.h"
#include "tools/common/tls_at_exit.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace {

struct Flags {
  std::string config_path;
  std::string listen = "127.0.0.1:8086";
  int64_t max_bytes = mesh::controlplane::kDefaultMaxConfigBytes;
  bool verbose = false;
  std::string tls_cert, tls_key, tls_ca;  // PEM files
  bool help = false;
};

mesh::tools::FlagTable FlagTableFor(Flags* f) {
  using mesh::tools::kNoMax;
  mesh::tools::FlagTable table = {
      {"config", "FILE", mesh::tools::TextFlag(&f->config_path),
       "JSON file of targets, endpoints and profiles\n(docs/linkerd.md)"},
      {"listen", "HOST:PORT", mesh::tools::TextFlag(&f->listen),
       "address to serve on (default 127.0.0.1:8086)"},
      {"max-config-bytes", "N",
       mesh::tools::IntFlag(&f->max_bytes, 1, kNoMax,
                            "must be a positive number of bytes"),
       "larger config files are refused\n(default 67108864, 64 MiB)"},
      {"verbose", "", mesh::tools::SwitchFlag(&f->verbose),
       "one line per xDS request and response\n(stream, node, type, version, "
       "nonce, names, ACK/NACK)"},
  };
  for (mesh::tools::Flag& flag :
       mesh::tools::ServerTlsFlags(&f->tls_cert, &f->tls_key, &f->tls_ca)) {
    table.push_back(std::move(flag));
  }
  table.push_back({"help", "", mesh::tools::SwitchFlag(&f->help), "this text"});
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  mesh::tools::KeepTlsLibraryAtExit();
  Flags flags;
  absl::Status parsed =
      mesh::tools::ParseFlags(argc, argv, FlagTableFor(&flags));
  if (parsed.ok() && !flags.help && flags.config_path.empty()) {
    parsed = absl::InvalidArgumentError("--config: is required");
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> tls = nullptr;
  if (parsed.ok()) {
    tls = mesh::tools::ServerTlsFromFiles(flags.tls_cert, flags.tls_key,
                                          flags.tls_ca);
    parsed = tls.status();
  }
  if (!parsed.ok()) {
    return mesh::tools::BadFlags("mesh-control-plane", argv[0], parsed);
  }
  if (flags.help) {
    Flags unused;
    std::printf(
        "usage: %s --config=FILE [--listen=HOST:PORT] "
        "[--max-config-bytes=N] [--verbose]\n"
        "       [--tls-cert=FILE --tls-key=FILE [--tls-ca=FILE]]\n%s",
        argv[0], mesh::tools::FlagHelp(FlagTableFor(&unused)).c_str());
    return 0;
  }
  const std::string& config_path = flags.config_path;

  // Block the stop signals before gRPC starts threads, then wait for one.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto cp = mesh::controlplane::ControlPlane::Start(flags.listen, {},
                                                    flags.verbose, *tls);
  if (!cp.ok()) {
    std::fprintf(stderr, "mesh-control-plane: %s\n",
                 cp.status().ToString().c_str());
    return 1;
  }
  if (absl::Status s = (*cp)->WatchFile(config_path, absl::Milliseconds(200),
                                        flags.max_bytes);
      !s.ok()) {
    std::fprintf(stderr, "mesh-control-plane: %s\n",
                 mesh::internal::PrintableText(s.message()).c_str());
    return 1;
  }
  std::printf(
      "mesh-control-plane: serving %s on 127.0.0.1:%d (Linkerd "
      "Destination.Get and GetProfile, xDS ADS)%s\n",
      config_path.c_str(), (*cp)->port(),
      *tls == nullptr
          ? ""
          : (flags.tls_ca.empty() ? " over TLS" : " over mutual TLS"));
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop, &signal);
  std::printf("mesh-control-plane: signal %d, stopping\n", signal);
  (*cp)->Kill();
  return 0;
}

// mesh-echo-server: one EchoBackend (tools/common/echo_backend.h) as a
// process, for trying mesh-call and the control plane by hand and for the
// CLI tests. Answers every unary method by echoing the request, after an
// optional delay, or with a fixed error status. Prints its address
// ("127.0.0.1:PORT", "[::1]:PORT") on stdout once listening; runs until SIGINT
// or SIGTERM.
//
//   mesh-echo-server --port 0 --delay-ms 5 --jitter-ms 2
//   mesh-echo-server --port 7001 --fail-status UNAVAILABLE
//   mesh-echo-server --host 127.0.0.2 --port 7001   # another loopback address
//   mesh-echo-server --tls-cert cert.pem --tls-key key.pem --tls-ca ca.pem
//
// With --tls-cert and --tls-key it serves TLS; with --tls-ca too it
// requires client certificates that chain to that CA (mutual TLS).
//
// Exits 0 after a signal, 1 if it cannot listen, 2 for a bad flag (or TLS
// files that cannot be read or do not check out).

#include <signal.h>

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "tools/common/echo_backend.h"
#include "tools/common/flag_parser.h"
#include "tools/common/grpc_codes.h"
#include "tools/common/server_tls.h"
#include "tools/common/tls_at_exit.h"

namespace {

struct ServerFlags {
  std::string host = "127.0.0.1";
  int port = 0;
  int delay_ms = 0;
  int jitter_ms = 0;
  grpc::StatusCode fail_status = grpc::StatusCode::OK;
  std::string tls_cert;  // PEM files
  std::string tls_key;
  std::string tls_ca;
  bool help = false;
};

mesh::tools::FlagTable ServerFlagTable(ServerFlags* f) {
  using mesh::tools::IntFlag;
  using mesh::tools::kNoMax;
  constexpr char kNotNegative[] = "must be an integer >= 0";
  mesh::tools::FlagTable table = {
      {"host", "ADDR", mesh::tools::TextFlag(&f->host, "needs an IP address"),
       "listen on this IP address (default 127.0.0.1;\n"
       "e.g. 127.0.0.2, or ::1)"},
      {"port", "N", IntFlag(&f->port, 0, 65535, "must be an integer 0..65535"),
       "listen on port N of --host; 0 (default) picks a\nfree port"},
      {"delay-ms", "N", IntFlag(&f->delay_ms, 0, kNoMax, kNotNegative),
       "answer each call after N ms (default 0)"},
      {"jitter-ms", "N", IntFlag(&f->jitter_ms, 0, kNoMax, kNotNegative),
       "plus up to N ms more, uniformly random (default 0)"},
      {"fail-status", "CODE",
       [f](absl::string_view value) {
         std::optional<absl::StatusCode> code =
             mesh::tools::ParseGrpcCode(value);
         if (!code) {
           return absl::InvalidArgumentError(
               "must be a gRPC status code name or number 0..16");
         }
         f->fail_status = static_cast<grpc::StatusCode>(*code);
         return absl::OkStatus();
       },
       "answer with status CODE (name or number) instead\nof echoing"},
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
  ServerFlags flags;
  if (absl::Status s =
          mesh::tools::ParseFlags(argc, argv, ServerFlagTable(&flags));
      !s.ok()) {
    return mesh::tools::BadFlags("mesh-echo-server", argv[0], s);
  }
  if (flags.help) {
    ServerFlags unused;
    std::printf(
        "usage: %s [--host ADDR] [--port N] [--delay-ms N] [--jitter-ms N] "
        "[--fail-status CODE]\n       [--tls-cert FILE --tls-key FILE "
        "[--tls-ca FILE]]\n%s"
        "Prints the address it listens on, then serves until "
        "SIGINT/SIGTERM.\n",
        argv[0], mesh::tools::FlagHelp(ServerFlagTable(&unused)).c_str());
    return 0;
  }

  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> tls =
      mesh::tools::ServerTlsFromFiles(flags.tls_cert, flags.tls_key,
                                      flags.tls_ca);
  if (!tls.ok()) {
    return mesh::tools::BadFlags("mesh-echo-server", argv[0], tls.status());
  }

  // Blocked before gRPC starts its threads, which inherit the mask: the
  // signals then wait for sigwait below instead of killing the process.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto backend = mesh::tools::EchoBackend::Start(flags.port, *tls, flags.host);
  if (!backend.ok()) {
    std::fprintf(stderr, "mesh-echo-server: %s\n",
                 backend.status().ToString().c_str());
    return 1;
  }
  (*backend)->set_delay(absl::Milliseconds(flags.delay_ms));
  (*backend)->set_jitter(absl::Milliseconds(flags.jitter_ms));
  (*backend)->set_status(flags.fail_status);
  std::printf("%s\n", (*backend)->address().c_str());
  std::fflush(stdout);

  int sig = 0;
  while (sigwait(&signals, &sig) != 0) {
  }
  std::fprintf(stderr, "mesh-echo-server: signal %d, %lld calls answered\n",
               sig, static_cast<long long>((*backend)->calls_answered()));
  return 0;
}

// mesh-echo-server: one EchoBackend (tools/common/echo_backend.h) as a
// process, for trying mesh-call and the control plane by hand and for the
// CLI tests. Answers every unary method by echoing the request, after an
// optional delay, or with a fixed error status. Prints its address
// ("127.0.0.1:PORT") on stdout once listening; runs until SIGINT or SIGTERM.
//
//   mesh-echo-server --port 0 --delay-ms 5 --jitter-ms 2
//   mesh-echo-server --port 7001 --fail-status UNAVAILABLE
//
// Exits 0 after a signal, 1 if it cannot listen, 2 for a bad flag.

#include <signal.h>

#include <cstdio>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "tools/common/echo_backend.h"
#include "tools/common/grpc_codes.h"

namespace {

constexpr char kUsage[] =
    "usage: %s [--port N] [--delay-ms N] [--jitter-ms N] [--fail-status "
    "CODE]\n"
    "  --port N          listen on 127.0.0.1:N; 0 (default) picks a free "
    "port\n"
    "  --delay-ms N      answer each call after N ms (default 0)\n"
    "  --jitter-ms N     plus up to N ms more, uniformly random (default 0)\n"
    "  --fail-status C   answer with status C (name or number) instead of "
    "echoing\n"
    "Prints the address it listens on, then serves until SIGINT/SIGTERM.\n";

struct ServerFlags {
  int port = 0;
  int delay_ms = 0;
  int jitter_ms = 0;
  grpc::StatusCode fail_status = grpc::StatusCode::OK;
  bool help = false;
};

// False, after printing why, for a bad flag.
bool ParseFlags(int argc, char** argv, ServerFlags* flags) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      flags->help = true;
      continue;
    }
    absl::string_view name = arg, value;
    if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "mesh-echo-server: %s needs a value\n", argv[i]);
      return false;
    }
    bool ok = false;
    if (name == "--port") {
      ok = absl::SimpleAtoi(value, &flags->port) && flags->port >= 0 &&
           flags->port <= 65535;
    } else if (name == "--delay-ms") {
      ok = absl::SimpleAtoi(value, &flags->delay_ms) && flags->delay_ms >= 0;
    } else if (name == "--jitter-ms") {
      ok = absl::SimpleAtoi(value, &flags->jitter_ms) && flags->jitter_ms >= 0;
    } else if (name == "--fail-status") {
      std::optional<absl::StatusCode> code = mesh::tools::ParseGrpcCode(value);
      ok = code.has_value();
      if (ok) flags->fail_status = static_cast<grpc::StatusCode>(*code);
    } else {
      std::fprintf(stderr, "mesh-echo-server: unknown flag %s\n",
                   std::string(name).c_str());
      return false;
    }
    if (!ok) {
      std::fprintf(stderr, "mesh-echo-server: bad value '%s' for %s\n",
                   std::string(value).c_str(), std::string(name).c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  ServerFlags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    std::fprintf(stderr, kUsage, argv[0]);
    return 2;
  }
  if (flags.help) {
    std::printf(kUsage, argv[0]);
    return 0;
  }

  // Blocked before gRPC starts its threads, which inherit the mask: the
  // signals then wait for sigwait below instead of killing the process.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto backend = mesh::tools::EchoBackend::Start(flags.port);
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

// mesh-tap: watches live requests an application sends through its mesh,
// like `linkerd viz tap`. A client of Linkerd's tap API (Tap.Observe), so it
// works against any server of that API, ours (MeshOptions::tap_address,
// `mesh-call --tap`) or a Linkerd proxy's.
//
//   mesh-tap 127.0.0.1:4190 --path-prefix /books.Library/ --limit 10
//   mesh-tap 127.0.0.1:4190 --label zone=a --method POST --headers --json
//
// See --help (flags.cc) for the flags and the exit status, format.h for the
// output.

#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "linkerd/tap.grpc.pb.h"
#include "tools/common/grpc_codes.h"
#include "tools/common/signals.h"
#include "tools/common/tls_at_exit.h"
#include "tools/mesh-tap/flags.h"
#include "tools/mesh-tap/format.h"

namespace mesh::tools {
namespace {

namespace wire = ::io::linkerd::proxy::tap;

constexpr char kDroppedEventsKey[] = "mesh-tap-dropped-events";

// Lets the signal thread cancel the Observe call while it runs.
//
// Thread-safe.
class Canceller {
 public:
  void Arm(grpc::ClientContext* context) {
    absl::MutexLock lock(&mu_);
    context_ = context;
  }
  // After it, the context may be destroyed.
  void Disarm() {
    absl::MutexLock lock(&mu_);
    context_ = nullptr;
  }
  // Returns how many interrupts there have been, this one included.
  int Interrupt() {
    absl::MutexLock lock(&mu_);
    if (context_ != nullptr) context_->TryCancel();
    return ++interrupts_;
  }
  int interrupts() const {
    absl::MutexLock lock(&mu_);
    return interrupts_;
  }

 private:
  mutable absl::Mutex mu_;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  int interrupts_ ABSL_GUARDED_BY(mu_) = 0;
};

// Our Observe server counts the events it could not send because this
// client read too slowly (src/tap/observe_server.h); says so on stderr.
void ReportDropped(const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find(kDroppedEventsKey);
  if (it == trailers.end()) return;
  std::string count(it->second.data(), it->second.size());
  if (count == "0") return;
  std::fprintf(stderr,
               "mesh-tap: the server dropped %s events (read too slowly)\n",
               count.c_str());
}

int Main(int argc, char** argv) {
  absl::StatusOr<TapFlags> parsed = ParseTapFlags(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "mesh-tap: %s\n(see %s --help)\n",
                 std::string(parsed.status().message()).c_str(), argv[0]);
    return 2;
  }
  const TapFlags& flags = *parsed;
  if (flags.help) {
    std::fputs(TapUsage(argv[0]).c_str(), stdout);
    return 0;
  }

  // Before any thread starts. SIGINT/SIGTERM cancel the call (the stream
  // then ends and mesh-tap exits 0); a second one exits at once.
  BlockTerminationSignals();
  auto canceller = std::make_shared<Canceller>();
  WatchTerminationSignals([canceller] { return canceller->Interrupt(); }, 2);

  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(flags.address, grpc::InsecureChannelCredentials());
  std::unique_ptr<wire::Tap::Stub> stub = wire::Tap::NewStub(channel);
  grpc::ClientContext context;
  const bool timed = flags.timeout != absl::InfiniteDuration();
  if (timed)
    context.set_deadline(absl::ToChronoTime(absl::Now() + flags.timeout));
  canceller->Arm(&context);

  // Fail-fast (gRPC's default): a server that refuses connections ends the
  // call at once with UNAVAILABLE.
  std::unique_ptr<grpc::ClientReader<wire::TapEvent>> reader =
      stub->Observe(&context, ObserveRequestFor(flags));
  wire::TapEvent event;
  int64_t events = 0;
  while (reader->Read(&event)) {
    std::string out =
        flags.json ? FormatEventJson(event) : FormatEventLine(event);
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    ++events;
  }
  grpc::Status status = reader->Finish();
  canceller->Disarm();
  ReportDropped(context);
  if (status.ok()) return 0;  // the limit was reached

  const bool stopped =
      (timed && status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) ||
      (canceller->interrupts() > 0 &&
       status.error_code() == grpc::StatusCode::CANCELLED);
  if (stopped) {
    // Stopped by us: fine if the stream was up, whether or not traffic
    // came; not if the server never answered the connection.
    if (events > 0 || channel->GetState(false) == GRPC_CHANNEL_READY) {
      return 0;
    }
    std::fprintf(stderr, "mesh-tap: %s: no connection before stopping\n",
                 flags.address.c_str());
    return 1;
  }
  std::fprintf(
      stderr, "mesh-tap: %s: %s: %s\n", flags.address.c_str(),
      GrpcCodeName(static_cast<absl::StatusCode>(status.error_code())).c_str(),
      status.error_message().c_str());
  return 1;
}

}  // namespace
}  // namespace mesh::tools

int main(int argc, char** argv) {
  mesh::tools::KeepTlsLibraryAtExit();
  return mesh::tools::Main(argc, argv);
}

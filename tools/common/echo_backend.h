// EchoBackend: a real gRPC server on loopback that answers every unary method
// by echoing the request bytes, after an adjustable delay and with an
// adjustable status. The quickstart, the integration tests and the benchmarks
// use it as "a backend that can be made slow, failing, or killed". Request
// metadata named "echo-*" is sent back as response (initial) metadata.
//
//   auto backend = mesh::tools::EchoBackend::Start();
//   (*backend)->set_delay(absl::Milliseconds(20));
//   std::string address = (*backend)->address();  // "127.0.0.1:PORT"
//
// Thread-safe.
#ifndef MESH_TOOLS_COMMON_ECHO_BACKEND_H_
#define MESH_TOOLS_COMMON_ECHO_BACKEND_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace mesh::tools {

class EchoBackend {
 public:
  // Listens on `host` (an IP address; "::1" for IPv6) at an ephemeral port
  // (or `port` if non-zero), in plaintext unless `credentials` are given
  // (TLS).
  static absl::StatusOr<std::unique_ptr<EchoBackend>> Start(
      int port = 0,
      std::shared_ptr<grpc::ServerCredentials> credentials = nullptr,
      const std::string& host = "127.0.0.1");
  ~EchoBackend();

  std::string address() const;
  int port() const { return port_; }

  // Each call waits this long before answering (default 0).
  void set_delay(absl::Duration delay);
  absl::Duration delay() const;
  // Each call answers with this status instead of echoing (default OK).
  void set_status(grpc::StatusCode code);
  // Adds up to this much uniformly random extra delay per call (default 0).
  void set_jitter(absl::Duration jitter);
  // Each call stalls `stall` more with this probability (0..1; default 0):
  // a per-request slowness that no endpoint choice avoids.
  void set_stall(double probability, absl::Duration stall);

  // Calls received (started), and calls answered.
  int64_t calls_received() const { return received_.load(); }
  int64_t calls_answered() const { return answered_.load(); }
  // Calls started and not yet answered.
  int64_t in_flight() const { return received_.load() - answered_.load(); }
  // Calls the client cancelled before they were answered.
  int64_t calls_cancelled() const { return cancelled_.load(); }

  // Stops listening and fails calls in flight, as a killed process would.
  // Idempotent.
  void Kill();

 private:
  class Service;
  class Reactor;
  EchoBackend() = default;

  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string host_;  // as a URI writes it: "127.0.0.1", "[::1]"
  mutable absl::Mutex mu_;
  absl::Duration delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  absl::Duration jitter_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  grpc::StatusCode status_ ABSL_GUARDED_BY(mu_) = grpc::StatusCode::OK;
  double stall_probability_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration stall_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  std::atomic<int64_t> cancelled_{0};
  std::atomic<int64_t> received_{0};
  std::atomic<int64_t> answered_{0};
  std::atomic<bool> killed_{false};
};

}  // namespace mesh::tools

#endif  // MESH_TOOLS_COMMON_ECHO_BACKEND_H_

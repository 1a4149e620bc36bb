// TestEchoServer: a real gRPC server on 127.0.0.1 implementing
// meshtest.TestEcho (tests/proto/meshtest/echo.proto) with generated code,
// for the tests of generated stubs over mesh. Request metadata named
// "echo-*" comes back as initial metadata, "trail-*" as trailing metadata.
// With TLS (EchoServerTls) it serves over TLS, and with a client CA it
// requires and verifies client certificates, remembering their serials.
//
// Thread-safe.
#ifndef MESH_TESTS_SUPPORT_TEST_ECHO_SERVER_H_
#define MESH_TESTS_SUPPORT_TEST_ECHO_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "meshtest/echo.grpc.pb.h"
#include "src/base/mutex.h"

namespace mesh::testing {

struct EchoServerTls {
  std::string cert_chain;  // PEM; empty: plaintext
  std::string private_key;
  // PEM; set: client certificates are required and verified against it.
  std::string client_ca;
  // Parse each call's client certificate for client_serials() (off for the
  // benchmarks: it costs the server a certificate parse per call).
  bool record_client_serials = true;
};

class TestEchoServer {
 public:
  // Listens on an ephemeral port; aborts the test binary if it cannot.
  static std::unique_ptr<TestEchoServer> Start(const EchoServerTls& tls = {});
  ~TestEchoServer();

  // The serial (upper-case hex) of the client certificate of each call
  // that presented one, in order.
  std::vector<std::string> client_serials() const;

  const std::string& address() const { return address_; }
  // Calls that began, and calls the server saw cancelled while it worked.
  int calls() const { return calls_.load(); }
  int cancellations_seen() const { return cancellations_.load(); }

 private:
  class Service;
  TestEchoServer() = default;
  std::string address_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::atomic<int> calls_{0};
  std::atomic<int> cancellations_{0};
  bool record_client_serials_ = false;
  mutable internal::Mutex mu_;
  std::vector<std::string> client_serials_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_TEST_ECHO_SERVER_H_

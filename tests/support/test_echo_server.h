// TestEchoServer: a real gRPC server on 127.0.0.1 implementing
// meshtest.TestEcho (tests/proto/meshtest/echo.proto) with generated code,
// for the tests of generated stubs over mesh. Request metadata named
// "echo-*" comes back as initial metadata, "trail-*" as trailing metadata.
//
// Thread-safe.
#ifndef MESH_TESTS_SUPPORT_TEST_ECHO_SERVER_H_
#define MESH_TESTS_SUPPORT_TEST_ECHO_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>

#include "meshtest/echo.grpc.pb.h"

namespace mesh::testing {

class TestEchoServer {
 public:
  // Listens on an ephemeral port; aborts the test binary if it cannot.
  static std::unique_ptr<TestEchoServer> Start();
  ~TestEchoServer();

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
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_TEST_ECHO_SERVER_H_

// RawStreamServer: a gRPC server on 127.0.0.1 that answers every
// server-streaming call (Linkerd's Destination.Get and GetProfile, say) with
// scripted raw bytes — well-formed messages, or bytes no client can parse,
// or messages past a receive limit — and then keeps the stream open until
// the client cancels it or the server stops. For tests of how a client
// survives a hostile control plane.
//
//   auto server = RawStreamServer::Start([](const std::string& method,
//                                           int stream) {
//     return std::vector<std::string>{good.SerializeAsString(), "\xff"};
//   });
//   options.address = server->address();
//
// Thread-safe.
#ifndef MESH_TESTS_SUPPORT_RAW_STREAM_SERVER_H_
#define MESH_TESTS_SUPPORT_RAW_STREAM_SERVER_H_

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/base/mutex.h"

namespace mesh::testing {

class RawStreamServer {
 public:
  // The messages to write on the `stream`-th call (from 0) of `method`
  // ("/pkg.Service/Method"), in order.
  using Script = std::function<std::vector<std::string>(
      const std::string& method, int stream)>;

  // Listens on 127.0.0.1 at an ephemeral port; aborts the test binary if it
  // cannot (the machine is broken, not the code under test).
  static std::unique_ptr<RawStreamServer> Start(Script script);
  ~RawStreamServer();

  std::string address() const;
  // Calls of `method` started, and those the client cancelled.
  int streams(const std::string& method) const;
  int cancelled(const std::string& method) const;
  // Messages of `method`'s calls that gRPC has taken for sending.
  int written(const std::string& method) const;

 private:
  class Service;
  class Reactor;
  RawStreamServer() = default;

  Script script_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  mutable internal::Mutex mu_;
  std::map<std::string, int> streams_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> cancelled_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> written_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_RAW_STREAM_SERVER_H_

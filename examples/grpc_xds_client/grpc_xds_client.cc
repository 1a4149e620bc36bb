// gRPC's own xDS client configured by mesh-control-plane: no mesh library,
// only grpc++. Any gRPC application (any language) does the same with a
// bootstrap that names the control plane and an "xds:///" target; the
// control plane serves that target's Listener, routes, Cluster and
// endpoints from the file it also serves Linkerd's API from (docs/xds.md).
//
//   mesh-grpc-xds-client 127.0.0.1:8086 echo.local:7000 /demo.Echo/Say 100
//
// Makes the calls one after another and prints how many each backend
// served. Exits 0 if all succeeded, 1 otherwise, 2 for bad arguments.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace {

// What GRPC_XDS_BOOTSTRAP (a file) or GRPC_XDS_BOOTSTRAP_CONFIG (the text)
// holds: the xDS server, plaintext, and this client's node. Istio's agent
// writes the same shape, with GENERATOR "grpc" asking istiod for
// proxyless configuration.
std::string BootstrapFor(const std::string& control_plane) {
  return R"({"xds_servers": [{"server_uri": ")" + control_plane +
         R"(", "channel_creds": [{"type": "insecure"}],)"
         R"( "server_features": ["xds_v3"]}],)"
         R"( "node": {"id": "sidecar~127.0.0.1~example-0.demo~demo.svc.cluster.local",)"
         R"( "cluster": "example", "metadata": {"GENERATOR": "grpc"}}})";
}

// One unary call of `method` with an empty body; the peer that served it,
// or "" and the error on stderr.
std::string CallOnce(grpc::GenericStub& stub, const std::string& method) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(5));
  grpc::Slice empty("");  // a ByteBuffer must hold a slice, even empty
  grpc::ByteBuffer request(&empty, 1), response;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status status;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   std::lock_guard<std::mutex> lock(mu);
                   status = std::move(s);
                   done = true;
                   cv.notify_one();
                 });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });  // the deadline ends the call
  if (!status.ok()) {
    std::fprintf(stderr, "call failed: %d %s\n", status.error_code(),
                 status.error_message().c_str());
    return "";
  }
  return context.peer();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 || std::atoi(argv[4]) <= 0) {
    std::fprintf(stderr,
                 "usage: %s CONTROL_PLANE TARGET METHOD CALLS\n"
                 "  e.g. %s 127.0.0.1:8086 echo.local:7000 /demo.Echo/Say "
                 "100\n",
                 argv[0], argv[0]);
    return 2;
  }
  const std::string target = argv[2], method = argv[3];
  const int calls = std::atoi(argv[4]);
  // Read once, at the first xds:/// channel: set it before creating one.
  setenv("GRPC_XDS_BOOTSTRAP_CONFIG", BootstrapFor(argv[1]).c_str(), 1);
  auto channel = grpc::CreateChannel("xds:///" + target,
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  std::map<std::string, int> served;
  int failed = 0;
  for (int i = 0; i < calls; ++i) {
    std::string peer = CallOnce(stub, method);
    if (peer.empty()) {
      ++failed;
    } else {
      ++served[peer];
    }
  }
  std::printf("xds:///%s: %d calls, %d failed\n", target.c_str(), calls,
              failed);
  for (const auto& [peer, n] : served) {
    std::printf("  %-28s %5d calls\n", peer.c_str(), n);
  }
  return failed == 0 ? 0 : 1;
}

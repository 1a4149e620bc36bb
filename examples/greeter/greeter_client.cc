// mesh-greeter-client: an ordinary generated gRPC stub whose channel comes
// from mesh. The only mesh-specific lines are where the channel is made;
// every call and stream below is routed, balanced (P2C), retried, tapped
// and counted by mesh.
//
//   mesh-greeter-client 127.0.0.1:PORT[,127.0.0.1:PORT...]
//
// The endpoints stand in for what a control plane would say: a real
// service would set MeshOptions::discovery to NewLinkerdDiscovery(...) or
// an xDS source and keep the rest unchanged.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "greeter.grpc.pb.h"
#include "mesh/mesh.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s HOST:PORT[,HOST:PORT...]\n", argv[0]);
    return 2;
  }
  // Where "greeter:50051" is: here, the endpoints given.
  std::vector<mesh::Endpoint> endpoints;
  std::string list = argv[1];
  for (size_t start = 0; start <= list.size();) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    endpoints.push_back({list.substr(start, comma - start)});
    start = comma + 1;
  }
  auto discovery = mesh::StaticDiscovery::Create();
  if (absl::Status s = discovery->SetEndpoints("greeter:50051", endpoints);
      !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 2;
  }
  mesh::MeshOptions options;
  options.discovery = discovery;
  auto mesh = mesh::Mesh::Create(options);
  if (!mesh.ok()) {
    std::fprintf(stderr, "%s\n", mesh.status().ToString().c_str());
    return 1;
  }

  // The one line that changes: the channel comes from mesh.
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      (*mesh)->NewGrpcChannel("greeter:50051");
  if (!channel.ok()) {
    std::fprintf(stderr, "%s\n", channel.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<greeter::Greeter::Stub> stub =
      greeter::Greeter::NewStub(*channel);

  // Unary calls, as with any channel.
  std::map<std::string, int> by_server;
  for (int i = 0; i < 6; ++i) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(2));
    greeter::HelloRequest request;
    request.set_name("mesh " + std::to_string(i));
    greeter::HelloReply reply;
    grpc::Status status = stub->SayHello(&context, request, &reply);
    if (!status.ok()) {
      std::fprintf(stderr, "SayHello: %s\n", status.error_message().c_str());
      return 1;
    }
    std::printf("SayHello  -> %-16s (from %s)\n", reply.message().c_str(),
                reply.server().c_str());
    ++by_server[reply.server()];
  }

  // A server stream: one endpoint for the whole stream.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
  greeter::HelloRequest request;
  request.set_name("stream");
  request.set_count(3);
  std::unique_ptr<grpc::ClientReader<greeter::HelloReply>> reader =
      stub->SayHellos(&context, request);
  greeter::HelloReply reply;
  while (reader->Read(&reply)) {
    std::printf("SayHellos -> %-16s (from %s)\n", reply.message().c_str(),
                reply.server().c_str());
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) {
    std::fprintf(stderr, "SayHellos: %s\n", status.error_message().c_str());
    return 1;
  }
  std::printf("%zu server(s) answered the unary calls\n", by_server.size());
  return 0;
}

// mesh-greeter-server: a plain gRPC server of greeter.Greeter on 127.0.0.1,
// the backend of the greeter example. Prints "listening on ADDRESS" and
// serves until killed.
//
//   mesh-greeter-server NAME [PORT]     (PORT 0 or none: any free port)
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "greeter.grpc.pb.h"

namespace {

class GreeterService final : public greeter::Greeter::Service {
 public:
  explicit GreeterService(std::string name) : name_(std::move(name)) {}

  grpc::Status SayHello(grpc::ServerContext*,
                        const greeter::HelloRequest* request,
                        greeter::HelloReply* reply) override {
    reply->set_message("Hello, " + request->name() + "!");
    reply->set_server(name_);
    return grpc::Status::OK;
  }

  grpc::Status SayHellos(
      grpc::ServerContext*, const greeter::HelloRequest* request,
      grpc::ServerWriter<greeter::HelloReply>* writer) override {
    for (int i = 1; i <= request->count(); ++i) {
      greeter::HelloReply reply;
      reply.set_message("Hello #" + std::to_string(i) + ", " + request->name() +
                        "!");
      reply.set_server(name_);
      if (!writer->Write(reply)) break;
    }
    return grpc::Status::OK;
  }

 private:
  const std::string name_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s NAME [PORT]\n", argv[0]);
    return 2;
  }
  GreeterService service(argv[1]);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(
      std::string("127.0.0.1:") + (argc == 3 ? argv[2] : "0"),
      grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "%s: cannot listen\n", argv[0]);
    return 1;
  }
  std::printf("listening on 127.0.0.1:%d\n", port);
  std::fflush(stdout);
  server->Wait();
  return 0;
}

#include "src/transport/grpc_callback_queue.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>

namespace mesh::internal {

void PinGrpcCallbackQueue() {
  static const bool pinned = [] {
    // Deliberately never destroyed (reachable from this static).
    static auto* channel = new std::shared_ptr<grpc::Channel>(
        grpc::CreateChannel("unix:/nonexistent/mesh-pins-the-callback-queue",
                            grpc::InsecureChannelCredentials()));
    struct Call {
      grpc::ClientContext context;
      grpc::ByteBuffer request;
      grpc::ByteBuffer response;
    };
    // Like the channel, kept for the life of the process: reachable from a
    // static, so no leak checker counts it, and nothing is freed while gRPC
    // may still hold the call at exit.
    static auto* call = new Call();
    grpc::Slice empty("");
    call->request = grpc::ByteBuffer(&empty, 1);  // a valid, empty message
    call->context.set_deadline(std::chrono::system_clock::now());
    // One callback-API call is what makes the channel take its reference on
    // the queue; it fails at once (deadline already passed).
    grpc::GenericStub(*channel).UnaryCall(&call->context, "/mesh.Pin/Pin",
                                          grpc::StubOptions(), &call->request,
                                          &call->response, [](grpc::Status) {});
    return true;
  }();
  (void)pinned;
}

}  // namespace mesh::internal

// The interceptors of the hijacking grpc::Channel (grpc_channel.h): one
// per call, made by its factory. A unary call is sent through the
// ChannelCore once its request is complete (grpc_unary_interceptor.cc); a
// stream is a StreamCall opened at its initial metadata, gRPC's batches
// mapped onto it (grpc_stream_interceptor.cc).
//
//   return NewUnaryInterceptor(core, info, absl::OkStatus());
//
// Each interceptor is gRPC's, which deletes it with the call's context.
#ifndef MESH_SRC_CHANNEL_GRPC_INTERCEPTORS_H_
#define MESH_SRC_CHANNEL_GRPC_INTERCEPTORS_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "src/channel/channel_core.h"

namespace mesh::internal {

// A unary call's interceptor; a `refused` error answers the call with it,
// sending nothing.
grpc::experimental::Interceptor* NewUnaryInterceptor(
    std::shared_ptr<ChannelCore> core, grpc::experimental::ClientRpcInfo* info,
    absl::Status refused);

// A client-, server- or bidi-streaming call's interceptor.
grpc::experimental::Interceptor* NewStreamInterceptor(
    std::shared_ptr<ChannelCore> core, grpc::experimental::ClientRpcInfo* info);

// What both use (the two functions are defined with the unary one).
inline bool Has(grpc::experimental::InterceptorBatchMethods* methods,
                grpc::experimental::InterceptionHookPoints point) {
  return methods->QueryInterceptionHookPoint(point);
}
// The context's deadline; infinite without one (or without a context).
absl::Time DeadlineOf(const grpc::ClientContext* context);
// `status` with its grpc-status-details-bin payload, if any.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_GRPC_INTERCEPTORS_H_

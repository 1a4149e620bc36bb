// A grpc::Channel whose calls mesh completes (Mesh::NewGrpcChannel).
//
// The channel's one client interceptor hijacks every call: it takes the
// request metadata and the serialized message from gRPC's send hooks, sends
// the call through a ChannelCore (route, pick, retries, tap, metrics), and
// fills gRPC's receive hooks — initial metadata, the message, the status
// with its details and trailing metadata — from mesh's answer. The outer
// channel itself never connects anywhere. TryCancel reaches the call through
// the PRE_SEND_CANCEL hook; the ClientContext's deadline bounds it.
//
// Thread-safe, as any grpc::Channel.
#ifndef MESH_SRC_CHANNEL_GRPC_CHANNEL_H_
#define MESH_SRC_CHANNEL_GRPC_CHANNEL_H_

#include <grpcpp/grpcpp.h>

#include <memory>

#include "src/channel/channel_core.h"

namespace mesh::internal {

// A channel whose calls go through `core` (which it keeps alive).
std::shared_ptr<grpc::Channel> NewHijackingChannel(
    std::shared_ptr<ChannelCore> core);

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_GRPC_CHANNEL_H_

// The default transport: gRPC, one channel per endpoint (NewGrpcTransport).
// The interface it implements, for an application's own HTTP/2 client, is
// mesh/spi/transport.h.
//
//   mesh::GrpcTransportOptions o;
//   o.channel_args = {{"grpc.keepalive_time_ms", 10000}};
//   options.transport_factory = [o] { return mesh::NewGrpcTransport(o); };
//
// NewGrpcTransport is thread-safe; so is the transport it returns.
#ifndef MESH_TRANSPORT_H_
#define MESH_TRANSPORT_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mesh/export.h"
#include "mesh/spi/transport.h"

namespace mesh {

struct MESH_EXPORT GrpcTransportOptions {
  // Extra channel arguments for every per-endpoint grpc::Channel, e.g.
  // {"grpc.keepalive_time_ms", 10000}. Integer arguments only.
  std::vector<std::pair<std::string, int>> channel_args;
};

// The default transport: one long-lived grpc::Channel (pick_first, its own
// subchannel) per endpoint address, created on first use, reused, and closed
// when the address leaves (RetainOnly). Calls go through gRPC's generic
// callback API, so no thread waits per call.
MESH_EXPORT std::unique_ptr<Transport> NewGrpcTransport(
    const GrpcTransportOptions& options = {});

}  // namespace mesh

#endif  // MESH_TRANSPORT_H_

// What the gRPC transport's unary calls (grpc_transport.cc) and streams
// (grpc_stream.cc) share: a request's context prepared, a finished call's
// context and status read back into a TransportResponse, and which call's
// callback this thread is running.
//
//   Prepare(context, endpoint, request);
//   ...  // the call finishes with `status`
//   TransportResponse response = ResponseOf(context, status, tls_address);
//
// Pure functions, thread-safe; the finishing calls are per thread.
#ifndef MESH_SRC_TRANSPORT_GRPC_CALL_PARTS_H_
#define MESH_SRC_TRANSPORT_GRPC_CALL_PARTS_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mesh/endpoint.h"
#include "mesh/metadata.h"
#include "mesh/transport.h"

namespace mesh::internal {

Metadata ToMetadata(const std::multimap<grpc::string_ref, grpc::string_ref>& m);

// What a finished call's context and status say (no body). A call over TLS
// (`tls_address` set) that could not connect says so, naming the address
// and why the handshake was refused when mesh's checks refused it.
TransportResponse ResponseOf(grpc::ClientContext& context,
                             const grpc::Status& status,
                             const std::string& tls_address = "");

// The answer to a request that could not be sent (shut down, a bad
// address).
TransportResponse NotSent(absl::Status error);

// A request's deadline, authority and metadata on its context.
void Prepare(grpc::ClientContext& context, const Endpoint& endpoint,
             const TransportRequest& request);

// Marks the call whose callback this thread is about to run, until the
// matching End: GrpcTransport::Shutdown called from inside that callback
// (say, by destroying the Mesh) must not wait for the very call it runs in,
// nor for one further out whose callback led to it (a hedged call's
// winner cancels its losers, which may finish inline, nested).
void BeginFinishingCall(const void* call);
void EndFinishingCall();
// The calls whose callbacks this thread is running, innermost last.
const std::vector<const void*>& FinishingCalls();

}  // namespace mesh::internal

#endif  // MESH_SRC_TRANSPORT_GRPC_CALL_PARTS_H_

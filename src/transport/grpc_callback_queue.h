// PinGrpcCallbackQueue keeps gRPC's process-wide callback completion queue
// alive for the life of the process.
//
// gRPC 1.51 reference-counts that queue by the channels that have used the
// callback API, and tears it down (joining its threads) when the count
// reaches zero; a process that creates and drops channels — a Mesh per
// test, or meshes made and destroyed at run time — runs that teardown again
// and again, and it races (an abort "prior > 0" in ref_counted.h). One
// channel that used the queue and is never destroyed keeps the count above
// zero. It targets a Unix socket path that cannot exist, so it never sends a
// byte.
//
// Called before mesh first uses the callback API (a unary call through
// Transport::Send, a stream, a discovery stream, the Observe server), not
// before: while that
// queue lives, its threads poll every connection of the process (gRPC
// 1.51's epoll1 poller), so even a synchronous call's answer is read on one
// of them and handed to the caller (about 3 context switches a call instead
// of 1). A process that only makes synchronous calls over static discovery
// never starts them.
//
// Idempotent; thread-safe; after the first call, one load.
#ifndef MESH_SRC_TRANSPORT_GRPC_CALLBACK_QUEUE_H_
#define MESH_SRC_TRANSPORT_GRPC_CALLBACK_QUEUE_H_

#include "src/base/internal_export.h"

namespace mesh::internal {

MESH_INTERNAL_EXPORT void PinGrpcCallbackQueue();

}  // namespace mesh::internal

#endif  // MESH_SRC_TRANSPORT_GRPC_CALLBACK_QUEUE_H_

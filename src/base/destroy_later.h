// DestroyLater hands objects to a process-wide thread that destroys them.
//
// gRPC 1.51 runs callback-API completions on a few shared threads; if the
// last reference to a grpc::Channel (or to whatever owns one: a transport, a
// destination, a channel's core) is dropped on one of them, gRPC can join
// its own thread and later crash (grpc#37858), and a destructor that blocks
// there can starve the callbacks it waits for (grpc#36609). So whatever a
// completion might be the last owner of is released here instead.
//
//   DestroyLater([keep = std::move(shared_thing)] {});  // dropped off-thread
//
// Objects are destroyed in batches, at most ~2 ms after they are handed
// over (sooner when the thread is idle or a batch fills).
//
// Thread-safe. The thread is started on first use and lives as long as the
// process (it holds no work at exit that matters).
#ifndef MESH_SRC_TRANSPORT_REAPER_H_
#define MESH_SRC_TRANSPORT_REAPER_H_

#include "absl/functional/any_invocable.h"

namespace mesh::internal {

// Destroys `holder` (without calling it) on the reaper thread.
void DestroyLater(absl::AnyInvocable<void()> holder);

// Keeps gRPC's process-wide callback completion queue alive for the life of
// the process. gRPC 1.51 reference-counts that queue by the channels that
// have used the callback API, and tears it down (joining its threads) when
// the count reaches zero; a process that creates and drops channels — a
// Mesh per test, or meshes made and destroyed at run time — runs that
// teardown again and again, and it races (an abort "prior > 0" in
// ref_counted.h). One channel that used the queue and is never destroyed
// keeps the count above zero. It targets a Unix socket path that cannot
// exist, so it never sends a byte. Idempotent; thread-safe.
void PinGrpcCallbackQueue();

}  // namespace mesh::internal

#endif  // MESH_SRC_TRANSPORT_REAPER_H_

// DestroyLater hands objects to one process-wide thread that destroys them,
// for the threads that must not: gRPC's callback threads.
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
#ifndef MESH_SRC_BASE_DESTROY_LATER_H_
#define MESH_SRC_BASE_DESTROY_LATER_H_

#include "absl/functional/any_invocable.h"
#include "src/base/internal_export.h"

namespace mesh::internal {

// Destroys `holder` (without calling it) on the destroying thread.
MESH_INTERNAL_EXPORT void DestroyLater(absl::AnyInvocable<void()> holder);

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_DESTROY_LATER_H_

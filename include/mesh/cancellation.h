// Cancellation: a flag a caller raises to give up on a call, and that the
// call's steps (the wait for endpoints, the transport's request) watch.
//
//   auto cancel = std::make_shared<mesh::Cancellation>();
//   mesh::CallOptions opts;
//   opts.cancel = cancel;
//   channel->CallRawAsync(method, body, opts, std::move(done));
//   cancel->Cancel();  // `done` gets CANCELLED soon; the server sees it
//
// Thread-safe. Shared (std::shared_ptr) by the caller and the calls it was
// given to; one may serve several calls, which it then cancels together.
#ifndef MESH_CANCELLATION_H_
#define MESH_CANCELLATION_H_

#include <cstdint>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "mesh/export.h"

namespace mesh {

class MESH_EXPORT Cancellation {
 public:
  Cancellation();
  ~Cancellation();
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  // Raises the flag and runs every watcher, on this thread, before
  // returning. Idempotent.
  void Cancel();
  bool cancelled() const;

  // For the steps of a call: runs `on_cancel` once when Cancel is called,
  // on the cancelling thread; it must not block. Already cancelled: runs it
  // now, inline, and returns 0. Otherwise returns an id for Unwatch.
  uint64_t Watch(absl::AnyInvocable<void()> on_cancel);
  // Forgets watcher `id` (0: none). If it is running on another thread,
  // waits until it has returned; afterwards it will not run. May be called
  // from inside the watcher itself.
  void Unwatch(uint64_t id);

 private:
  struct State;
  const std::unique_ptr<State> state_;
};

}  // namespace mesh

#endif  // MESH_CANCELLATION_H_

// Cancellation: a flag a caller raises to give up on a call, and that the
// call's steps (the wait for endpoints, the transport's request) watch.
//
//   auto cancel = std::make_shared<mesh::Cancellation>();
//   mesh::CallOptions opts;
//   opts.cancel = cancel;
//   channel->CallRawAsync(method, body, opts, done);
//   cancel->Cancel();  // `done` gets CANCELLED soon; the server sees it
//
// Thread-safe. Shared (std::shared_ptr) by the caller and the calls it was
// given to; one may serve several calls, which it then cancels together.
#ifndef MESH_CANCELLATION_H_
#define MESH_CANCELLATION_H_

#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace mesh {

class Cancellation {
 public:
  Cancellation() = default;
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
  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::vector<std::pair<uint64_t, absl::AnyInvocable<void()>>> watchers_
      ABSL_GUARDED_BY(mu_);
  // The watcher Cancel is running (0: none), and the thread running it.
  uint64_t running_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread::id runner_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh

#endif  // MESH_CANCELLATION_H_

// TimerScope: one owner's tasks on a TimerThread it shares with others (a
// Mesh lends its timer thread to its discovery sources). Close() ends them
// all at once, without touching anyone else's: once it returns, none of the
// scope's tasks is running (unless Close was called from one) or ever will.
//
//   TimerScope timers(mesh_timers);
//   TimerScope::Id id = timers.RunAfter(absl::Seconds(1), [this] {...});
//   timers.Close();  // in the owner's shutdown, before its state goes
//
// Thread-safe. Destroying it closes it. It shares ownership of the thread.
#ifndef MESH_SRC_BASE_TIMER_SCOPE_H_
#define MESH_SRC_BASE_TIMER_SCOPE_H_

#include <cstdint>
#include <map>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "src/base/internal_export.h"
#include "src/base/mutex.h"
#include "src/base/timer_thread.h"

namespace mesh::internal {

class MESH_INTERNAL_EXPORT TimerScope {
 public:
  using Id = uint64_t;

  explicit TimerScope(std::shared_ptr<TimerThread> timers);
  ~TimerScope();
  TimerScope(const TimerScope&) = delete;
  TimerScope& operator=(const TimerScope&) = delete;

  // Runs `task` on the timer thread after `delay`, unless the scope is
  // closed: then returns 0 and drops the task. Ids are the scope's own.
  Id RunAfter(absl::Duration delay, absl::AnyInvocable<void()> task);

  // Cancels `id`, as TimerThread::Cancel does (waits for it if it runs now,
  // unless called from it). Unknown or finished ids are ignored.
  void Cancel(Id id);

  // Refuses later tasks, cancels the waiting ones and waits for one running
  // now (unless called from it). Idempotent.
  void Close();

  // The number of the scope's tasks still waiting or running.
  size_t pending() const;

 private:
  // Shared with the wrappers on the timer thread: a task that ends after
  // Close was called from it still finds its scope's state.
  struct State {
    mutable Mutex mu;
    bool closed ABSL_GUARDED_BY(mu) = false;
    Id next ABSL_GUARDED_BY(mu) = 1;
    std::map<Id, TimerThread::Id> live ABSL_GUARDED_BY(mu);
  };

  const std::shared_ptr<TimerThread> timers_;
  const std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_TIMER_SCOPE_H_

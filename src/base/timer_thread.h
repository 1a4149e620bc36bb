// TimerThread runs delayed tasks (discovery reconnects after backoff, call
// retries after theirs) on one thread it owns, and lets their owner cancel
// them with a guarantee: once Cancel() returns, the task is not running and
// never will.
//
//   TimerThread timers;
//   TimerThread::Id id = timers.RunAfter(absl::Milliseconds(100), [] {...});
//   timers.Cancel(id);  // before the owner of the task's state goes away
//
// Thread-safe. The destructor cancels what is pending and joins the thread.
#ifndef MESH_SRC_BASE_TIMER_THREAD_H_
#define MESH_SRC_BASE_TIMER_THREAD_H_

#include <cstdint>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "src/base/internal_export.h"
#include "src/base/mutex.h"

namespace mesh::internal {

class MESH_INTERNAL_EXPORT TimerThread {
 public:
  using Id = uint64_t;

  TimerThread();
  ~TimerThread();
  TimerThread(const TimerThread&) = delete;
  TimerThread& operator=(const TimerThread&) = delete;

  // Runs `task` on the timer thread after `delay`. Ids are never 0.
  Id RunAfter(absl::Duration delay, absl::AnyInvocable<void()> task);

  // Like RunAfter (the task's id), unless Close() has been called: then
  // returns 0 and leaves `task` with the caller.
  Id TryRunAfter(absl::Duration delay, absl::AnyInvocable<void()>& task);

  // Like RunAfter, for a task of a part that may outlive the thread's
  // owner's Close (a discovery source the Mesh lent its thread to): Close
  // leaves it waiting, and it runs when due as long as the thread lives.
  Id RunAfterPastClose(absl::Duration delay, absl::AnyInvocable<void()> task);

  // Refuses later TryRunAfter calls and hands back the tasks still waiting
  // (but those of RunAfterPastClose), in due order, for the caller to run
  // or drop (Cancel no longer knows them). Waits for a task running now to
  // end (unless called from it).
  std::vector<absl::AnyInvocable<void()>> Close();

  // Cancels `id`: if it is running now, waits for it to end (unless called
  // from the task itself). Unknown or finished ids are ignored.
  void Cancel(Id id);

 private:
  void Loop();

  Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  Id next_id_ ABSL_GUARDED_BY(mu_) = 1;
  Id running_ ABSL_GUARDED_BY(mu_) = 0;
  struct Task {
    absl::AnyInvocable<void()> run;
    bool past_close = false;  // RunAfterPastClose: not handed back by Close
  };
  // Ordered by due time, then id.
  std::map<std::pair<absl::Time, Id>, Task> tasks_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_TIMER_THREAD_H_

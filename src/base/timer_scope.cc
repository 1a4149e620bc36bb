#include "src/base/timer_scope.h"

#include <utility>
#include <vector>

namespace mesh::internal {

TimerScope::TimerScope(std::shared_ptr<TimerThread> timers)
    : timers_(std::move(timers)) {}

TimerScope::~TimerScope() { Close(); }

TimerScope::Id TimerScope::RunAfter(absl::Duration delay,
                                    absl::AnyInvocable<void()> task) {
  MutexLock lock(&state_->mu);
  if (state_->closed) return 0;
  const Id id = state_->next++;
  // Registered under the scope's lock, so the wrapper's erase (which takes
  // it) cannot come before the insert, however soon the task runs.
  // Past the thread owner's Close: a Mesh that lent its thread hands back
  // only its own tasks when it shuts down.
  TimerThread::Id timer = timers_->RunAfterPastClose(
      delay, [state = state_, id, task = std::move(task)]() mutable {
        task();
        MutexLock lock(&state->mu);
        state->live.erase(id);
      });
  state_->live.emplace(id, timer);
  return id;
}

void TimerScope::Cancel(Id id) {
  TimerThread::Id timer;
  {
    MutexLock lock(&state_->mu);
    auto it = state_->live.find(id);
    if (it == state_->live.end()) return;
    timer = it->second;
    state_->live.erase(it);
  }
  // Outside the scope's lock: a running task ends by taking it.
  timers_->Cancel(timer);
}

void TimerScope::Close() {
  std::vector<TimerThread::Id> timers;
  {
    MutexLock lock(&state_->mu);
    state_->closed = true;
    for (const auto& [id, timer] : state_->live) timers.push_back(timer);
    state_->live.clear();
  }
  for (TimerThread::Id timer : timers) timers_->Cancel(timer);
}

size_t TimerScope::pending() const {
  MutexLock lock(&state_->mu);
  return state_->live.size();
}

}  // namespace mesh::internal

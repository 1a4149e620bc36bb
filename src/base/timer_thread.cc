#include "src/base/timer_thread.h"

#include "src/base/destroy_later.h"
#include "src/base/mutex.h"

namespace mesh::internal {

TimerThread::TimerThread() : thread_([this] { Loop(); }) {}

TimerThread::~TimerThread() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    tasks_.clear();
  }
  thread_.join();
}

TimerThread::Id TimerThread::RunAfter(absl::Duration delay,
                                      absl::AnyInvocable<void()> task) {
  MutexLock lock(&mu_);
  Id id = next_id_++;
  tasks_.emplace(std::make_pair(absl::Now() + delay, id),
                 Task{std::move(task)});
  return id;
}

TimerThread::Id TimerThread::RunAfterPastClose(
    absl::Duration delay, absl::AnyInvocable<void()> task) {
  MutexLock lock(&mu_);
  Id id = next_id_++;
  tasks_.emplace(std::make_pair(absl::Now() + delay, id),
                 Task{std::move(task), /*past_close=*/true});
  return id;
}

TimerThread::Id TimerThread::TryRunAfter(absl::Duration delay,
                                         absl::AnyInvocable<void()>& task) {
  MutexLock lock(&mu_);
  if (closed_) return 0;
  Id id = next_id_++;
  tasks_.emplace(std::make_pair(absl::Now() + delay, id),
                 Task{std::move(task)});
  return id;
}

std::vector<absl::AnyInvocable<void()>> TimerThread::Close() {
  std::vector<absl::AnyInvocable<void()>> pending;
  MutexLock lock(&mu_);
  closed_ = true;
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    if (it->second.past_close) {
      ++it;
      continue;
    }
    pending.push_back(std::move(it->second.run));
    it = tasks_.erase(it);
  }
  if (std::this_thread::get_id() != thread_.get_id()) {
    mu_.Await(absl::Condition(
        +[](Id* running) { return *running == 0; }, &running_));
  }
  return pending;
}

void TimerThread::Cancel(Id id) {
  MutexLock lock(&mu_);
  for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
    if (it->first.second == id) {
      tasks_.erase(it);
      return;
    }
  }
  if (std::this_thread::get_id() == thread_.get_id()) return;
  struct Running {
    const Id* running;
    Id id;
  } wait{&running_, id};
  mu_.Await(absl::Condition(
      +[](Running* w) { return *w->running != w->id; }, &wait));
}

void TimerThread::Loop() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    if (tasks_.empty()) {
      mu_.Await(absl::Condition(
          +[](TimerThread* t) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return t->stopping_ || !t->tasks_.empty();
          },
          this));
      continue;
    }
    absl::Time due = tasks_.begin()->first.first;
    if (absl::Now() < due) {
      // Wakes early when a sooner task arrives or we are stopping.
      struct Sooner {
        TimerThread* t;
        absl::Time due;
      } sooner{this, due};
      mu_.AwaitWithDeadline(
          absl::Condition(
              +[](Sooner* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                return s->t->stopping_ || s->t->tasks_.empty() ||
                       s->t->tasks_.begin()->first.first < s->due;
              },
              &sooner),
          due);
      continue;
    }
    auto node = tasks_.extract(tasks_.begin());
    running_ = node.key().second;
    mu_.Unlock();
    node.mapped().run();
    // Its captures may hold the last reference to this timer's owner (a
    // retry's channel holds the Mesh that owns its timer): destroyed on the
    // DestroyLater thread, never here, where that would join this very thread.
    DestroyLater(std::move(node.mapped().run));
    mu_.Lock();
    running_ = 0;
  }
}

}  // namespace mesh::internal

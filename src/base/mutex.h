// Mutex, MutexLock, CondVar and Notification: the one lock type of mesh and
// its waits, on std::mutex and std::condition_variable, with Abseil's
// thread-safety annotations and Abseil's conditional waits (absl::Condition).
//
// Why not absl::Mutex: Debian's Abseil is built without NDEBUG, so every
// absl::Mutex::Lock runs the deadlock detector under one process-wide spin
// lock — with 8 calls in flight on 2 cores about 5–8 µs of CPU per call
// (docs/benchmarks.md, overhead) — and, being a prebuilt library, its
// locking is invisible to ThreadSanitizer, which then reports every access
// it guards as a race. std::mutex is intercepted by TSan and cheap.
//
//   Mutex mu;
//   int n ABSL_GUARDED_BY(mu) = 0;
//   { MutexLock lock(&mu); ++n; }
//   { MutexLock lock(&mu); mu.Await(absl::Condition(&ready)); }
//
// As with absl::Mutex, a waiting condition is evaluated again whenever the
// mutex is released: no explicit notification is needed. That costs the
// waiter a wake-up at every release; where a thread waits on a lock that
// every call takes (a queue it drains), it waits on a CondVar instead,
// woken only by an explicit Signal.
//
// Thread-safe.
#ifndef MESH_SRC_BASE_MUTEX_H_
#define MESH_SRC_BASE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"  // absl::Condition only
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace mesh::internal {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  // Wakes the waiters, whose conditions may now hold. (Before unlocking: a
  // waiter that returns may destroy the Mutex at once, as when it waits
  // for a Notification on its stack.)
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    WakeConditionWaiters();
    mu_.unlock();
  }
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

  // Releases the lock until `condition` holds (at once if it does); holds
  // it again on return.
  void Await(const absl::Condition& condition)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    Wait(condition, nullptr);
  }
  // As Await, until `deadline` at most; returns whether `condition` holds.
  bool AwaitWithDeadline(const absl::Condition& condition, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    return Wait(condition, &deadline);
  }
  bool AwaitWithTimeout(const absl::Condition& condition,
                        absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    return AwaitWithDeadline(condition, absl::Now() + timeout);
  }
  // Lock() then AwaitWithDeadline(); the lock is held on return either way.
  bool LockWhenWithDeadline(const absl::Condition& condition,
                            absl::Time deadline)
      ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    Lock();
    return Wait(condition, &deadline);
  }

 private:
  bool Wait(const absl::Condition& condition, const absl::Time* deadline) {
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    // Waiting releases the lock as Unlock does: what this thread changed
    // since it took the lock may be what another waiter waits for. (Only
    // here, not after each wake-up: evaluating a condition changes nothing,
    // so two waiters never wake each other in turn.)
    WakeConditionWaiters();
    ++waiters_;
    bool held = true;
    while (!condition.Eval()) {
      if (deadline == nullptr) {
        changed_.wait(lock);
      } else if (*deadline == absl::InfiniteFuture()) {
        changed_.wait(lock);
      } else if (changed_.wait_until(lock, absl::ToChronoTime(*deadline)) ==
                     std::cv_status::timeout &&
                 absl::Now() >= *deadline) {
        held = condition.Eval();
        break;
      }
    }
    --waiters_;
    lock.release();
    return held;
  }

  friend class CondVar;

  // Called with the lock held, before it is released.
  void WakeConditionWaiters() {
    if (waiters_ > 0) changed_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable changed_;
  int waiters_ = 0;  // under mu_
};

// A condition variable over Mutex, as absl::CondVar: Wait releases the lock
// until Signal or SignalAll (or a spurious wake-up: wait in a loop), and
// holds it again on return. Its waiters are not woken by Unlock.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    mu->WakeConditionWaiters();
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, until `deadline` on the steady clock at most (a bounded wait
  // that a change of the wall clock does not move); returns true if it
  // timed out.
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    mu->WakeConditionWaiters();
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool timed_out =
        cv_.wait_until(lock, deadline) == std::cv_status::timeout;
    lock.release();
    return timed_out;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A one-shot event, as absl::Notification.
class Notification {
 public:
  void Notify() {
    MutexLock lock(&mu_);
    notified_ = true;
  }
  bool HasBeenNotified() const {
    MutexLock lock(&mu_);
    return notified_;
  }
  void WaitForNotification() const {
    MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&notified_));
  }
  bool WaitForNotificationWithTimeout(absl::Duration timeout) const {
    MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&notified_), timeout);
  }

 private:
  mutable Mutex mu_;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_MUTEX_H_

// PlainMutex: a std::mutex and one condition variable, with Abseil's
// thread-safety annotations, for the locks a call takes on its way (the
// transport's in-flight set, the retry budget's deposit, the reaper queue).
//
// Why not absl::Mutex there: Debian's Abseil is built without NDEBUG, so
// every absl::Mutex::Lock runs the deadlock detector, which takes a single
// process-wide spin lock. With 8 calls in flight on 2 cores that cost about
// 5–8 µs of CPU per call and ~7 % of throughput against raw gRPC
// (docs/benchmarks.md, overhead). Other locks use Mutex
// (src/base/mutex.h), also on std::mutex, which wakes waiters by itself;
// the house issue leaves one of the two.
//
//   PlainMutex mu;
//   int n ABSL_GUARDED_BY(mu) = 0;
//   { PlainMutexLock lock(&mu); ++n; }
//   mu.NotifyAll();
//   { PlainMutexLock lock(&mu); mu.Await([&] { return n == 0; }); }
//
// Thread-safe.
#ifndef MESH_SRC_MODEL_PLAIN_MUTEX_H_
#define MESH_SRC_MODEL_PLAIN_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace mesh::internal {

class ABSL_LOCKABLE PlainMutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

  // Wakes every Await; call after changing what a waiter waits for.
  void NotifyAll() { changed_.notify_all(); }

  // Releases the lock until `done()` holds after a NotifyAll (or at once if
  // it holds already); holds it again on return.
  template <typename Predicate>
  void Await(Predicate done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    changed_.wait(lock, done);
    lock.release();
  }

  // As Await, for at most `timeout`; returns whether `done()` holds.
  template <typename Predicate>
  bool AwaitWithTimeout(Predicate done, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    const bool held =
        changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), done);
    lock.release();
    return held;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
};

class ABSL_SCOPED_LOCKABLE PlainMutexLock {
 public:
  explicit PlainMutexLock(PlainMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_->Lock();
  }
  ~PlainMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  PlainMutexLock(const PlainMutexLock&) = delete;
  PlainMutexLock& operator=(const PlainMutexLock&) = delete;

 private:
  PlainMutex* const mu_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_MODEL_PLAIN_MUTEX_H_

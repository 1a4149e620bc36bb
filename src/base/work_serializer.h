// WorkSerializer: runs closures one at a time, in the order they were
// scheduled, on the threads that schedule them. A closure is queued under
// the scheduler's lock and run after it is released: the thread that calls
// DrainQueue when no other thread drains runs everything queued, including
// what its closures and other threads queue meanwhile, until the queue is
// empty (the idea of gRPC's WorkSerializer). A closure may therefore call
// back into whatever scheduled it.
//
//   { MutexLock lock(&mu_); serializer_.Schedule([o, u] { o->On(u); }); }
//   serializer_.DrainQueue();  // the lock released
//
// DeliveryGate ends the deliveries to one receiver: after Close returns, no
// closure passed through it runs and none is running.
//
//   gate->Run([&] { observer->OnUpdate(update); });  // inside a closure
//   gate->Close(serializer);                          // the receiver goes
//
// Thread-safe.
#ifndef MESH_SRC_BASE_WORK_SERIALIZER_H_
#define MESH_SRC_BASE_WORK_SERIALIZER_H_

#include <atomic>
#include <deque>
#include <thread>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "src/base/internal_export.h"
#include "src/base/mutex.h"

namespace mesh::internal {

class MESH_INTERNAL_EXPORT WorkSerializer {
 public:
  WorkSerializer() = default;
  WorkSerializer(const WorkSerializer&) = delete;
  WorkSerializer& operator=(const WorkSerializer&) = delete;

  // Queues `work`; it runs at the next DrainQueue (this thread's or
  // another's). Takes only the serializer's own lock: callable under any.
  void Schedule(absl::AnyInvocable<void()> work);
  // Runs what is queued on this thread until the queue is empty, unless a
  // thread already drains (that one runs it; from inside a closure, the
  // loop this call is in does). Call it holding no lock a closure takes.
  void DrainQueue();
  // Whether the calling thread is running this serializer's closures.
  bool RunningOnThisThread() const;
  // Returns once the queue is empty and no closure runs; at once when
  // called from a closure of this serializer.
  void WaitUntilIdle();

 private:
  mutable Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  std::thread::id drainer_ ABSL_GUARDED_BY(mu_);
};

class MESH_INTERNAL_EXPORT DeliveryGate {
 public:
  // Runs `work` unless the gate is closed. Call it from the serializer's
  // closures only.
  void Run(absl::FunctionRef<void()> work);
  // No closure runs `work` after this returns. Waits for one that is
  // running on another thread; from one of `serializer`'s own closures
  // (the receiver unsubscribing from inside a delivery) it returns at once,
  // since the running closure is the caller.
  void Close(const WorkSerializer& serializer);

 private:
  Mutex mu_;  // held while a delivery runs
  std::atomic<bool> open_{true};
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_WORK_SERIALIZER_H_

#include "src/base/work_serializer.h"

#include <utility>

namespace mesh::internal {

void WorkSerializer::Schedule(absl::AnyInvocable<void()> work) {
  MutexLock lock(&mu_);
  queue_.push_back(std::move(work));
}

void WorkSerializer::DrainQueue() {
  {
    MutexLock lock(&mu_);
    if (draining_) return;
    draining_ = true;
    drainer_ = std::this_thread::get_id();
  }
  for (;;) {
    absl::AnyInvocable<void()> work;
    {
      MutexLock lock(&mu_);
      if (queue_.empty()) {
        draining_ = false;
        drainer_ = std::thread::id();
        return;
      }
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();
  }
}

bool WorkSerializer::RunningOnThisThread() const {
  MutexLock lock(&mu_);
  return draining_ && drainer_ == std::this_thread::get_id();
}

void WorkSerializer::WaitUntilIdle() {
  if (RunningOnThisThread()) return;
  // What is queued and not drained yet is run here, not waited for: its
  // scheduler may be gone.
  DrainQueue();
  MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](WorkSerializer* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return !s->draining_ && s->queue_.empty();
      },
      this));
}

void DeliveryGate::Run(absl::FunctionRef<void()> work) {
  MutexLock lock(&mu_);
  if (open_.load(std::memory_order_acquire)) work();
}

void DeliveryGate::Close(const WorkSerializer& serializer) {
  if (serializer.RunningOnThisThread()) {
    // No other delivery runs: the serializer runs one closure at a time,
    // and this thread's is the caller.
    open_.store(false, std::memory_order_release);
    return;
  }
  MutexLock lock(&mu_);
  open_.store(false, std::memory_order_release);
}

}  // namespace mesh::internal

#include "src/base/destroy_later.h"

#include <chrono>
#include <deque>
#include <thread>
#include <utility>

#include "absl/time/time.h"
#include "src/base/mutex.h"

namespace mesh::internal {
namespace {

class DestroyingThread {
 public:
  static constexpr size_t kBatch = 64;
  static constexpr absl::Duration kMaxDelay = absl::Milliseconds(2);

  // Returns once the thread runs. A detached thread still starting when
  // the process exits is a leak to LeakSanitizer (its stack bounds, taken
  // with pthread_getattr_np, are not yet freed); the first DestroyLater
  // often comes just before a short program's exit.
  DestroyingThread() {
    std::thread([this] {
      {
        MutexLock lock(&mu_);
        started_ = true;
      }
      work_.SignalAll();
      Loop();
    }).detach();
    MutexLock lock(&mu_);
    while (!started_) work_.Wait(&mu_);
  }

  // Every call ends here: the thread is woken only when idle or when a
  // batch fills (a CondVar, not a wake-up at every Unlock: mutex.h).
  void Add(absl::AnyInvocable<void()> holder) {
    bool wake;
    {
      MutexLock lock(&mu_);
      queue_.push_back(std::move(holder));
      wake = idle_ || queue_.size() == kBatch;
    }
    if (wake) work_.Signal();
  }

 private:
  void Loop() {
    for (;;) {
      std::deque<absl::AnyInvocable<void()>> batch;
      {
        MutexLock lock(&mu_);
        // After a batch, wait up to kMaxDelay for kBatch more; an idle
        // thread wakes at the first object. So under load the thread wakes
        // once per kBatch objects or per kMaxDelay, not once per call: a
        // wake-up per call cost ~4 us of CPU per call (~7 %) at 8 calls in
        // flight on 2 cores (docs/benchmarks.md, overhead).
        const auto deadline = std::chrono::steady_clock::now() +
                              absl::ToChronoNanoseconds(kMaxDelay);
        while (queue_.size() < kBatch) {
          if (work_.WaitUntil(&mu_, deadline)) break;
        }
        if (queue_.empty()) {
          idle_ = true;
          while (queue_.empty()) work_.Wait(&mu_);
          idle_ = false;
        }
        batch.swap(queue_);
      }
      batch.clear();  // the destructors run here, outside the lock
    }
  }

  Mutex mu_;
  CondVar work_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool idle_ ABSL_GUARDED_BY(mu_) = false;  // waiting for the first object
  bool started_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

void DestroyLater(absl::AnyInvocable<void()> holder) {
  static DestroyingThread* thread = new DestroyingThread();
  thread->Add(std::move(holder));
}

}  // namespace mesh::internal

#include "src/transport/reaper.h"

#include <deque>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"

namespace mesh::internal {
namespace {

class Reaper {
 public:
  Reaper() {
    std::thread([this] { Loop(); }).detach();
  }

  void Add(absl::AnyInvocable<void()> holder) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(holder));
  }

 private:
  void Loop() {
    for (;;) {
      std::deque<absl::AnyInvocable<void()>> batch;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](std::deque<absl::AnyInvocable<void()>>* q) {
              return !q->empty();
            },
            &queue_));
        batch.swap(queue_);
      }
      batch.clear();  // the destructors run here, outside the lock
    }
  }

  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

void DestroyLater(absl::AnyInvocable<void()> holder) {
  static Reaper* reaper = new Reaper();
  reaper->Add(std::move(holder));
}

}  // namespace mesh::internal

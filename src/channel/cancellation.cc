#include "mesh/cancellation.h"

#include <algorithm>

namespace mesh {

void Cancellation::Cancel() {
  mu_.Lock();
  if (cancelled_) {
    mu_.Unlock();
    return;
  }
  cancelled_ = true;
  runner_ = std::this_thread::get_id();
  // Watchers may Unwatch others (or themselves) while one runs: take them
  // one at a time from the front.
  while (!watchers_.empty()) {
    auto [id, on_cancel] = std::move(watchers_.front());
    watchers_.erase(watchers_.begin());
    running_ = id;
    mu_.Unlock();
    on_cancel();
    // Destroyed outside the lock too: it may own what Unwatches.
    on_cancel = nullptr;
    mu_.Lock();
  }
  running_ = 0;
  mu_.Unlock();
}

bool Cancellation::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

uint64_t Cancellation::Watch(absl::AnyInvocable<void()> on_cancel) {
  {
    absl::MutexLock lock(&mu_);
    if (!cancelled_) {
      uint64_t id = next_id_++;
      watchers_.emplace_back(id, std::move(on_cancel));
      return id;
    }
  }
  on_cancel();
  return 0;
}

void Cancellation::Unwatch(uint64_t id) {
  if (id == 0) return;
  absl::AnyInvocable<void()> dropped;  // destroyed after the lock is released
  absl::MutexLock lock(&mu_);
  auto it = std::find_if(watchers_.begin(), watchers_.end(),
                         [id](const auto& w) { return w.first == id; });
  if (it != watchers_.end()) {
    dropped = std::move(it->second);
    watchers_.erase(it);
    return;
  }
  if (running_ == id && runner_ != std::this_thread::get_id()) {
    auto done = [this, id]()
                    ABSL_NO_THREAD_SAFETY_ANALYSIS { return running_ != id; };
    mu_.Await(absl::Condition(&done));
  }
}

}  // namespace mesh

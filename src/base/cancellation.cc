#include "mesh/cancellation.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "src/base/mutex.h"

namespace mesh {

struct Cancellation::State {
  internal::Mutex mu;
  // Written under `mu`, read without it (cancelled(), asked once or more
  // per call and per attempt, takes no lock).
  std::atomic<bool> cancelled{false};
  uint64_t next_id ABSL_GUARDED_BY(mu) = 1;
  std::vector<std::pair<uint64_t, absl::AnyInvocable<void()>>> watchers
      ABSL_GUARDED_BY(mu);
  // The watcher Cancel is running (0: none), and the thread running it.
  uint64_t running ABSL_GUARDED_BY(mu) = 0;
  std::thread::id runner ABSL_GUARDED_BY(mu);
};

Cancellation::Cancellation() : state_(std::make_unique<State>()) {}

Cancellation::~Cancellation() = default;

void Cancellation::Cancel() {
  State& s = *state_;
  s.mu.Lock();
  if (s.cancelled.load(std::memory_order_relaxed)) {
    s.mu.Unlock();
    return;
  }
  s.cancelled.store(true, std::memory_order_release);
  s.runner = std::this_thread::get_id();
  // Watchers may Unwatch others (or themselves) while one runs: take them
  // one at a time from the front.
  while (!s.watchers.empty()) {
    auto [id, on_cancel] = std::move(s.watchers.front());
    s.watchers.erase(s.watchers.begin());
    s.running = id;
    s.mu.Unlock();
    on_cancel();
    // Destroyed outside the lock too: it may own what Unwatches.
    on_cancel = nullptr;
    s.mu.Lock();
  }
  s.running = 0;
  s.mu.Unlock();
}

bool Cancellation::cancelled() const {
  return state_->cancelled.load(std::memory_order_acquire);
}

uint64_t Cancellation::Watch(absl::AnyInvocable<void()> on_cancel) {
  State& s = *state_;
  {
    internal::MutexLock lock(&s.mu);
    if (!s.cancelled.load(std::memory_order_relaxed)) {
      uint64_t id = s.next_id++;
      s.watchers.emplace_back(id, std::move(on_cancel));
      return id;
    }
  }
  on_cancel();
  return 0;
}

void Cancellation::Unwatch(uint64_t id) {
  if (id == 0) return;
  State& s = *state_;
  absl::AnyInvocable<void()> dropped;  // destroyed after the lock is released
  internal::MutexLock lock(&s.mu);
  auto it = std::find_if(s.watchers.begin(), s.watchers.end(),
                         [id](const auto& w) { return w.first == id; });
  if (it != s.watchers.end()) {
    dropped = std::move(it->second);
    s.watchers.erase(it);
    return;
  }
  if (s.running == id && s.runner != std::this_thread::get_id()) {
    auto done = [&s, id]()
                    ABSL_NO_THREAD_SAFETY_ANALYSIS { return s.running != id; };
    s.mu.Await(absl::Condition(&done));
  }
}

}  // namespace mesh

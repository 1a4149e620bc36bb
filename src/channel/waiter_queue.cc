#include "src/channel/waiter_queue.h"

#include <algorithm>

namespace mesh::internal {

void WaiterQueue::Add(std::shared_ptr<PickWaiter> waiter) {
  const size_t n = waiters_.size();
  if (n >= 64 && (n & (n - 1)) == 0) {
    waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                  [](const auto& w) { return w->fired(); }),
                   waiters_.end());
  }
  waiters_.push_back(std::move(waiter));
}

size_t WaiterQueue::Live() {
  waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                [](const auto& w) { return w->fired(); }),
                 waiters_.end());
  return waiters_.size();
}

void FireReleased(const WaiterQueue::List& waiters) {
  for (const std::shared_ptr<PickWaiter>& w : waiters) {
    w->Fire(PickWaiter::Why::kReleased);
  }
}

bool ReleaseOnTimer(TimerThread& timers, WaiterQueue::List& waiters) {
  auto list = std::make_shared<WaiterQueue::List>(std::move(waiters));
  absl::AnyInvocable<void()> fire = [list] { FireReleased(*list); };
  if (timers.TryRunAfter(absl::ZeroDuration(), fire) != 0) return true;
  waiters = std::move(*list);
  return false;
}

}  // namespace mesh::internal

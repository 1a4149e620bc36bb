// The calls waiting on one destination — for endpoints, or for its first
// service config — in arrival order, and their release on the timer
// thread. Some queued waiters may have fired already elsewhere (a
// timeout, a cancellation, another backend of a split); firing is once.
//
//   queue.Add(waiter);                      // under the destination's lock
//   WaiterQueue::List ready = queue.TakeAll();
//   if (!ReleaseOnTimer(timers, ready)) ...  // outside it
//
// WaiterQueue: thread-compatible (its destination's lock guards it).
// ReleaseOnTimer: thread-safe.
#ifndef MESH_SRC_CHANNEL_WAITER_QUEUE_H_
#define MESH_SRC_CHANNEL_WAITER_QUEUE_H_

#include <memory>
#include <utility>
#include <vector>

#include "src/base/timer_thread.h"
#include "src/channel/pick_waiter.h"

namespace mesh::internal {

class WaiterQueue {
 public:
  using List = std::vector<std::shared_ptr<PickWaiter>>;

  bool empty() const { return waiters_.empty(); }
  // Queues `waiter` last. Waiters that fired elsewhere are dropped now and
  // then (when the queue reaches 64, 128, 256, ...), so it holds about the
  // calls really waiting.
  void Add(std::shared_ptr<PickWaiter> waiter);
  // The waiters that have not fired (those that have are dropped now).
  size_t Live();
  // Takes every waiter, in arrival order.
  List TakeAll() { return std::exchange(waiters_, {}); }
  // Puts `waiters` back ahead of the ones queued since.
  void PutBack(const List& waiters) {
    waiters_.insert(waiters_.begin(), waiters.begin(), waiters.end());
  }

 private:
  List waiters_;
};

// Fires each of `waiters` with kReleased, in order.
void FireReleased(const WaiterQueue::List& waiters);

// Fires `waiters` (FireReleased) on `timers`, not on the calling thread,
// which may be a discovery source's holding its locks (a released call may
// complete and run its caller's callback). False, leaving them in
// `waiters`, when the timer thread is closed (the Mesh is shutting down).
bool ReleaseOnTimer(TimerThread& timers, WaiterQueue::List& waiters);

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_WAITER_QUEUE_H_

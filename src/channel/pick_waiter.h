// PickWaiter: a call waiting for endpoints, holding no thread. It is queued
// on the destinations it waits for (a traffic split's backends may be
// several) and armed with a timer; whichever comes first — a destination
// got endpoints or a final answer, or the time ran out — fires it, once.
//
//   auto w = std::make_shared<PickWaiter>(timers, [call](PickWaiter::Why why) {
//     ... pick again, or fail ...
//   });
//   destination->AddWaiter(w);
//   w->Arm(until - now);
//
// Thread-safe.
#ifndef MESH_SRC_CHANNEL_PICK_WAITER_H_
#define MESH_SRC_CHANNEL_PICK_WAITER_H_

#include <atomic>
#include <memory>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "mesh/cancellation.h"
#include "src/base/destroy_later.h"
#include "src/base/timer_thread.h"

namespace mesh::internal {

class PickWaiter : public std::enable_shared_from_this<PickWaiter> {
 public:
  // Why it fired: a destination it waited on settled (kReleased, on the
  // timer thread), its time ran out (kTimedOut), the caller cancelled
  // (kCancelled, on the cancelling thread), or its owner found at queuing
  // time that there are endpoints already (kReady) or that none will come
  // (kNever) and fired it inline.
  enum class Why { kReleased, kTimedOut, kCancelled, kReady, kNever };

  // `timers` runs the timeout and must be the Mesh's (closing it fires
  // what is pending).
  // `cancel` (may be null) is the caller's; see FireOnCancel.
  PickWaiter(std::shared_ptr<TimerThread> timers,
             absl::AnyInvocable<void(Why why)> resume,
             std::shared_ptr<Cancellation> cancel = nullptr)
      : timers_(std::move(timers)),
        cancel_(std::move(cancel)),
        resume_(std::move(resume)) {}

  // Fires after `wait` unless fired before (an infinite wait sets no
  // timer: a release or the Mesh's shutdown fires it). If the timer thread
  // is closed (the Mesh is shutting down), fires now, as a timeout.
  void Arm(absl::Duration wait) {
    if (wait == absl::InfiniteDuration()) return;
    absl::AnyInvocable<void()> timeout = [self = shared_from_this()] {
      self->Fire(Why::kTimedOut);
    };
    TimerThread::Id id = timers_->TryRunAfter(wait, timeout);
    if (id == 0) {
      Fire(Why::kTimedOut);
      return;
    }
    timer_.store(id, std::memory_order_release);
    // Released meanwhile: the timer is not needed (Fire may have found no
    // id yet).
    if (fired()) timers_->Cancel(timer_.exchange(0));
  }

  // Fires (kCancelled) when the caller's cancellation is cancelled, if it
  // has not fired by then; at once if it is cancelled already. Without one,
  // does nothing. Call once, like Arm, after queuing the waiter.
  void FireOnCancel() {
    if (cancel_ == nullptr) return;
    uint64_t id =
        cancel_->Watch([weak = std::weak_ptr<PickWaiter>(shared_from_this())] {
          if (auto self = weak.lock()) self->Fire(Why::kCancelled);
        });
    cancel_watch_.store(id, std::memory_order_release);
    // Fired meanwhile: the watch is not needed.
    if (fired()) cancel_->Unwatch(cancel_watch_.exchange(0));
  }

  // Runs the resume callback, unless it has run: true if this call ran it.
  // A release cancels the timer, so that it holds nothing until it is due.
  // What the callback owned goes to DestroyLater: it may hold the last
  // reference to a channel, whose teardown must not hold up this thread
  // (the Mesh's timer thread, or a source's).
  bool Fire(Why why) {
    if (fired_.exchange(true, std::memory_order_acq_rel)) return false;
    if (why != Why::kTimedOut) {
      if (TimerThread::Id id = timer_.exchange(0)) timers_->Cancel(id);
    }
    if (cancel_ != nullptr) cancel_->Unwatch(cancel_watch_.exchange(0));
    absl::AnyInvocable<void(Why)> resume = std::move(resume_);
    resume(why);
    DestroyLater([r = std::move(resume)] {});
    return true;
  }

  bool fired() const { return fired_.load(std::memory_order_acquire); }

 private:
  const std::shared_ptr<TimerThread> timers_;
  std::atomic<bool> fired_{false};
  std::atomic<TimerThread::Id> timer_{0};  // 0: none (yet)
  const std::shared_ptr<Cancellation> cancel_;
  std::atomic<uint64_t> cancel_watch_{0};  // 0: none (yet)
  absl::AnyInvocable<void(Why why)> resume_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_PICK_WAITER_H_

#include "src/channel/waiter_queue.h"

#include <memory>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/base/destroy_later.h"
#include "src/base/mutex.h"
#include "src/base/timer_thread.h"

namespace mesh::internal {
namespace {

using ::testing::ElementsAre;

// Waiters that record, under a lock, the order they fired in, why, and on
// which thread.
struct Recorder {
  Mutex mu;
  std::vector<int> order ABSL_GUARDED_BY(mu);
  std::vector<PickWaiter::Why> why ABSL_GUARDED_BY(mu);
  std::vector<std::thread::id> threads ABSL_GUARDED_BY(mu);

  std::shared_ptr<PickWaiter> Waiter(const std::shared_ptr<TimerThread>& t,
                                     int n) {
    return std::make_shared<PickWaiter>(t, [this, n](PickWaiter::Why w) {
      MutexLock lock(&mu);
      order.push_back(n);
      why.push_back(w);
      threads.push_back(std::this_thread::get_id());
    });
  }
  size_t fired() {
    MutexLock lock(&mu);
    return order.size();
  }
  // Waits (10 s at most) until `n` have fired.
  bool AwaitFired(size_t n) {
    MutexLock lock(&mu);
    auto done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return order.size() >= n;
    };
    return mu.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(10));
  }
};

// A fired waiter hands its callback to DestroyLater, whose thread starts on
// first use. Each test waits until that thread has destroyed one more
// holder: a thread still starting when the program exits is reported by
// LeakSanitizer (its start-up allocations).
class WaiterQueueTest : public ::testing::Test {
 protected:
  void TearDown() override {
    auto destroyed = std::make_shared<Notification>();
    struct NotifyOnDestroy {
      std::shared_ptr<Notification> n;
      explicit NotifyOnDestroy(std::shared_ptr<Notification> to)
          : n(std::move(to)) {}
      NotifyOnDestroy(NotifyOnDestroy&&) = default;
      ~NotifyOnDestroy() {
        if (n != nullptr) n->Notify();
      }
    };
    DestroyLater([holder = NotifyOnDestroy(destroyed)] {});
    EXPECT_TRUE(destroyed->WaitForNotificationWithTimeout(absl::Seconds(10)));
  }
};

TEST_F(WaiterQueueTest, TakesInArrivalOrderAndPutsBackAhead) {
  auto timers = std::make_shared<TimerThread>();
  Recorder rec;
  WaiterQueue queue;
  EXPECT_TRUE(queue.empty());
  queue.Add(rec.Waiter(timers, 1));
  queue.Add(rec.Waiter(timers, 2));
  WaiterQueue::List taken = queue.TakeAll();
  EXPECT_TRUE(queue.empty());
  queue.Add(rec.Waiter(timers, 3));
  queue.PutBack(taken);
  FireReleased(queue.TakeAll());
  MutexLock lock(&rec.mu);
  EXPECT_THAT(rec.order, ElementsAre(1, 2, 3));
  EXPECT_THAT(rec.why, ElementsAre(PickWaiter::Why::kReleased,
                                   PickWaiter::Why::kReleased,
                                   PickWaiter::Why::kReleased));
}

TEST_F(WaiterQueueTest, WaitersThatFiredElsewhereAreDroppedAsItGrows) {
  auto timers = std::make_shared<TimerThread>();
  Recorder rec;
  WaiterQueue queue;
  std::vector<std::shared_ptr<PickWaiter>> mine;
  for (int i = 0; i < 64; ++i) {
    mine.push_back(rec.Waiter(timers, i));
    queue.Add(mine.back());
  }
  // All but the last fire elsewhere (a timeout, another backend).
  for (int i = 0; i < 63; ++i) mine[i]->Fire(PickWaiter::Why::kTimedOut);
  queue.Add(rec.Waiter(timers, 64));  // the 65th: the queue is pruned
  WaiterQueue::List left = queue.TakeAll();
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0], mine[63]);
  EXPECT_FALSE(left[1]->fired());
}

TEST_F(WaiterQueueTest, ReleaseFiresInOrderOnTheTimerThread) {
  auto timers = std::make_shared<TimerThread>();
  Recorder rec;
  WaiterQueue::List list = {rec.Waiter(timers, 1), rec.Waiter(timers, 2)};
  ASSERT_TRUE(ReleaseOnTimer(*timers, list));
  ASSERT_TRUE(rec.AwaitFired(2));
  // Until the release task has ended, the timer thread may still be
  // unlocking rec.mu: Close waits for it, so `rec` outlives its last use.
  timers->Close();
  MutexLock lock(&rec.mu);
  ASSERT_THAT(rec.order, ElementsAre(1, 2));
  EXPECT_NE(rec.threads[0], std::this_thread::get_id());
  EXPECT_EQ(rec.threads[0], rec.threads[1]);
}

TEST_F(WaiterQueueTest, AClosedTimerThreadLeavesTheWaitersWithTheCaller) {
  auto timers = std::make_shared<TimerThread>();
  Recorder rec;
  WaiterQueue::List list = {rec.Waiter(timers, 1), rec.Waiter(timers, 2)};
  timers->Close();
  EXPECT_FALSE(ReleaseOnTimer(*timers, list));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(rec.fired(), 0u);
  FireReleased(list);
  EXPECT_EQ(rec.fired(), 2u);
}

}  // namespace
}  // namespace mesh::internal

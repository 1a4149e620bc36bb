// src/base/mutex.h: conditional waits that need no notification, as with
// absl::Mutex, on std::mutex (visible to TSan).
#include "src/base/mutex.h"

#include <thread>

#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

TEST(MutexTest, AConditionIsSeenWhenTheLockIsReleased) {
  Mutex mu;
  bool ready = false;
  std::thread setter([&] {
    MutexLock lock(&mu);
    ready = true;
  });
  {
    MutexLock lock(&mu);
    EXPECT_TRUE(
        mu.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(30)));
  }
  setter.join();
}

// A thread that changes state and then waits itself releases the lock by
// waiting: the other waiter must see the change. (The mesh's timer thread
// does this: it finishes a task, clears `running`, and waits for the next
// while Close() waits for `running` to clear.)
TEST(MutexTest, WaitingReleasesTheLockAsUnlockDoesForOtherWaiters) {
  Mutex mu;
  int running = 1;
  bool first_waiting = false, first_done = false;
  std::thread first([&] {
    MutexLock lock(&mu);
    first_waiting = true;
    mu.Await(absl::Condition(
        +[](int* r) { return *r == 0; }, &running));
    first_done = true;
  });
  MutexLock lock(&mu);
  // Once the lock is ours with first_waiting set, `first` is inside Await.
  mu.Await(absl::Condition(&first_waiting));
  running = 0;
  EXPECT_TRUE(
      mu.AwaitWithTimeout(absl::Condition(&first_done), absl::Seconds(10)));
  mu.Unlock();
  first.join();
  mu.Lock();
}

TEST(MutexTest, AwaitWithTimeoutReturnsFalseWhenTheConditionNeverHolds) {
  Mutex mu;
  bool never = false;
  MutexLock lock(&mu);
  EXPECT_FALSE(
      mu.AwaitWithTimeout(absl::Condition(&never), absl::Milliseconds(10)));
}

TEST(NotificationTest, WaitersReturnOnceNotifiedAndMayDestroyIt) {
  for (int i = 0; i < 200; ++i) {
    auto* n = new Notification();
    std::thread notifier([n] { n->Notify(); });
    n->WaitForNotification();
    EXPECT_TRUE(n->HasBeenNotified());
    delete n;  // while Notify may still be returning: must be safe
    notifier.join();
  }
  Notification never;
  EXPECT_FALSE(never.WaitForNotificationWithTimeout(absl::Milliseconds(5)));
}

}  // namespace
}  // namespace mesh::internal

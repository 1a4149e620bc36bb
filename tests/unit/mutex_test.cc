// src/base/mutex.h: mutual exclusion; conditional waits that need no
// notification, as with absl::Mutex, on std::mutex (visible to TSan); and
// CondVar waits, woken by a signal and not by every Unlock.
#include "src/base/mutex.h"

#include <chrono>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

TEST(MutexTest, ExcludesConcurrentIncrements) {
  Mutex mu;
  long long n = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50000; ++i) {
        MutexLock lock(&mu);
        ++n;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(n, 200000);
}

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

// Ends a CondVar wait that the code under test fails to end: unless it is
// destroyed within 10 s, sets *rescued under `mu` and signals `cv`, so
// that the test fails on its assertion instead of hanging. Declare it
// before the test takes `mu` (its destructor joins a thread that may lock
// it).
class Rescuer {
 public:
  Rescuer(Mutex* mu, CondVar* cv, bool* rescued)
      : thread_([this, mu, cv, rescued] {
          if (finished_.WaitForNotificationWithTimeout(absl::Seconds(10))) {
            return;
          }
          {
            MutexLock lock(mu);
            *rescued = true;
          }
          cv->SignalAll();
        }) {}
  ~Rescuer() {
    finished_.Notify();
    thread_.join();
  }

 private:
  Notification finished_;  // before thread_, which reads it
  std::thread thread_;
};

// The signaller starts while this thread holds the lock, so it can set
// `ready` only once Wait has released it; without its Signal the wait
// lasts until the rescue (an Unlock alone does not wake a CondVar's waiter).
TEST(CondVarTest, WaitReturnsOnceSignalledAndHoldsTheLockAgain) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  bool rescued = false;
  Rescuer rescue(&mu, &cv, &rescued);
  std::thread signaller;
  {
    MutexLock lock(&mu);
    signaller = std::thread([&] {
      {
        MutexLock lock(&mu);
        ready = true;
      }
      cv.Signal();
    });
    while (!ready) cv.Wait(&mu);
    mu.AssertHeld();
    EXPECT_TRUE(ready);
    EXPECT_FALSE(rescued) << "the Signal did not wake the wait";
  }
  signaller.join();
}

TEST(CondVarTest, WaitUntilSaysItTimedOutAtTheDeadline) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(20);
  bool timed_out = false;
  while (!timed_out) timed_out = cv.WaitUntil(&mu, deadline);
  EXPECT_GE(std::chrono::steady_clock::now(), deadline);
}

// A CondVar wait releases the lock: a conditional waiter on the same Mutex
// must see what this thread changed before it began to wait (without that
// wake-up both wait until the rescue: no Unlock comes between the change
// and the wait).
TEST(CondVarTest, WaitingOnACondVarWakesTheMutexsConditionWaiters) {
  Mutex mu;
  CondVar cv;
  bool watching = false, changed = false, seen = false;
  bool rescued = false;
  Rescuer rescue(&mu, &cv, &rescued);
  std::thread watcher([&] {
    MutexLock lock(&mu);
    watching = true;
    mu.Await(absl::Condition(&changed));
    seen = true;
    cv.SignalAll();
  });
  MutexLock lock(&mu);
  // Once the lock is ours with `watching` set, the watcher is in Await.
  mu.Await(absl::Condition(&watching));
  changed = true;
  while (!seen && !rescued) cv.Wait(&mu);
  EXPECT_FALSE(rescued) << "the watcher did not see the change";
  mu.Unlock();
  watcher.join();
  mu.Lock();
}

}  // namespace
}  // namespace mesh::internal

// TimerThread (src/base/timer_thread.h): tasks run after their delay, in due
// order; once Cancel returns, a cancelled task never runs, and a running one
// has ended; Close hands back what was still waiting, but the tasks
// scheduled past it.
#include "src/base/timer_thread.h"

#include <atomic>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "src/base/mutex.h"

namespace mesh::internal {
namespace {

TEST(TimerThreadTest, TasksRunInDueOrderNotInOrderGiven) {
  TimerThread timers;
  Mutex mu;
  std::vector<int> order;
  Notification both;
  timers.RunAfter(absl::Milliseconds(40), [&] {
    MutexLock lock(&mu);
    order.push_back(2);
    both.Notify();
  });
  timers.RunAfter(absl::Milliseconds(1), [&] {
    MutexLock lock(&mu);
    order.push_back(1);
  });
  ASSERT_TRUE(both.WaitForNotificationWithTimeout(absl::Seconds(30)));
  MutexLock lock(&mu);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(TimerThreadTest, OnceCancelReturnsAWaitingTaskNeverRuns) {
  TimerThread timers;
  std::atomic<int> ran{0};
  for (int i = 0; i < 200; ++i) {
    TimerThread::Id id =
        timers.RunAfter(absl::Milliseconds(i % 3), [&] { ran.fetch_add(1); });
    const int before = ran.load();
    timers.Cancel(id);
    const int after_cancel = ran.load();
    // The task either ran before Cancel returned or never will: a later
    // task on the same thread proves the thread went past its due time.
    Notification later;
    timers.RunAfter(absl::Milliseconds(3), [&] { later.Notify(); });
    ASSERT_TRUE(later.WaitForNotificationWithTimeout(absl::Seconds(30)));
    EXPECT_EQ(ran.load(), after_cancel) << "task " << i << " ran after Cancel";
    EXPECT_LE(after_cancel - before, 1);
  }
}

// Cancel called while the task runs waits for it to end: what the task uses
// may be destroyed as soon as Cancel returns.
TEST(TimerThreadTest, CancelOfARunningTaskWaitsForItsEnd) {
  TimerThread timers;
  Notification started;
  std::atomic<bool> finished{false};
  TimerThread::Id id = timers.RunAfter(absl::ZeroDuration(), [&] {
    started.Notify();
    absl::SleepFor(absl::Milliseconds(50));  // the task's own work
    finished = true;
  });
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  timers.Cancel(id);
  EXPECT_TRUE(finished.load());
}

TEST(TimerThreadTest, CloseHandsBackWhatWasWaitingInDueOrderAndRefusesMore) {
  TimerThread timers;
  std::vector<int> ran;  // only this thread runs what Close hands back
  timers.RunAfter(absl::Hours(2), [&] { ran.push_back(2); });
  timers.RunAfter(absl::Hours(1), [&] { ran.push_back(1); });
  std::vector<absl::AnyInvocable<void()>> left = timers.Close();
  ASSERT_EQ(left.size(), 2u);
  for (auto& task : left) task();
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));
  absl::AnyInvocable<void()> late = [&] { ran.push_back(3); };
  EXPECT_EQ(timers.TryRunAfter(absl::ZeroDuration(), late), 0u);
  EXPECT_TRUE(static_cast<bool>(late));  // left with the caller
}

// What a lent thread's borrower schedules survives the owner's Close: it is
// not handed back, and runs when due.
TEST(TimerThreadTest, CloseLeavesTasksScheduledPastCloseToRunWhenDue) {
  TimerThread timers;
  Notification ran;
  timers.RunAfterPastClose(absl::Milliseconds(20), [&] { ran.Notify(); });
  timers.RunAfter(absl::Hours(1), [] {});
  std::vector<absl::AnyInvocable<void()>> left = timers.Close();
  EXPECT_EQ(left.size(), 1u);  // the owner's task only
  EXPECT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
}

}  // namespace
}  // namespace mesh::internal

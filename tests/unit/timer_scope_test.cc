// TimerScope (src/base/timer_scope.h): one owner's tasks on a shared
// TimerThread; Close ends that owner's tasks and no one else's, waits for
// one running now, refuses later ones; closing from inside a task is safe.
#include "src/base/timer_scope.h"

#include <atomic>
#include <memory>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "src/base/mutex.h"

namespace mesh::internal {
namespace {

TEST(TimerScopeTest, ATaskRunsAndIsNoLongerPending) {
  auto timers = std::make_shared<TimerThread>();
  TimerScope scope(timers);
  Notification ran;
  EXPECT_NE(scope.RunAfter(absl::Milliseconds(1), [&] { ran.Notify(); }), 0u);
  ASSERT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (scope.pending() != 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(scope.pending(), 0u);
}

// Two owners share one thread: closing one cancels its tasks only. The
// closed scope's task was due first, so had it survived it would have run
// before the other's.
TEST(TimerScopeTest, CloseCancelsItsOwnTasksAndNotAnotherScopes) {
  auto timers = std::make_shared<TimerThread>();
  TimerScope closed(timers);
  TimerScope open(timers);
  std::atomic<bool> closed_ran{false};
  Notification open_ran;
  closed.RunAfter(absl::Milliseconds(20), [&] { closed_ran = true; });
  open.RunAfter(absl::Milliseconds(40), [&] { open_ran.Notify(); });
  EXPECT_EQ(closed.pending(), 1u);
  closed.Close();
  EXPECT_EQ(closed.pending(), 0u);
  ASSERT_TRUE(open_ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(closed_ran.load());
}

TEST(TimerScopeTest, CloseWaitsForATaskRunningNow) {
  auto timers = std::make_shared<TimerThread>();
  TimerScope scope(timers);
  Notification started;
  std::atomic<bool> finished{false};
  scope.RunAfter(absl::ZeroDuration(), [&] {
    started.Notify();
    absl::SleepFor(absl::Milliseconds(50));  // the task's own work
    finished = true;
  });
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  scope.Close();
  EXPECT_TRUE(finished.load());
}

TEST(TimerScopeTest, AfterCloseATaskIsRefusedAndDroppedUnrun) {
  auto timers = std::make_shared<TimerThread>();
  TimerScope scope(timers);
  scope.Close();
  auto token = std::make_shared<int>(0);
  std::atomic<bool> ran{false};
  EXPECT_EQ(scope.RunAfter(absl::ZeroDuration(), [&ran, token] { ran = true; }),
            0u);
  EXPECT_EQ(token.use_count(), 1);  // the task is gone
  // The thread itself still serves others.
  Notification other;
  timers->RunAfter(absl::ZeroDuration(), [&] { other.Notify(); });
  ASSERT_TRUE(other.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(ran.load());
}

TEST(TimerScopeTest, CancelledTaskNeverRunsAndOthersOfTheScopeDo) {
  auto timers = std::make_shared<TimerThread>();
  TimerScope scope(timers);
  std::atomic<bool> cancelled_ran{false};
  Notification later;
  TimerScope::Id id =
      scope.RunAfter(absl::Milliseconds(20), [&] { cancelled_ran = true; });
  scope.RunAfter(absl::Milliseconds(40), [&] { later.Notify(); });
  scope.Cancel(id);
  ASSERT_TRUE(later.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(cancelled_ran.load());
}

// An owner may go away inside its own task (its last reference dropped
// there): the scope closes without waiting for itself, and the task's end
// still finds the scope's state (ASan would see it freed).
TEST(TimerScopeTest, DestroyedFromInsideItsOwnTask) {
  auto timers = std::make_shared<TimerThread>();
  auto scope = std::make_shared<TimerScope>(timers);
  std::atomic<bool> refused{false};
  Notification done;
  TimerScope* raw = scope.get();
  raw->RunAfter(absl::ZeroDuration(),
                [&refused, &done, owner = std::move(scope)]() mutable {
                  owner->Close();
                  refused = owner->RunAfter(absl::ZeroDuration(), [] {}) == 0;
                  owner.reset();  // the scope's destructor, on its thread
                  done.Notify();
                });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(refused.load());
}

}  // namespace
}  // namespace mesh::internal

// PickWaiter: fired once, by whichever comes first; a release cancels its
// timer, and an unbounded wait sets none, so that nothing lingers on the
// Mesh's timer thread.
#include "src/channel/pick_waiter.h"

#include <atomic>
#include <memory>
#include <thread>

#include "gtest/gtest.h"
#include "src/base/mutex.h"

namespace mesh::internal {
namespace {

using Why = PickWaiter::Why;

TEST(PickWaiterTest, ItFiresOnceWhateverComesFirst) {
  auto timers = std::make_shared<TimerThread>();
  std::atomic<int> fired{0};
  auto waiter = std::make_shared<PickWaiter>(timers, [&](Why why) {
    EXPECT_EQ(why, Why::kReleased);
    fired.fetch_add(1);
  });
  EXPECT_TRUE(waiter->Fire(Why::kReleased));
  EXPECT_FALSE(waiter->Fire(Why::kTimedOut));
  EXPECT_FALSE(waiter->Fire(Why::kReleased));
  EXPECT_EQ(fired.load(), 1);
  EXPECT_TRUE(waiter->fired());
}

TEST(PickWaiterTest, TheTimeoutFiresItOnTheTimerThread) {
  auto timers = std::make_shared<TimerThread>();
  Notification done;
  std::atomic<bool> on_timer_thread{false};
  const std::thread::id caller = std::this_thread::get_id();
  auto waiter = std::make_shared<PickWaiter>(timers, [&](Why why) {
    EXPECT_EQ(why, Why::kTimedOut);
    on_timer_thread = std::this_thread::get_id() != caller;
    done.Notify();
  });
  waiter->Arm(absl::Milliseconds(1));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(on_timer_thread.load());
}

TEST(PickWaiterTest, AReleaseCancelsTheTimerAndAnUnboundedWaitSetsNone) {
  auto timers = std::make_shared<TimerThread>();
  auto released = std::make_shared<PickWaiter>(timers, [](Why) {});
  released->Arm(absl::Hours(1));
  released->Fire(Why::kReleased);
  auto unbounded = std::make_shared<PickWaiter>(timers, [](Why) {});
  unbounded->Arm(absl::InfiniteDuration());
  // Nothing is left waiting on the timer thread.
  EXPECT_TRUE(timers->Close().empty());
  EXPECT_FALSE(unbounded->fired());
  // Arming once the timer thread is closed (the Mesh shuts down) fires it.
  std::atomic<bool> timed_out{false};
  auto late = std::make_shared<PickWaiter>(
      timers, [&](Why why) { timed_out = why == Why::kTimedOut; });
  late->Arm(absl::Seconds(1));
  EXPECT_TRUE(timed_out.load());
}

}  // namespace
}  // namespace mesh::internal

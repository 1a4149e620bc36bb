// WorkSerializer and DeliveryGate (src/base/work_serializer.h): closures run
// in the order scheduled, one at a time, by whichever thread drains; a
// closure that schedules or drains again runs nothing nested; a closed gate
// runs nothing more, and Close waits for a delivery running elsewhere but
// not for the one it is called from.
#include "src/base/work_serializer.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "src/base/mutex.h"

namespace mesh::internal {
namespace {

TEST(WorkSerializerTest, ClosuresRunInTheOrderScheduledOnTheDrainingThread) {
  WorkSerializer serializer;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  for (int i = 0; i < 5; ++i) {
    serializer.Schedule([&, i] {
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
    });
  }
  EXPECT_TRUE(order.empty());  // scheduling runs nothing
  serializer.DrainQueue();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  for (std::thread::id t : threads) EXPECT_EQ(t, std::this_thread::get_id());
}

TEST(WorkSerializerTest, WorkScheduledAndDrainedFromAClosureRunsAfterIt) {
  WorkSerializer serializer;
  std::vector<int> order;
  serializer.Schedule([&] {
    EXPECT_TRUE(serializer.RunningOnThisThread());
    serializer.Schedule([&] { order.push_back(3); });
    serializer.DrainQueue();  // returns: this thread's loop runs it
    order.push_back(1);
  });
  serializer.Schedule([&] { order.push_back(2); });
  EXPECT_FALSE(serializer.RunningOnThisThread());
  serializer.DrainQueue();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(serializer.RunningOnThisThread());
}

TEST(WorkSerializerTest, ASecondThreadLeavesItsWorkToTheOneDraining) {
  WorkSerializer serializer;
  Notification running, release;
  std::atomic<int> ran_by_first{0};
  serializer.Schedule([&] {
    running.Notify();
    ASSERT_TRUE(release.WaitForNotificationWithTimeout(absl::Seconds(30)));
  });
  std::thread first([&] {
    serializer.DrainQueue();
    ran_by_first.store(1);
  });
  ASSERT_TRUE(running.WaitForNotificationWithTimeout(absl::Seconds(30)));
  std::thread::id ran_on;
  serializer.Schedule([&] { ran_on = std::this_thread::get_id(); });
  serializer.DrainQueue();  // another thread drains: returns at once
  const std::thread::id first_id = first.get_id();
  release.Notify();
  first.join();
  serializer.WaitUntilIdle();
  EXPECT_EQ(ran_on, first_id);
  EXPECT_EQ(ran_by_first.load(), 1);
}

TEST(DeliveryGateTest, AClosedGateRunsNothingQueuedBehindIt) {
  WorkSerializer serializer;
  DeliveryGate gate;
  int runs = 0;
  serializer.Schedule([&] { gate.Run([&] { ++runs; }); });
  serializer.DrainQueue();
  serializer.Schedule([&] { gate.Run([&] { ++runs; }); });
  gate.Close(serializer);
  serializer.DrainQueue();
  EXPECT_EQ(runs, 1);
}

TEST(DeliveryGateTest, CloseWaitsForADeliveryRunningOnAnotherThread) {
  WorkSerializer serializer;
  DeliveryGate gate;
  Notification inside, release;
  std::atomic<bool> delivery_ended{false};
  serializer.Schedule([&] {
    gate.Run([&] {
      inside.Notify();
      ASSERT_TRUE(release.WaitForNotificationWithTimeout(absl::Seconds(30)));
      delivery_ended.store(true);
    });
  });
  std::thread drainer([&] { serializer.DrainQueue(); });
  ASSERT_TRUE(inside.WaitForNotificationWithTimeout(absl::Seconds(30)));
  std::atomic<bool> closed{false};
  Notification closing;
  std::thread closer([&] {
    closing.Notify();
    gate.Close(serializer);
    // Close returned: the delivery has ended.
    EXPECT_TRUE(delivery_ended.load());
    closed.store(true);
  });
  ASSERT_TRUE(closing.WaitForNotificationWithTimeout(absl::Seconds(30)));
  release.Notify();
  closer.join();
  drainer.join();
  EXPECT_TRUE(closed.load());
}

TEST(DeliveryGateTest, CloseFromInsideADeliveryReturnsAtOnce) {
  WorkSerializer serializer;
  DeliveryGate gate;
  int runs = 0;
  serializer.Schedule([&] {
    gate.Run([&] {
      ++runs;
      gate.Close(serializer);  // would wait for itself if it locked
    });
  });
  serializer.Schedule([&] { gate.Run([&] { ++runs; }); });
  serializer.DrainQueue();
  EXPECT_EQ(runs, 1);
}

}  // namespace
}  // namespace mesh::internal

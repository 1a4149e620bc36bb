// mesh::Cancellation: watchers run once on Cancel, inline when late, and
// Unwatch waits out a running watcher on another thread.
#include "mesh/cancellation.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"
#include "src/base/mutex.h"

namespace mesh {
namespace {

TEST(CancellationTest, CancelRunsEachWatcherOnceAndIsIdempotent) {
  Cancellation cancel;
  int a = 0, b = 0;
  EXPECT_NE(cancel.Watch([&] { ++a; }), 0u);
  EXPECT_NE(cancel.Watch([&] { ++b; }), 0u);
  EXPECT_FALSE(cancel.cancelled());
  cancel.Cancel();
  cancel.Cancel();
  EXPECT_TRUE(cancel.cancelled());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
}

TEST(CancellationTest, WatchAfterCancelRunsInlineAndReturnsZero) {
  Cancellation cancel;
  cancel.Cancel();
  int ran = 0;
  EXPECT_EQ(cancel.Watch([&] { ++ran; }), 0u);
  EXPECT_EQ(ran, 1);
  cancel.Unwatch(0);  // harmless
}

TEST(CancellationTest, UnwatchedWatcherDoesNotRun) {
  Cancellation cancel;
  int ran = 0;
  uint64_t id = cancel.Watch([&] { ++ran; });
  cancel.Unwatch(id);
  cancel.Cancel();
  EXPECT_EQ(ran, 0);
}

TEST(CancellationTest, WatcherMayUnwatchItselfAndOthers) {
  Cancellation cancel;
  int second = 0;
  uint64_t first_id = 0;
  uint64_t second_id = 0;
  first_id = cancel.Watch([&] {
    cancel.Unwatch(first_id);
    cancel.Unwatch(second_id);
  });
  second_id = cancel.Watch([&] { ++second; });
  cancel.Cancel();
  EXPECT_EQ(second, 0);
}

TEST(CancellationTest, UnwatchWaitsForTheWatcherRunningElsewhere) {
  Cancellation cancel;
  internal::Notification entered;
  internal::Notification release;
  std::atomic<bool> finished{false};
  uint64_t id = cancel.Watch([&] {
    entered.Notify();
    release.WaitForNotification();
    finished = true;
  });
  std::thread canceller([&] { cancel.Cancel(); });
  entered.WaitForNotification();
  std::thread releaser([&] { release.Notify(); });
  cancel.Unwatch(id);
  // Unwatch returned only once the watcher had.
  EXPECT_TRUE(finished.load());
  canceller.join();
  releaser.join();
}

}  // namespace
}  // namespace mesh

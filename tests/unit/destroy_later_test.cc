// DestroyLater (src/base/destroy_later.h): what is handed over is destroyed
// exactly once, on its own thread, soon — alone (an idle thread wakes at
// the first object) and in bursts from several threads (batches).
#include "src/base/destroy_later.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/base/mutex.h"

namespace mesh::internal {
namespace {

// Counts its destructions and says on which thread the last one ran.
struct Tracked {
  Tracked(std::atomic<int>* destroyed, std::thread::id* where,
          Notification* last, int last_count)
      : destroyed(destroyed),
        where(where),
        last(last),
        last_count(last_count) {}
  ~Tracked() {
    *where = std::this_thread::get_id();
    if (destroyed->fetch_add(1) + 1 == last_count) last->Notify();
  }
  std::atomic<int>* destroyed;
  std::thread::id* where;
  Notification* last;
  int last_count;
};

TEST(DestroyLaterTest, ALoneObjectIsDestroyedSoonOnAnotherThread) {
  std::atomic<int> destroyed{0};
  std::thread::id where;
  Notification done;
  auto object = std::make_shared<Tracked>(&destroyed, &where, &done, 1);
  DestroyLater([object = std::move(object)] {});
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(destroyed.load(), 1);
  EXPECT_NE(where, std::this_thread::get_id());
}

TEST(DestroyLaterTest, BurstsFromSeveralThreadsAreAllDestroyedOnce) {
  constexpr int kThreads = 4;
  constexpr int kEach = 2500;
  std::atomic<int> destroyed{0};
  std::vector<std::thread::id> where(kThreads * kEach);
  Notification done;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto object = std::make_shared<Tracked>(
            &destroyed, &where[t * kEach + i], &done, kThreads * kEach);
        DestroyLater([object = std::move(object)] {});
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(20)));
  EXPECT_EQ(destroyed.load(), kThreads * kEach);
  for (const std::thread::id& id : where) {
    EXPECT_NE(id, std::thread::id());  // every one was destroyed
  }
}

}  // namespace
}  // namespace mesh::internal

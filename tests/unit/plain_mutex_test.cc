// PlainMutex (src/model/plain_mutex.h): mutual exclusion, Await woken by
// NotifyAll from another thread, AwaitWithTimeout giving up.
#include "src/model/plain_mutex.h"

#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

TEST(PlainMutexTest, ExcludesConcurrentIncrements) {
  PlainMutex mu;
  long long n = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50000; ++i) {
        PlainMutexLock lock(&mu);
        ++n;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(n, 200000);
}

// The setter starts while this thread holds the lock, so it can set `ready`
// only once Await has released it: the return must come from its
// NotifyAll (without it, this test hangs and times out).
TEST(PlainMutexTest, AwaitReturnsOnceAnotherThreadMakesItTrue) {
  PlainMutex mu;
  bool ready = false;
  std::thread setter;
  {
    PlainMutexLock lock(&mu);
    setter = std::thread([&] {
      PlainMutexLock lock(&mu);
      ready = true;
      mu.NotifyAll();
    });
    mu.Await([&] { return ready; });
    EXPECT_TRUE(ready);
  }
  setter.join();
}

TEST(PlainMutexTest, AwaitWithTimeoutGivesUpAndSaysSo) {
  PlainMutex mu;
  PlainMutexLock lock(&mu);
  const absl::Time start = absl::Now();
  EXPECT_FALSE(
      mu.AwaitWithTimeout([] { return false; }, absl::Milliseconds(20)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(20));
  EXPECT_TRUE(mu.AwaitWithTimeout([] { return true; }, absl::Seconds(10)));
}

}  // namespace
}  // namespace mesh::internal

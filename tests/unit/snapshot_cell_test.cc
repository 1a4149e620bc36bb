#include "src/base/snapshot_cell.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

std::atomic<int> live_snapshots{0};

struct Snapshot {
  explicit Snapshot(int v) : a(v), b(v) { live_snapshots.fetch_add(1); }
  ~Snapshot() {
    a = -1;
    b = -2;
    live_snapshots.fetch_sub(1);
  }
  int a;
  int b;
};

TEST(SnapshotCellTest, ReadersSeeWholeSnapshotsWhileWriterReplacesThem) {
  {
    SnapshotCell<Snapshot> cell(std::make_unique<Snapshot>(0));
    std::atomic<bool> stop{false};
    std::atomic<int64_t> torn{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; ++t) {
      readers.emplace_back([&] {
        while (!stop.load()) {
          auto r = cell.Read();
          // A freed snapshot would show a == -1 (and ASan would object).
          if (r->a != r->b || r->a < 0) torn.fetch_add(1);
        }
      });
    }
    for (int i = 1; i <= 5000; ++i) cell.Publish(std::make_unique<Snapshot>(i));
    stop.store(true);
    for (auto& t : readers) t.join();
    EXPECT_EQ(torn.load(), 0);
    EXPECT_EQ(cell.Read()->a, 5000);
    EXPECT_EQ(live_snapshots.load(), 1);  // every replaced one was freed
  }
  EXPECT_EQ(live_snapshots.load(), 0);
}

}  // namespace
}  // namespace mesh::internal

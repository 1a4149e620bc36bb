// SnapshotCell<T> holds the current immutable snapshot for readers that must
// never block (the pick path), and lets one writer at a time replace it.
//
// A reader enters an epoch by incrementing that epoch's reader count, checks
// the epoch did not move, and loads the pointer; leaving decrements the count.
// The writer swaps the pointer, flips the epoch, then waits until the old
// epoch's count drains before deleting the old snapshot. Readers therefore
// never wait; the writer waits at most for the readers already inside a
// Read() section (a few loads each). This is quiescent-state reclamation in
// the style of userspace RCU, reduced to two counters.
//
//   SnapshotCell<Picker> cell(std::make_unique<Picker>(...));
//   { auto r = cell.Read(); r->Pick(); }   // any thread, wait-free-ish
//   cell.Publish(std::make_unique<Picker>(...));  // writer
//
// Publish() from inside a Read() section of the same cell never returns.
//
// Thread-safe.
#ifndef MESH_SRC_BASE_SNAPSHOT_CELL_H_
#define MESH_SRC_BASE_SNAPSHOT_CELL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "src/base/mutex.h"

namespace mesh::internal {

template <typename T>
class SnapshotCell {
 public:
  class Reader {
   public:
    Reader(Reader&& o) noexcept : counter_(o.counter_), value_(o.value_) {
      o.counter_ = nullptr;
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    ~Reader() {
      if (counter_ != nullptr)
        counter_->fetch_sub(1, std::memory_order_release);
    }
    const T* get() const { return value_; }
    const T* operator->() const { return value_; }
    const T& operator*() const { return *value_; }

   private:
    friend class SnapshotCell;
    Reader(std::atomic<int64_t>* c, const T* v) : counter_(c), value_(v) {}
    std::atomic<int64_t>* counter_;
    const T* value_;
  };

  explicit SnapshotCell(std::unique_ptr<T> initial)
      : current_(initial.release()) {}
  ~SnapshotCell() { delete current_.load(); }
  SnapshotCell(const SnapshotCell&) = delete;
  SnapshotCell& operator=(const SnapshotCell&) = delete;

  Reader Read() const {
    for (;;) {
      uint64_t epoch = epoch_.load(std::memory_order_seq_cst);
      std::atomic<int64_t>* counter = &readers_[epoch & 1].count;
      counter->fetch_add(1, std::memory_order_seq_cst);
      if (epoch_.load(std::memory_order_seq_cst) == epoch) {
        return Reader(counter, current_.load(std::memory_order_seq_cst));
      }
      counter->fetch_sub(1, std::memory_order_release);
    }
  }

  // Replaces the snapshot; returns once no reader can still see the old one,
  // which is then deleted.
  void Publish(std::unique_ptr<T> next) {
    MutexLock lock(&writer_mu_);
    T* old = current_.exchange(next.release(), std::memory_order_seq_cst);
    uint64_t epoch = epoch_.fetch_add(1, std::memory_order_seq_cst);
    std::atomic<int64_t>& drained = readers_[epoch & 1].count;
    // seq_cst, pairing with the readers' increment-then-recheck: with
    // weaker orders both sides could miss each other on a weakly ordered CPU.
    for (int spins = 0; drained.load(std::memory_order_seq_cst) != 0; ++spins) {
      if (spins > 64) std::this_thread::yield();
    }
    delete old;
  }

 private:
  struct alignas(64) Counter {
    std::atomic<int64_t> count{0};
  };
  mutable Counter readers_[2];
  std::atomic<uint64_t> epoch_{0};
  std::atomic<T*> current_;
  Mutex writer_mu_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_SNAPSHOT_CELL_H_

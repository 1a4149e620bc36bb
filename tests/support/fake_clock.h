// FakeClock: a Clock that moves only when the test says so.
//
//   FakeClock clock;
//   clock.Advance(absl::Milliseconds(5));
//
// Thread-safe.
#ifndef MESH_TESTS_SUPPORT_FAKE_CLOCK_H_
#define MESH_TESTS_SUPPORT_FAKE_CLOCK_H_

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "src/base/clock.h"

namespace mesh::testing {

class FakeClock final : public internal::Clock {
 public:
  int64_t NowNanos() const override { return now_.load(); }
  void Advance(absl::Duration d) {
    now_.fetch_add(absl::ToInt64Nanoseconds(d));
  }

 private:
  std::atomic<int64_t> now_{1'000'000'000};
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_FAKE_CLOCK_H_

#include "src/base/clock.h"

#include <chrono>

namespace mesh::internal {
namespace {

class SteadyClock final : public Clock {
 public:
  int64_t NowNanos() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

Clock* Clock::Real() {
  static SteadyClock* clock = new SteadyClock();
  return clock;
}

}  // namespace mesh::internal

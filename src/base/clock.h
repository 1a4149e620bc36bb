// A monotonic clock, injectable so that time-based algorithms (Peak-EWMA
// decay, ejection backoff) have deterministic tests.
//
//   Clock* clock = Clock::Real();
//   int64_t t = clock->NowNanos();
//
// Implementations must be thread-safe.
#ifndef MESH_SRC_BASE_CLOCK_H_
#define MESH_SRC_BASE_CLOCK_H_

#include <cstdint>

namespace mesh::internal {

class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds since an arbitrary fixed origin; never decreases.
  virtual int64_t NowNanos() const = 0;
  // The process-wide steady clock. Never null; never destroyed.
  static Clock* Real();
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_CLOCK_H_

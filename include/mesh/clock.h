// A monotonic clock, injectable so that time-based algorithms (Peak-EWMA
// decay, ejection backoff) have deterministic tests.
//
//   mesh::Clock* clock = mesh::Clock::Real();
//   int64_t t = clock->NowNanos();
//
// Implementations must be thread-safe.
#ifndef MESH_CLOCK_H_
#define MESH_CLOCK_H_

#include <cstdint>

namespace mesh {

class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds since an arbitrary fixed origin; never decreases.
  virtual int64_t NowNanos() const = 0;
  // The process-wide steady clock. Never null; never destroyed.
  static Clock* Real();
};

}  // namespace mesh

#endif  // MESH_CLOCK_H_

// Jittered exponential backoff for reconnecting discovery streams, as
// linkerd2-proxy's exp-backoff: the n-th consecutive retry waits a uniformly
// random time in [d/2, d] with d = min(max, min × 2^n); a healthy stream
// resets n.
//
//   ExponentialBackoff backoff(absl::Milliseconds(100), absl::Seconds(60));
//   absl::Duration wait = backoff.Next(gen);
//   backoff.Reset();
//
// Thread-compatible.
#ifndef MESH_SRC_BASE_BACKOFF_H_
#define MESH_SRC_BASE_BACKOFF_H_

#include <algorithm>

#include "absl/random/bit_gen_ref.h"
#include "absl/random/distributions.h"
#include "absl/time/time.h"

namespace mesh::internal {

class ExponentialBackoff {
 public:
  ExponentialBackoff(absl::Duration min, absl::Duration max)
      : min_(min), max_(std::max(min, max)) {}

  absl::Duration Next(absl::BitGenRef gen) {
    absl::Duration d = min_;
    for (int i = 0; i < attempts_ && d < max_; ++i) d *= 2;
    d = std::min(d, max_);
    ++attempts_;
    return d / 2 + d / 2 * absl::Uniform(gen, 0.0, 1.0);
  }
  void Reset() { attempts_ = 0; }
  int attempts() const { return attempts_; }

 private:
  const absl::Duration min_;
  const absl::Duration max_;
  int attempts_ = 0;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_BACKOFF_H_

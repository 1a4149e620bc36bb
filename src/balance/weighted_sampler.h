// WeightedSampler draws indices in proportion to integer weights in O(1) per
// draw (Vose's alias method, built in O(n) on the control path), and draws
// the distinct pairs that P2C compares.
//
//   WeightedSampler s({1, 2, 1});
//   size_t i = s.Sample(gen);                  // 1 half of the time
//   auto [a, b] = s.SampleDistinctPair(gen);   // a != b when size() >= 2
//
// Immutable after construction; safe to share (the generator is the caller's).
#ifndef MESH_SRC_BALANCE_WEIGHTED_SAMPLER_H_
#define MESH_SRC_BALANCE_WEIGHTED_SAMPLER_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/random/bit_gen_ref.h"

namespace mesh::internal {

// Two distinct indices in [0, n), uniformly. REQUIRES: n >= 2.
std::pair<size_t, size_t> DrawDistinctPair(size_t n, absl::BitGenRef gen);
// The same from 64 random bits, without a generator call per index: each
// index from 32 of the bits by multiply-shift, whose bias is below
// n / 2^32 (2.3e-7 at 1,000 endpoints). REQUIRES: 2 <= n < 2^32.
inline std::pair<size_t, size_t> DistinctPairFromBits(size_t n, uint64_t bits) {
  const uint64_t a = ((bits & 0xffffffffu) * n) >> 32;
  uint64_t b = ((bits >> 32) * (n - 1)) >> 32;
  if (b >= a) ++b;  // skips a: b is uniform over the other n-1
  return {static_cast<size_t>(a), static_cast<size_t>(b)};
}

class WeightedSampler {
 public:
  // REQUIRES: every weight >= 1.
  explicit WeightedSampler(const std::vector<uint32_t>& weights);

  size_t size() const { return n_; }
  // True when all weights are equal, so draws are plain uniform.
  bool uniform() const { return alias_.empty(); }

  size_t Sample(absl::BitGenRef gen) const;
  // Two distinct indices, the first drawn by weight and the second by weight
  // among the rest (approximately: rejection sampling, a few tries, then
  // uniform). REQUIRES: size() >= 2.
  std::pair<size_t, size_t> SampleDistinctPair(absl::BitGenRef gen) const;

 private:
  size_t n_;
  std::vector<double> probability_;  // alias method tables; empty if uniform
  std::vector<uint32_t> alias_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_WEIGHTED_SAMPLER_H_

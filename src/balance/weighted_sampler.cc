#include "src/balance/weighted_sampler.h"

#include <algorithm>

#include "absl/random/distributions.h"

namespace mesh::internal {

std::pair<size_t, size_t> DrawDistinctPair(size_t n, absl::BitGenRef gen) {
  size_t a = absl::Uniform<size_t>(gen, 0, n);
  size_t b = absl::Uniform<size_t>(gen, 0, n - 1);
  if (b >= a) ++b;  // skips a: b is uniform over the other n-1
  return {a, b};
}

WeightedSampler::WeightedSampler(const std::vector<uint32_t>& weights)
    : n_(weights.size()) {
  if (n_ == 0 || std::all_of(weights.begin(), weights.end(),
                             [&](uint32_t w) { return w == weights[0]; })) {
    return;
  }
  // Vose's alias method (Vose 1991, "A linear algorithm for generating random
  // numbers with a given distribution").
  double total = 0;
  for (uint32_t w : weights) total += w;
  probability_.assign(n_, 0);
  alias_.assign(n_, 0);
  std::vector<double> scaled(n_);
  std::vector<uint32_t> small, large;
  for (size_t i = 0; i < n_; ++i) {
    scaled[i] = weights[i] * static_cast<double>(n_) / total;
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    uint32_t s = small.back();
    small.pop_back();
    uint32_t l = large.back();
    probability_[s] = scaled[s];
    alias_[s] = l;
    scaled[l] = scaled[l] + scaled[s] - 1.0;
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  for (uint32_t i : large) probability_[i] = 1.0;
  for (uint32_t i : small) probability_[i] = 1.0;  // rounding leftovers
}

size_t WeightedSampler::Sample(absl::BitGenRef gen) const {
  size_t i = absl::Uniform<size_t>(gen, 0, n_);
  if (alias_.empty()) return i;
  return absl::Uniform<double>(gen, 0.0, 1.0) < probability_[i] ? i : alias_[i];
}

std::pair<size_t, size_t> WeightedSampler::SampleDistinctPair(
    absl::BitGenRef gen) const {
  if (alias_.empty()) return DrawDistinctPair(n_, gen);
  size_t a = Sample(gen);
  for (int attempt = 0; attempt < 4; ++attempt) {
    size_t b = Sample(gen);
    if (b != a) return {a, b};
  }
  size_t b = absl::Uniform<size_t>(gen, 0, n_ - 1);
  if (b >= a) ++b;
  return {a, b};
}

}  // namespace mesh::internal

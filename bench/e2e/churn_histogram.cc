#include "bench/e2e/churn_histogram.h"

#include <algorithm>
#include <cmath>

namespace mesh::bench {

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

// Values below kSub have a bucket each; above, bucket (shift + 1, sub) holds
// [sub << shift, (sub + 1) << shift) with sub in [kSub, 2 kSub).
int LatencyHistogram::IndexOf(uint64_t v) {
  if (v < static_cast<uint64_t>(kSub)) return static_cast<int>(v);
  const int top = 63 - __builtin_clzll(v);
  const int shift = top - kSubBits;
  const int sub = static_cast<int>(v >> shift);
  return (shift + 1) * kSub + (sub - kSub);
}

double LatencyHistogram::MiddleOf(int index) {
  if (index < kSub) return index;
  const int shift = index / kSub - 1;
  const double low = std::ldexp(index % kSub + kSub, shift);
  const double width = std::ldexp(1.0, shift);
  return low + (width - 1) / 2;
}

void LatencyHistogram::Record(int64_t ns) {
  if (ns < 0) ns = 0;
  ++counts_[IndexOf(static_cast<uint64_t>(ns))];
  ++count_;
  sum_ += ns;
  max_ = std::max(max_, ns);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

double LatencyHistogram::PercentileNs(double p) const {
  if (count_ == 0) return 0;
  if (p >= 100) return static_cast<double>(max_);
  const int64_t rank =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(p / 100.0 * count_)));
  int64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(MiddleOf(i), static_cast<double>(max_));
  }
  return static_cast<double>(max_);
}

}  // namespace mesh::bench

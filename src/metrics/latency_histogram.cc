#include "src/metrics/latency_histogram.h"

#include <algorithm>

namespace mesh::internal {

namespace {

constexpr int64_t kNanosPerMs = 1'000'000;
constexpr int64_t kMaxObservationNs = int64_t{24} * 3600 * 1'000'000'000;

// The bucket holding `ns`: the first bound >= ns (bounds are inclusive), or
// +Inf past the last one.
size_t BucketOf(int64_t ns) {
  // ceil(ns / 1 ms) compares integers only: 1.5 ms → 2 → le="2".
  int64_t ms_ceil = ns / kNanosPerMs + (ns % kNanosPerMs != 0 ? 1 : 0);
  auto it = std::lower_bound(kLatencyBoundsMs.begin(), kLatencyBoundsMs.end(),
                             ms_ceil);
  return static_cast<size_t>(it - kLatencyBoundsMs.begin());
}

}  // namespace

void LatencyHistogram::Observe(absl::Duration latency) {
  int64_t ns = std::clamp<int64_t>(absl::ToInt64Nanoseconds(latency), 0,
                                   kMaxObservationNs);
  buckets_[BucketOf(ns)].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(ns), std::memory_order_relaxed);
}

HistogramSnapshot LatencyHistogram::Snapshot() const {
  HistogramSnapshot snapshot;
  uint64_t running = 0;
  for (size_t i = 0; i < kLatencyBucketCount; ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    snapshot.cumulative_counts[i] = running;
  }
  snapshot.count = running;
  snapshot.sum_ms =
      static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) /
      static_cast<double>(kNanosPerMs);
  return snapshot;
}

}  // namespace mesh::internal

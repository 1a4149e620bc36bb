// LatencyHistogram: a fixed-bucket latency histogram in milliseconds, with
// the bucket bounds of linkerd2-proxy's response_latency_ms (1, 2, 3, 4, 5,
// 10, 20, … 50000, +Inf), so dashboards written for Linkerd read it as is.
//
// Recording is wait-free: one relaxed increment of the bucket the latency
// falls in and one of the sum. Buckets are stored non-cumulative; Snapshot()
// makes them cumulative, as the Prometheus exposition wants them.
//
//   LatencyHistogram latency;
//   latency.Observe(absl::Microseconds(1500));  // counted under le="2"
//   HistogramSnapshot s = latency.Snapshot();
//   s.cumulative_counts[1];  // 1: observations <= 2 ms
//
// Thread-safe.
#ifndef MESH_SRC_METRICS_LATENCY_HISTOGRAM_H_
#define MESH_SRC_METRICS_LATENCY_HISTOGRAM_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/time/time.h"

namespace mesh::internal {

// The finite upper bounds, in milliseconds, inclusive (`le`). A last bucket,
// +Inf, follows them.
inline constexpr std::array<int64_t, 25> kLatencyBoundsMs = {
    1,    2,    3,     4,     5,     10,    20,   30,   40,
    50,   100,  200,   300,   400,   500,   1000, 2000, 3000,
    4000, 5000, 10000, 20000, 30000, 40000, 50000};
inline constexpr size_t kLatencyBucketCount = kLatencyBoundsMs.size() + 1;

struct HistogramSnapshot {
  // cumulative_counts[i]: observations <= kLatencyBoundsMs[i]; the last entry
  // (+Inf) counts every observation and equals `count`.
  std::array<uint64_t, kLatencyBucketCount> cumulative_counts = {};
  double sum_ms = 0;
  uint64_t count = 0;
};

class LatencyHistogram {
 public:
  // A negative latency counts as zero. The sum takes at most one day per
  // observation, so a runaway value cannot overflow it.
  void Observe(absl::Duration latency);

  // Reads each bucket once (relaxed). While other threads record, the sum
  // may be a few observations ahead of or behind the buckets; the counts are
  // always consistent with each other (`count` is their total).
  HistogramSnapshot Snapshot() const;

 private:
  std::array<std::atomic<uint64_t>, kLatencyBucketCount> buckets_ = {};
  std::atomic<uint64_t> sum_ns_{0};
};

}  // namespace mesh::internal

#endif  // MESH_SRC_METRICS_LATENCY_HISTOGRAM_H_

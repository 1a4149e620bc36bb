// LatencyHistogram: nanosecond latencies in log-linear buckets, for runs with
// too many calls to keep each one (mesh_churn_bench makes millions of
// microsecond calls). HdrHistogram's layout: 128 linear sub-buckets per power
// of two, so values under 128 ns are exact and any other is known within
// 1/128 (< 0.8 %); the maximum is kept exactly.
//
//   LatencyHistogram h;
//   h.Record(1830);                     // ns
//   double p99_ns = h.PercentileNs(99.0);
//
// Thread-compatible: one writer per histogram; Merge afterwards.
#ifndef MESH_BENCH_E2E_CHURN_HISTOGRAM_H_
#define MESH_BENCH_E2E_CHURN_HISTOGRAM_H_

#include <cstdint>
#include <vector>

namespace mesh::bench {

class LatencyHistogram {
 public:
  LatencyHistogram();

  // A negative value counts as 0.
  void Record(int64_t ns);
  void Merge(const LatencyHistogram& other);

  int64_t count() const { return count_; }
  int64_t max_ns() const { return max_; }
  // The sum of the recorded values, exact.
  int64_t sum_ns() const { return sum_; }
  // Nearest-rank percentile, `p` in [0, 100]: the middle of the bucket that
  // holds the rank (never above max_ns()); max_ns() for 100; 0 when empty.
  double PercentileNs(double p) const;

 private:
  static constexpr int kSubBits = 7;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = (64 - kSubBits + 1) * kSub;
  static int IndexOf(uint64_t v);
  static double MiddleOf(int index);

  std::vector<int64_t> counts_;
  int64_t count_ = 0;
  int64_t max_ = 0;
  int64_t sum_ = 0;
};

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_CHURN_HISTOGRAM_H_

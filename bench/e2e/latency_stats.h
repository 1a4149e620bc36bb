// LatencyStats: the percentiles of one benchmark run's call latencies, and
// the CSV text mesh_tail_latency_bench writes from them.
//
//   LatencyStats s = LatencyStats::From("p2c", latencies_ms, ok_count);
//   double p99 = s.Percentile(99.0);
//
// Thread-compatible.
#ifndef MESH_BENCH_E2E_LATENCY_STATS_H_
#define MESH_BENCH_E2E_LATENCY_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace mesh::bench {

class LatencyStats {
 public:
  // `latencies_ms` holds every call's latency (failed calls included).
  static LatencyStats From(std::string name, std::vector<double> latencies_ms,
                           int64_t succeeded);

  const std::string& name() const { return name_; }
  int64_t calls() const { return static_cast<int64_t>(sorted_ms_.size()); }
  int64_t succeeded() const { return succeeded_; }
  double success_rate() const;
  // Nearest-rank percentile, `p` in [0, 100]; 0 for a run without calls.
  double Percentile(double p) const;
  double Max() const { return Percentile(100.0); }
  // Calls that took `ms` or longer.
  int64_t CountAtLeast(double ms) const;

 private:
  std::string name_;
  std::vector<double> sorted_ms_;
  int64_t succeeded_ = 0;
};

// The percentiles of the latency-by-percentile curve: 0 to 99.99, evenly
// spaced in log10(1 / (1 - p)) (`steps` points per decade).
std::vector<double> CurvePercentiles(int steps_per_decade = 20);

// CPU time used so far by every thread of this process, in seconds.
double ProcessCpuSeconds();

// The median of `v` (its upper middle for an even count; 0 when empty).
double Median(std::vector<double> v);

// One row per run: calls, success rate, p50, p90, p99, p99.9, max in ms.
std::string SummaryCsv(const std::vector<LatencyStats>& runs);

// The latency-by-percentile curve: one row per CurvePercentiles() entry
// (the percentile, 1/(1-p), then one column per run, in ms).
std::string CurveCsv(const std::vector<LatencyStats>& runs);

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_LATENCY_STATS_H_

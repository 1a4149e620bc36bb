#include "bench/e2e/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mesh::bench {

LatencyStats LatencyStats::From(std::string name,
                                std::vector<double> latencies_ms,
                                int64_t succeeded) {
  LatencyStats stats;
  stats.name_ = std::move(name);
  stats.sorted_ms_ = std::move(latencies_ms);
  std::sort(stats.sorted_ms_.begin(), stats.sorted_ms_.end());
  stats.succeeded_ = succeeded;
  return stats;
}

double LatencyStats::success_rate() const {
  return sorted_ms_.empty() ? 0.0
                            : static_cast<double>(succeeded_) /
                                  static_cast<double>(sorted_ms_.size());
}

double LatencyStats::Percentile(double p) const {
  if (sorted_ms_.empty()) return 0.0;
  const double n = static_cast<double>(sorted_ms_.size());
  // Nearest rank: the smallest value with at least p % of the calls at or
  // below it.
  double rank = std::ceil(p / 100.0 * n);
  size_t index = rank < 1.0 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted_ms_[std::min(index, sorted_ms_.size() - 1)];
}

int64_t LatencyStats::CountAtLeast(double ms) const {
  return sorted_ms_.end() -
         std::lower_bound(sorted_ms_.begin(), sorted_ms_.end(), ms);
}

std::vector<double> CurvePercentiles(int steps_per_decade) {
  std::vector<double> out;
  // x = log10(1 / (1 - p)) from 0 (p = 0) to 4 (p = 99.99).
  for (int i = 0; i <= 4 * steps_per_decade; ++i) {
    double x = static_cast<double>(i) / steps_per_decade;
    out.push_back(100.0 * (1.0 - std::pow(10.0, -x)));
  }
  return out;
}

std::string SummaryCsv(const std::vector<LatencyStats>& runs) {
  std::string csv =
      "balancer,calls,succeeded,success_rate,p50_ms,p90_ms,p99_ms,p99.9_ms,"
      "max_ms\n";
  for (const LatencyStats& s : runs) {
    absl::StrAppendFormat(&csv, "%s,%d,%d,%.5f,%.3f,%.3f,%.3f,%.3f,%.3f\n",
                          s.name(), s.calls(), s.succeeded(), s.success_rate(),
                          s.Percentile(50), s.Percentile(90), s.Percentile(99),
                          s.Percentile(99.9), s.Max());
  }
  return csv;
}

std::string CurveCsv(const std::vector<LatencyStats>& runs) {
  std::string csv = "percentile,one_over_one_minus_p";
  for (const LatencyStats& s : runs) absl::StrAppend(&csv, ",", s.name());
  csv += "\n";
  for (double p : CurvePercentiles()) {
    absl::StrAppendFormat(&csv, "%.4f,%.4f", p, 100.0 / (100.0 - p));
    for (const LatencyStats& s : runs) {
      absl::StrAppendFormat(&csv, ",%.3f", s.Percentile(p));
    }
    csv += "\n";
  }
  return csv;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace mesh::bench

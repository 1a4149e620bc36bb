#include "src/balance/peak_ewma.h"

#include <cmath>

namespace mesh::internal {

double DecayWeight(int64_t elapsed_ns, double decay_ns) {
  if (elapsed_ns <= 0) return 1.0;
  return std::exp(-static_cast<double>(elapsed_ns) / decay_ns);
}

PeakEwma::PeakEwma(int64_t default_rtt_ns, int64_t decay_ns, int64_t now_ns)
    : decay_ns_(static_cast<double>(decay_ns)),
      estimate_ns_(static_cast<double>(default_rtt_ns)),
      stamp_ns_(now_ns) {}

void PeakEwma::Store(double estimate_ns, int64_t stamp_ns) {
  seq_.fetch_add(1, std::memory_order_acq_rel);  // odd: write in progress
  estimate_ns_.store(estimate_ns, std::memory_order_relaxed);
  stamp_ns_.store(stamp_ns, std::memory_order_relaxed);
  seq_.fetch_add(1, std::memory_order_release);
}

void PeakEwma::Observe(int64_t rtt_ns, int64_t now_ns) {
  absl::MutexLock lock(&writer_mu_);
  double est = estimate_ns_.load(std::memory_order_relaxed);
  int64_t stamp = stamp_ns_.load(std::memory_order_relaxed);
  double sample = static_cast<double>(rtt_ns);
  double next;
  if (sample > est) {
    next = sample;
  } else {
    double w = DecayWeight(now_ns - stamp, decay_ns_);
    next = est * w + sample * (1.0 - w);
  }
  Store(next, now_ns > stamp ? now_ns : stamp);
}

double PeakEwma::Estimate(int64_t now_ns) const {
  double est = 0;
  int64_t stamp = 0;
  // Bounded retries: a reader never waits for a writer. After them it uses
  // the last values read, each of which was a real estimate or stamp.
  for (int attempt = 0; attempt < 4; ++attempt) {
    uint32_t before = seq_.load(std::memory_order_acquire);
    // Acquire loads keep the second read of seq_ after them (no fence:
    // TSan does not model fences).
    est = estimate_ns_.load(std::memory_order_acquire);
    stamp = stamp_ns_.load(std::memory_order_acquire);
    if ((before & 1) == 0 && seq_.load(std::memory_order_relaxed) == before) {
      break;
    }
  }
  return est * DecayWeight(now_ns - stamp, decay_ns_);
}

void PeakEwma::CopyFrom(const PeakEwma& other) {
  absl::MutexLock lock(&writer_mu_);
  Store(other.estimate_ns_.load(std::memory_order_relaxed),
        other.stamp_ns_.load(std::memory_order_relaxed));
}

}  // namespace mesh::internal

namespace mesh::internal {

void PeakEwma::Seed(double estimate_ns, int64_t now_ns) {
  absl::MutexLock lock(&writer_mu_);
  Store(estimate_ns, now_ns);
}

}  // namespace mesh::internal

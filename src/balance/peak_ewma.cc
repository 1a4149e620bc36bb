#include "src/balance/peak_ewma.h"

#include <cmath>
#include <thread>

namespace mesh::internal {

double ExpSlow(double x) { return std::exp(x); }

double DecayWeight(int64_t elapsed_ns, double decay_ns) {
  if (elapsed_ns <= 0) return 1.0;
  return ExpNearZero(-static_cast<double>(elapsed_ns) / decay_ns);
}

PeakEwma::PeakEwma(int64_t default_rtt_ns, int64_t decay_ns, int64_t now_ns)
    : decay_ns_(static_cast<double>(decay_ns)),
      estimate_ns_(static_cast<double>(default_rtt_ns)),
      stamp_ns_(now_ns) {}

uint32_t PeakEwma::BeginWrite() {
  // Writers (call completions) exclude each other by moving the sequence from
  // even to odd; a writer that finds it odd waits for the other to finish,
  // which takes a few stores. Readers never wait (see Estimate).
  for (int spins = 0;; ++spins) {
    uint32_t seq = seq_.load(std::memory_order_relaxed);
    if ((seq & 1) == 0 &&
        seq_.compare_exchange_weak(seq, seq + 1, std::memory_order_acquire,
                                   std::memory_order_relaxed)) {
      return seq;
    }
    if (spins > 64) std::this_thread::yield();
  }
}

void PeakEwma::EndWrite(uint32_t seq) {
  seq_.store(seq + 2, std::memory_order_release);
}

void PeakEwma::Observe(int64_t rtt_ns, int64_t now_ns) {
  uint32_t seq = BeginWrite();
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
  // Release stores: the odd sequence is visible before the new data, so a
  // reader that saw the old even sequence cannot accept the new data.
  estimate_ns_.store(next, std::memory_order_release);
  stamp_ns_.store(now_ns > stamp ? now_ns : stamp, std::memory_order_release);
  EndWrite(seq);
}

void PeakEwma::Read(double* est, int64_t* stamp) const {
  // Bounded retries: a reader never waits for a writer. After them it uses
  // the last values read, each of which was a real estimate or stamp.
  for (int attempt = 0; attempt < 4; ++attempt) {
    uint32_t before = seq_.load(std::memory_order_acquire);
    // Acquire loads keep the second read of seq_ after them (no fence:
    // TSan does not model fences).
    *est = estimate_ns_.load(std::memory_order_acquire);
    *stamp = stamp_ns_.load(std::memory_order_acquire);
    if ((before & 1) == 0 && seq_.load(std::memory_order_relaxed) == before) {
      return;
    }
  }
}

void PeakEwma::ObservePeak(int64_t rtt_ns, int64_t now_ns) {
  uint32_t seq = BeginWrite();
  double sample = static_cast<double>(rtt_ns);
  if (sample > estimate_ns_.load(std::memory_order_relaxed)) {
    estimate_ns_.store(sample, std::memory_order_release);
    stamp_ns_.store(now_ns, std::memory_order_release);
  }
  EndWrite(seq);
}

double PeakEwma::Estimate(int64_t now_ns) const {
  double est = 0;
  int64_t stamp = 0;
  Read(&est, &stamp);
  return est * DecayWeight(now_ns - stamp, decay_ns_);
}

void PeakEwma::CopyFrom(const PeakEwma& other) {
  double est = 0;
  int64_t stamp = 0;
  other.Read(&est, &stamp);
  Seed(est, stamp);
}

void PeakEwma::Seed(double estimate_ns, int64_t now_ns) {
  uint32_t seq = BeginWrite();
  estimate_ns_.store(estimate_ns, std::memory_order_release);
  stamp_ns_.store(now_ns, std::memory_order_release);
  EndWrite(seq);
}

}  // namespace mesh::internal

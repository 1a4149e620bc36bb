// Peak-EWMA round-trip-time estimate, as in Finagle and Linkerd2's proxy.
//
// A sample above the estimate replaces it at once (the peak); a sample below
// it moves the estimate toward it with weight w = exp(-Δt/decay), where Δt is
// the time since the last sample: est = est·w + sample·(1-w). Between samples
// the estimate decays toward zero with the same time constant, so an endpoint
// that was slow long ago is tried again. A new endpoint starts at default_rtt.
//
//   PeakEwma ewma(30'000'000, 10'000'000'000, clock->NowNanos());
//   ewma.Observe(rtt_ns, clock->NowNanos());
//   double cost = ewma.Estimate(clock->NowNanos()) * (pending + 1);
//
// Thread-safe. A seqlock: writers (Observe, Seed, CopyFrom) exclude each
// other on the sequence number; Estimate() never waits (under a concurrent
// write it may return the value from just before or just after that write).
#ifndef MESH_SRC_BALANCE_PEAK_EWMA_H_
#define MESH_SRC_BALANCE_PEAK_EWMA_H_

#include <atomic>
#include <cstdint>

namespace mesh::internal {

// std::exp, out of line.
double ExpSlow(double x);

class PeakEwma {
 public:
  PeakEwma(int64_t default_rtt_ns, int64_t decay_ns, int64_t now_ns);

  // Records one RTT sample taken at `now_ns`.
  void Observe(int64_t rtt_ns, int64_t now_ns);
  // Records a sample that may only raise the estimate (a failed call: its
  // speed says nothing good about the endpoint).
  void ObservePeak(int64_t rtt_ns, int64_t now_ns);

  // The estimate in nanoseconds, decayed from the last sample to `now_ns`.
  double Estimate(int64_t now_ns) const;

  // Copies another estimate's state (used when an endpoint's attributes
  // change but its history should carry over).
  void CopyFrom(const PeakEwma& other);

  // Starts the estimate over at `estimate_ns` as of `now_ns`.
  void Seed(double estimate_ns, int64_t now_ns);

  // The stored estimate and the time of its last sample, undecayed, as one
  // consistent pair when possible (for comparisons that need one exp()).
  void Read(double* estimate_ns, int64_t* stamp_ns) const;

  double decay_ns() const { return decay_ns_; }

 private:
  // Takes the write side (sequence even → odd); returns the even value.
  uint32_t BeginWrite();
  void EndWrite(uint32_t seq);

  const double decay_ns_;
  std::atomic<uint32_t> seq_{0};
  std::atomic<double> estimate_ns_;
  std::atomic<int64_t> stamp_ns_;
};

// exp(-elapsed/decay) for elapsed >= 0; 1 for elapsed <= 0.
double DecayWeight(int64_t elapsed_ns, double decay_ns);

// exp(x), cheaply for the small |x| of the hot path (the time between two
// calls over a decay of seconds): within |x| <= 1/32 a degree-5 Taylor
// polynomial, whose relative error is below |x|^6/720 < 1.5e-12 (a
// comparison it decides differently from std::exp is a tie to 12 digits);
// std::exp elsewhere. Inline: the call and libm's exp were ~11% of a pick.
inline double ExpNearZero(double x) {
  if (x > 1.0 / 32 || x < -1.0 / 32) return ExpSlow(x);
  return 1.0 +
         x * (1.0 + x * (1.0 / 2 + x * (1.0 / 6 + x * (1.0 / 24 + x / 120))));
}

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_PEAK_EWMA_H_

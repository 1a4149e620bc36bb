#include "src/balance/p2c_balancer.h"

namespace mesh::internal {

double P2cBalancer::Cost(const EndpointLoad& load, int64_t now_ns) {
  int64_t pending = load.pending.load(std::memory_order_relaxed);
  return load.ewma.Estimate(now_ns) * static_cast<double>(pending + 1);
}

absl::StatusOr<CallHandle> P2cBalancer::Pick() {
  auto snap = snapshot_.Read();
  const auto& loads = snap->loads;
  if (loads.empty()) return NoEndpointsError();
  int64_t now = clock_->NowNanos();
  if (loads.size() == 1) return Take(loads[0], now);

  absl::BitGenRef gen = Gen();
  auto [a, b] = snap->sampler.SampleDistinctPair(gen);
  bool a_out = loads[a]->Ejected(now);
  bool b_out = loads[b]->Ejected(now);
  if (a_out && b_out) {
    // Both ejected: one more draw before settling for the cheaper of them.
    auto [c, d] = snap->sampler.SampleDistinctPair(gen);
    a = c;
    b = d;
    a_out = loads[a]->Ejected(now);
    b_out = loads[b]->Ejected(now);
  }
  if (a_out != b_out) return Take(loads[a_out ? b : a], now);
  // Ties go to the first draw, which was drawn by weight.
  return Take(Cost(*loads[b], now) < Cost(*loads[a], now) ? loads[b] : loads[a],
              now);
}

}  // namespace mesh::internal

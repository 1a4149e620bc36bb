#include "src/balance/p2c_balancer.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/random/distributions.h"

namespace mesh::internal {

bool P2cBalancer::Cheaper(const EndpointLoad& b, const EndpointLoad& a) {
  double est_a = 0, est_b = 0;
  int64_t t_a = 0, t_b = 0;
  a.ewma.Read(&est_a, &t_a);
  b.ewma.Read(&est_b, &t_b);
  double cost_a = est_a * static_cast<double>(
                              a.pending.load(std::memory_order_relaxed) + 1);
  double cost_b = est_b * static_cast<double>(
                              b.pending.load(std::memory_order_relaxed) + 1);
  // Clamped so that stamps hours apart give a huge factor, not inf or NaN.
  double x = std::clamp(static_cast<double>(t_b - t_a) / a.ewma.decay_ns(),
                        -600.0, 600.0);
  return cost_b * ExpNearZero(x) < cost_a;
}

absl::StatusOr<CallHandle> P2cBalancer::Pick() {
  auto snap = snapshot_.Read();
  const auto& loads = snap->loads;
  if (loads.empty()) return NoEndpointsError();
  int64_t now = clock_->NowNanos();
  if (loads.size() == 1) return Take(loads[0], now);

  auto [a, b] = snap->sampler.uniform()
                    ? DistinctPairFromBits(loads.size(), RandomBits())
                    : snap->sampler.SampleDistinctPair(Gen());
  bool a_out = loads[a]->Ejected(now);
  bool b_out = loads[b]->Ejected(now);
  if (a_out && b_out) {
    // Both ejected: one more draw before settling for the cheaper of them.
    auto [c, d] = snap->sampler.uniform()
                      ? DistinctPairFromBits(loads.size(), RandomBits())
                      : snap->sampler.SampleDistinctPair(Gen());
    a = c;
    b = d;
    a_out = loads[a]->Ejected(now);
    b_out = loads[b]->Ejected(now);
  }
  if (a_out != b_out) return Take(loads[a_out ? b : a], now);
  // Ties go to the first draw, which was drawn by weight.
  return Take(Cheaper(*loads[b], *loads[a]) ? loads[b] : loads[a], now);
}

absl::StatusOr<CallHandle> P2cBalancer::PickExcept(
    const std::vector<std::string>& tried) {
  auto snap = snapshot_.Read();
  const auto& loads = snap->loads;
  // A hedge's call has tried at most a few endpoints: its candidates are
  // the others, listed once per pick (hedges are rare beside picks).
  std::vector<size_t> open;
  open.reserve(loads.size());
  for (size_t i = 0; i < loads.size(); ++i) {
    if (!WasTried(tried, loads[i]->endpoint->address)) open.push_back(i);
  }
  if (open.empty()) {
    return absl::UnavailableError(
        loads.empty() ? "no endpoints" : "every endpoint was tried already");
  }
  const int64_t now = clock_->NowNanos();
  if (open.size() == 1) return Take(loads[open[0]], now);
  const size_t x = absl::Uniform<size_t>(Gen(), 0, open.size());
  size_t y = absl::Uniform<size_t>(Gen(), 0, open.size() - 1);
  if (y >= x) ++y;
  const auto& a = loads[open[x]];
  const auto& b = loads[open[y]];
  const bool a_out = a->Ejected(now);
  const bool b_out = b->Ejected(now);
  if (a_out != b_out) return Take(a_out ? b : a, now);
  return Take(Cheaper(*b, *a) ? b : a, now);
}

}  // namespace mesh::internal

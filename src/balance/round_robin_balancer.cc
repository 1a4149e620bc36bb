#include "src/balance/round_robin_balancer.h"

#include <algorithm>

namespace mesh::internal {

absl::StatusOr<CallHandle> RoundRobinBalancer::Pick() {
  auto snap = snapshot_.Read();
  const auto& loads = snap->loads;
  if (loads.empty()) return NoEndpointsError();
  size_t n = loads.size();
  uint64_t start = snap->next.fetch_add(1, std::memory_order_relaxed);
  int64_t now = clock_->NowNanos();
  // Look a few places ahead for a non-ejected endpoint; never scan the set.
  size_t tries = std::min<size_t>(n, 8);
  for (size_t i = 0; i < tries; ++i) {
    const auto& load = loads[(start + i) % n];
    if (!load->Ejected(now)) return Take(load, now);
  }
  return Take(loads[start % n], now);
}

}  // namespace mesh::internal

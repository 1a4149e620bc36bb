#include "src/balance/ring_hash_balancer.h"

#include <algorithm>

#include "absl/random/distributions.h"

namespace mesh::internal {

absl::StatusOr<CallHandle> RingHashBalancer::Pick() {
  return PickHashed(absl::Uniform<uint64_t>(Gen()));
}

absl::StatusOr<CallHandle> RingHashBalancer::PickHashed(uint64_t hash) {
  auto snap = snapshot_.Read();
  const auto& loads = snap->loads;
  if (loads.empty()) return NoEndpointsError();
  const HashRing& ring = *snap->ring;  // n >= 1 gives >= min_size entries
  int64_t now = clock_->NowNanos();
  size_t pos = ring.Find(hash);
  uint32_t first = ring.index(pos);
  if (!loads[first]->Ejected(now)) return Take(loads[first], now);
  return Take(loads[WalkPastEjected(*snap, pos, first, now)], now);
}

uint32_t RingHashBalancer::WalkPastEjected(const Snapshot& snap, size_t pos,
                                           uint32_t first, int64_t now_ns) {
  if (now_ns < snap.ring_all_ejected_until_ns.load(std::memory_order_relaxed)) {
    return first;
  }
  const HashRing& ring = *snap.ring;
  const auto& loads = snap.loads;
  // Runs of one endpoint's entries are checked once; an endpoint met again
  // further on is checked again (a relaxed load): cheaper than remembering.
  uint32_t last = first;
  int64_t earliest_end =
      loads[first]->ejected_until_ns.load(std::memory_order_relaxed);
  for (size_t step = 1, p = pos; step < ring.size(); ++step) {
    if (++p == ring.size()) p = 0;
    uint32_t i = ring.index(p);
    if (i == last) continue;
    last = i;
    int64_t until = loads[i]->ejected_until_ns.load(std::memory_order_relaxed);
    if (until <= now_ns) return i;
    earliest_end = std::min(earliest_end, until);
  }
  // Every endpoint on the ring is ejected. Within one snapshot an
  // ejection's end only moves later (a new ejection starts only after the
  // last one ended; inherited state is copied before publishing), so none
  // comes back before earliest_end, and picks until then need no walk. A
  // racing pick may store an earlier bound: merely conservative.
  snap.ring_all_ejected_until_ns.store(earliest_end, std::memory_order_relaxed);
  return first;
}

size_t RingHashBalancer::RingSize() const {
  auto snap = snapshot_.Read();
  return snap->ring != nullptr ? snap->ring->size() : 0;
}

std::shared_ptr<const HashRing> RingHashBalancer::MakeRing(
    const std::vector<std::shared_ptr<EndpointLoad>>& loads,
    const Snapshot& previous) const {
  // An update that changes only other attributes (labels, identity) keeps
  // the ring: the largest (8M entries) takes about 2 s to build.
  if (previous.ring != nullptr && previous.loads.size() == loads.size() &&
      std::equal(loads.begin(), loads.end(), previous.loads.begin(),
                 [](const auto& a, const auto& b) {
                   return a->endpoint->weight == b->endpoint->weight &&
                          a->endpoint->address == b->endpoint->address;
                 })) {
    return previous.ring;
  }
  return std::make_shared<const HashRing>(
      loads.size(),
      [&](size_t i) -> const Endpoint& { return *loads[i]->endpoint; },
      options_.ring_min_size, options_.ring_max_size);
}

}  // namespace mesh::internal

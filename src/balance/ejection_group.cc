#include "src/balance/ejection_group.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/balance/endpoint_load.h"

namespace mesh::internal {

size_t MaxEjected(size_t n, double share) {
  if (n < 2) return 0;
  auto limit = static_cast<size_t>(std::floor(share * static_cast<double>(n)));
  return std::clamp<size_t>(limit, 1, n - 1);
}

int64_t EjectionNanos(uint64_t times, int64_t base_ns, int64_t max_ns) {
  if (times > static_cast<uint64_t>(max_ns / base_ns)) return max_ns;
  return std::min(base_ns * static_cast<int64_t>(times), max_ns);
}

EjectionGroup::EjectionGroup(const BalancerOptions& options)
    : consecutive_failures_(options.ejection_consecutive_failures),
      base_ns_(absl::ToInt64Nanoseconds(options.ejection_base)),
      max_ns_(absl::ToInt64Nanoseconds(options.ejection_max)),
      max_share_(options.ejection_max_share) {}

void EjectionGroup::SetMembers(
    const std::vector<std::shared_ptr<EndpointLoad>>& loads) {
  MutexLock lock(&mu_);
  until_ns_.clear();
  until_ns_.reserve(loads.size());
  for (const auto& l : loads) {
    until_ns_.emplace(l.get(),
                      l->ejected_until_ns.load(std::memory_order_relaxed));
  }
}

void EjectionGroup::Replace(const EndpointLoad& from, EndpointLoad& to) {
  MutexLock lock(&mu_);
  int64_t until = from.ejected_until_ns.load(std::memory_order_relaxed);
  to.ejected_until_ns.store(until, std::memory_order_relaxed);
  to.times_ejected.store(from.times_ejected.load(std::memory_order_relaxed),
                         std::memory_order_relaxed);
  to.ejections.store(from.ejections.load(std::memory_order_relaxed),
                     std::memory_order_relaxed);
  if (until_ns_.erase(&from) != 0) until_ns_[&to] = until;
}

bool EjectionGroup::TryEject(EndpointLoad& load, int64_t now_ns) {
  MutexLock lock(&mu_);
  auto self = until_ns_.find(&load);
  // A record no longer in the set (removed, or replaced by an update) is
  // seen by no pick: nothing to eject.
  if (self == until_ns_.end()) return false;
  int64_t last_until = self->second;
  if (last_until > now_ns) return false;  // already ejected
  // O(set size) under the lock, on the failure path only.
  size_t ejected = 0;
  for (const auto& [member, until] : until_ns_) ejected += until > now_ns;
  if (ejected >= MaxEjected(until_ns_.size(), max_share_)) return false;

  uint32_t times = load.times_ejected.load(std::memory_order_relaxed);
  // Healthy for ejection_max since the last ejection ended: start over.
  if (now_ns - last_until >= max_ns_) times = 0;
  if (times < std::numeric_limits<uint32_t>::max()) ++times;
  int64_t duration = EjectionNanos(times, base_ns_, max_ns_);
  int64_t until = duration > std::numeric_limits<int64_t>::max() - now_ns
                      ? std::numeric_limits<int64_t>::max()
                      : now_ns + duration;
  self->second = until;
  load.times_ejected.store(times, std::memory_order_relaxed);
  load.ejected_until_ns.store(until, std::memory_order_relaxed);
  load.ejections.fetch_add(1, std::memory_order_relaxed);
  load.consecutive_failures.store(0, std::memory_order_relaxed);
  return true;
}

}  // namespace mesh::internal

#include "src/balance/ejection_group.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/random/distributions.h"
#include "src/balance/endpoint_load.h"

namespace mesh::internal {

size_t MaxEjected(size_t n, double share) {
  if (n < 2) return 0;
  auto limit = static_cast<size_t>(std::floor(share * static_cast<double>(n)));
  return std::clamp<size_t>(limit, 1, n - 1);
}

int64_t EjectionNanos(uint64_t times, int64_t base_ns, int64_t max_ns,
                      bool exponential) {
  if (exponential) {
    // base × 2^(times-1) reaches max once 2^(times-1) >= max / base.
    const uint64_t doublings = times - 1;
    if (doublings >= 63 ||
        (uint64_t{1} << doublings) >= static_cast<uint64_t>(max_ns / base_ns)) {
      return max_ns;
    }
    return std::min(base_ns << doublings, max_ns);
  }
  if (times > static_cast<uint64_t>(max_ns / base_ns)) return max_ns;
  return std::min(base_ns * static_cast<int64_t>(times), max_ns);
}

EjectionGroup::EjectionGroup(const BalancerOptions& options, int64_t now_ns)
    : consecutive_failures_(options.ejection_consecutive_failures),
      base_ns_(absl::ToInt64Nanoseconds(options.ejection_base)),
      max_ns_(absl::ToInt64Nanoseconds(options.ejection_max)),
      exponential_(options.ejection_exponential),
      jitter_(options.ejection_jitter),
      max_share_(options.ejection_max_share),
      min_ready_(options.ejection_min_ready),
      interval_(options.interval_ejection),
      interval_ns_(interval_ ? absl::ToInt64Nanoseconds(interval_->interval)
                             : 0),
      next_sweep_ns_(interval_ns_ > std::numeric_limits<int64_t>::max() - now_ns
                         ? std::numeric_limits<int64_t>::max()
                         : now_ns + interval_ns_) {}

void EjectionGroup::SetMembers(
    const std::vector<std::shared_ptr<EndpointLoad>>& loads) {
  MutexLock lock(&mu_);
  until_ns_.clear();
  until_ns_.reserve(loads.size());
  for (const auto& l : loads) {
    until_ns_.emplace(l.get(),
                      l->ejected_until_ns.load(std::memory_order_relaxed));
  }
  if (interval_) members_.assign(loads.begin(), loads.end());
}

void EjectionGroup::Replace(const EndpointLoad& from, EndpointLoad& to) {
  MutexLock lock(&mu_);
  int64_t until = from.ejected_until_ns.load(std::memory_order_relaxed);
  to.ejected_until_ns.store(until, std::memory_order_relaxed);
  to.times_ejected.store(from.times_ejected.load(std::memory_order_relaxed),
                         std::memory_order_relaxed);
  to.ejections.store(from.ejections.load(std::memory_order_relaxed),
                     std::memory_order_relaxed);
  to.ejection_reason.store(from.ejection_reason.load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
  if (until_ns_.erase(&from) != 0) until_ns_[&to] = until;
}

bool EjectionGroup::MayEjectOneMore(size_t ejected, size_t members) const {
  // The floor: one more ejected must leave min_ready_ un-ejected.
  if (ejected + 1 + min_ready_ > members) return false;
  if (interval_) {
    // Envoy's rule: while the ejected share is below the maximum. (The
    // margin keeps 7 of 100 at 7% from passing as 7.000000000000001.)
    return static_cast<double>(ejected) <
           max_share_ * static_cast<double>(members) - 1e-9;
  }
  return ejected < MaxEjected(members, max_share_);
}

bool EjectionGroup::TryEject(EndpointLoad& load, int64_t now_ns) {
  MutexLock lock(&mu_);
  auto self = until_ns_.find(&load);
  // A record no longer in the set (removed, or replaced by an update) is
  // seen by no pick: nothing to eject.
  if (self == until_ns_.end()) return false;
  if (self->second > now_ns) return false;  // already ejected
  // O(set size) under the lock, on the failure path only.
  size_t ejected = 0;
  for (const auto& [member, until] : until_ns_) ejected += until > now_ns;
  if (!MayEjectOneMore(ejected, until_ns_.size())) return false;
  return EjectLocked(load, now_ns, self, EjectionReason::kConsecutiveFailures);
}

bool EjectionGroup::EjectLocked(
    EndpointLoad& load, int64_t now_ns,
    absl::flat_hash_map<const EndpointLoad*, int64_t>::iterator self,
    EjectionReason reason) {
  int64_t last_until = self->second;
  uint32_t times = load.times_ejected.load(std::memory_order_relaxed);
  // Healthy for ejection_max since the last ejection ended: start over.
  // (With interval ejection the looks step it down instead.)
  if (!interval_ && now_ns - last_until >= max_ns_) times = 0;
  if (times < std::numeric_limits<uint32_t>::max()) ++times;
  int64_t duration = EjectionNanos(times, base_ns_, max_ns_, exponential_);
  if (jitter_ > 0) {
    const double longer =
        static_cast<double>(duration) * absl::Uniform<double>(gen_, 0, jitter_);
    duration = longer >= static_cast<double>(
                             std::numeric_limits<int64_t>::max() - duration)
                   ? std::numeric_limits<int64_t>::max()
                   : duration + static_cast<int64_t>(longer);
  }
  int64_t until = duration > std::numeric_limits<int64_t>::max() - now_ns
                      ? std::numeric_limits<int64_t>::max()
                      : now_ns + duration;
  self->second = until;
  load.times_ejected.store(times, std::memory_order_relaxed);
  load.ejected_until_ns.store(until, std::memory_order_relaxed);
  load.ejections.fetch_add(1, std::memory_order_relaxed);
  load.ejection_reason.store(reason, std::memory_order_relaxed);
  load.consecutive_failures.store(0, std::memory_order_relaxed);
  return true;
}

void EjectionGroup::MaybeSweep(int64_t now_ns) {
  if (interval_ns_ == 0) return;
  // Without the lock first: every call that ends checks.
  if (now_ns < next_sweep_ns_.load(std::memory_order_relaxed)) return;
  MutexLock lock(&mu_);
  // Decided under the lock, so that looks run in the order of their times:
  // a caller that read the clock before another's look ran sees that look's
  // next due time here, and leaves.
  const int64_t due = next_sweep_ns_.load(std::memory_order_relaxed);
  if (now_ns < due) return;
  next_sweep_ns_.store(
      interval_ns_ > std::numeric_limits<int64_t>::max() - now_ns
          ? std::numeric_limits<int64_t>::max()
          : now_ns + interval_ns_,
      std::memory_order_relaxed);
  // The intervals that passed since the last look (more than one when no
  // call ended for a while).
  SweepLocked(now_ns, due - interval_ns_, 1 + (now_ns - due) / interval_ns_);
}

void EjectionGroup::EjectOutlier(EndpointLoad& load,
                                 uint32_t enforcement_percentage,
                                 int64_t now_ns, size_t members,
                                 size_t* ejected, EjectionReason reason) {
  if (load.Ejected(now_ns) || !MayEjectOneMore(*ejected, members)) return;
  if (absl::Uniform<uint32_t>(gen_, 0, 100) >= enforcement_percentage) return;
  auto self = until_ns_.find(&load);
  if (self == until_ns_.end()) return;
  if (EjectLocked(load, now_ns, self, reason)) ++*ejected;
}

namespace {

// One member's calls over the interval.
struct Tally {
  std::shared_ptr<EndpointLoad> load;
  uint64_t volume = 0;
  uint64_t failed = 0;
  double success_rate = 0;  // 0..1, of volume
};

}  // namespace

void EjectionGroup::SweepLocked(int64_t now_ns, int64_t last_look_ns,
                                int64_t intervals) {
  std::vector<Tally> tallies;
  tallies.reserve(members_.size());
  size_t ejected = 0;
  for (const std::weak_ptr<EndpointLoad>& weak : members_) {
    std::shared_ptr<EndpointLoad> load = weak.lock();
    if (load == nullptr) continue;
    uint64_t ok =
        load->interval_successes.exchange(0, std::memory_order_relaxed);
    uint64_t failed =
        load->interval_failures.exchange(0, std::memory_order_relaxed);
    Tally t;
    t.volume = ok + failed;
    t.failed = failed;
    t.success_rate =
        t.volume == 0 ? 1.0
                      : static_cast<double>(ok) / static_cast<double>(t.volume);
    t.load = std::move(load);
    ejected += t.load->Ejected(now_ns);
    tallies.push_back(std::move(t));
  }
  const size_t members = tallies.size();

  if (interval_->success_rate) {
    const IntervalEjection::SuccessRate& rule = *interval_->success_rate;
    std::vector<Tally*> candidates;
    for (Tally& t : tallies) {
      if (t.volume > 0 && t.volume >= rule.request_volume) {
        candidates.push_back(&t);
      }
    }
    if (!candidates.empty() && candidates.size() >= rule.minimum_hosts) {
      double mean = 0;
      for (const Tally* t : candidates) mean += t->success_rate;
      mean /= static_cast<double>(candidates.size());
      double variance = 0;
      for (const Tally* t : candidates) {
        variance += (t->success_rate - mean) * (t->success_rate - mean);
      }
      variance /= static_cast<double>(candidates.size());
      const double threshold =
          mean - std::sqrt(variance) * (rule.stdev_factor / 1000.0);
      for (Tally* t : candidates) {
        if (t->success_rate < threshold) {
          EjectOutlier(*t->load, rule.enforcement_percentage, now_ns, members,
                       &ejected, EjectionReason::kSuccessRate);
        }
      }
    }
  }
  if (interval_->failure_percentage) {
    const IntervalEjection::FailurePercentage& rule =
        *interval_->failure_percentage;
    size_t candidates = 0;
    for (const Tally& t : tallies) {
      candidates += t.volume > 0 && t.volume >= rule.request_volume;
    }
    if (candidates > 0 && candidates >= rule.minimum_hosts) {
      for (Tally& t : tallies) {
        if (t.volume == 0 || t.volume < rule.request_volume) continue;
        // In integers: 1 failure of 5 is 20%, exactly.
        if (t.failed * 100 >= uint64_t{rule.threshold} * t.volume) {
          EjectOutlier(*t.load, rule.enforcement_percentage, now_ns, members,
                       &ejected, EjectionReason::kFailurePercentage);
        }
      }
    }
  }
  // The backoff steps down once per look an endpoint was un-ejected at,
  // but not at the look that finds its ejection over (as gRPC's looks,
  // which un-eject or step down). Without calls for a while, the looks
  // missed count as if taken: at last_look + k × interval, k = 1..intervals.
  for (const Tally& t : tallies) {
    if (t.load->Ejected(now_ns)) continue;
    uint32_t times = t.load->times_ejected.load(std::memory_order_relaxed);
    if (times == 0) continue;
    int64_t until = t.load->ejected_until_ns.load(std::memory_order_relaxed);
    int64_t steps = intervals;
    if (until > last_look_ns) {
      // The first look at or after `until` un-ejects; later ones step down.
      steps -= (until - last_look_ns + interval_ns_ - 1) / interval_ns_;
    }
    if (steps <= 0) continue;
    t.load->times_ejected.store(
        steps >= times ? 0 : times - static_cast<uint32_t>(steps),
        std::memory_order_relaxed);
  }
}

}  // namespace mesh::internal

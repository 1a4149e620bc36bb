#include "src/channel/backend_policy_state.h"

#include <algorithm>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "src/balance/balancer.h"

namespace mesh::internal {
namespace {

bool SameEjection(const std::optional<BackendPolicy::Ejection>& a,
                  const std::optional<BackendPolicy::Ejection>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->consecutive_failures == b->consecutive_failures &&
         a->base == b->base && a->max == b->max &&
         a->max_share == b->max_share &&
         a->interval_rules == b->interval_rules &&
         a->min_ready_endpoints == b->min_ready_endpoints &&
         a->exponential == b->exponential && a->jitter == b->jitter &&
         SameIntervalEjection(a->interval, b->interval);
}

}  // namespace

BackendPolicyState::BackendPolicyState(std::string target)
    : target_(std::move(target)) {}

bool BackendPolicyState::Same(const BackendPolicy& a, const BackendPolicy& b) {
  if (a.balancing != b.balancing || a.ring_min_size != b.ring_min_size ||
      a.ring_max_size != b.ring_max_size || a.max_requests != b.max_requests ||
      a.drops.size() != b.drops.size() ||
      !SameEjection(a.ejection, b.ejection) || a.default_rtt != b.default_rtt ||
      a.decay != b.decay || a.queue_capacity != b.queue_capacity ||
      a.fail_fast_timeout != b.fail_fast_timeout) {
    return false;
  }
  for (size_t i = 0; i < a.drops.size(); ++i) {
    if (a.drops[i].category != b.drops[i].category ||
        a.drops[i].per_million != b.drops[i].per_million) {
      return false;
    }
  }
  return true;
}

bool BackendPolicyState::Apply(const BackendPolicy& policy) {
  {
    MutexLock lock(&mu_);
    if (policy_ && Same(*policy_, policy)) return false;  // nothing new
  }
  max_requests_.store(policy.max_requests, std::memory_order_relaxed);
  queue_capacity_.store(policy.queue_capacity, std::memory_order_relaxed);
  fail_fast_ns_.store(policy.fail_fast_timeout &&
                              *policy.fail_fast_timeout > absl::ZeroDuration()
                          ? absl::ToInt64Nanoseconds(*policy.fail_fast_timeout)
                          : 0,
                      std::memory_order_relaxed);
  drops_.Publish(
      std::make_unique<std::vector<BackendPolicy::Drop>>(policy.drops));
  has_drops_.store(!policy.drops.empty(), std::memory_order_release);
  {
    MutexLock lock(&mu_);
    policy_ = policy;
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

std::optional<std::string> BackendPolicyState::DrawDrop() {
  if (!has_drops_.load(std::memory_order_acquire)) return std::nullopt;
  thread_local absl::InsecureBitGen gen;
  auto drops = drops_.Read();
  for (const BackendPolicy::Drop& d : *drops) {
    if (d.per_million >= 1'000'000 ||
        absl::Uniform<uint32_t>(gen, 0, 1'000'000) < d.per_million) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return d.category;
    }
  }
  return std::nullopt;
}

bool BackendPolicyState::TryStartRequest(bool* counted) {
  *counted = false;
  const uint32_t limit = max_requests_.load(std::memory_order_relaxed);
  if (limit == 0) return true;
  int64_t n = in_flight_.fetch_add(1, std::memory_order_relaxed);
  if (n >= limit) {
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  *counted = true;
  return true;
}

absl::Status BackendPolicyState::CircuitBreakerStatus() {
  refusals_.fetch_add(1, std::memory_order_relaxed);
  return absl::UnavailableError(absl::StrCat(
      "'", target_, "' has ", max_requests_.load(std::memory_order_relaxed),
      " requests in flight, its limit (circuit breaker max_requests)"));
}

bool BackendPolicyState::TryStartFault(uint32_t limit) {
  uint32_t n = active_faults_.fetch_add(1, std::memory_order_relaxed);
  if (limit != 0 && n >= limit) {
    active_faults_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

BalancerOptions BackendPolicyState::BalancerOptionsFor(
    const BalancerOptions& channel) const {
  BalancerOptions options = channel;
  MutexLock lock(&mu_);
  if (!policy_) return options;
  switch (policy_->balancing) {
    case BackendPolicy::Balancing::kChannelDefault:
      break;
    case BackendPolicy::Balancing::kRoundRobin:
      options.kind = BalancerKind::kRoundRobin;
      break;
    case BackendPolicy::Balancing::kRingHash:
      options.kind = BalancerKind::kRingHash;
      options.ring_min_size = policy_->ring_min_size;
      options.ring_max_size = policy_->ring_max_size;
      break;
  }
  // A value a balancer would refuse (not above zero) is left out.
  if (policy_->default_rtt && *policy_->default_rtt > absl::ZeroDuration()) {
    options.default_rtt = *policy_->default_rtt;
  }
  if (policy_->decay && *policy_->decay > absl::ZeroDuration()) {
    options.decay = *policy_->decay;
  }
  if (policy_->ejection) {
    const BackendPolicy::Ejection& e = *policy_->ejection;
    options.ejection_consecutive_failures = e.consecutive_failures;
    options.ejection_base = e.base;
    options.ejection_max = std::max(e.base, e.max);
    options.ejection_max_share = e.max_share;
    options.ejection_min_ready = e.min_ready_endpoints;
    options.ejection_exponential = e.exponential;
    // A value a balancer would refuse is left out.
    options.ejection_jitter = e.jitter >= 0 && e.jitter <= 100 ? e.jitter : 0;
    options.interval_ejection =
        e.interval_rules ? std::optional<IntervalEjection>(e.interval)
                         : std::nullopt;
  }
  return options;
}

std::optional<BackendPolicy> BackendPolicyState::policy() const {
  MutexLock lock(&mu_);
  return policy_;
}

}  // namespace mesh::internal

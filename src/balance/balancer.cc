#include "src/balance/balancer.h"

#include <algorithm>

#include "src/balance/p2c_balancer.h"
#include "src/balance/ring_hash_balancer.h"
#include "src/balance/round_robin_balancer.h"

namespace mesh::internal {

bool WasTried(const std::vector<std::string>& tried,
              const std::string& address) {
  return std::find(tried.begin(), tried.end(), address) != tried.end();
}

absl::StatusOr<CallHandle> Balancer::PickExcept(
    const std::vector<std::string>& tried) {
  for (int i = 0; i < 8; ++i) {
    absl::StatusOr<CallHandle> picked = Pick();
    if (!picked.ok()) return picked;
    if (!WasTried(tried, picked->endpoint().address)) return picked;
    // Never sent: no verdict on the endpoint.
    picked->Complete(CallOutcome::kCancelled);
  }
  return absl::UnavailableError("every endpoint offered was tried already");
}

bool SameIntervalEjection(const std::optional<IntervalEjection>& a,
                          const std::optional<IntervalEjection>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->interval != b->interval ||
      a->success_rate.has_value() != b->success_rate.has_value() ||
      a->failure_percentage.has_value() != b->failure_percentage.has_value()) {
    return false;
  }
  if (a->success_rate) {
    const IntervalEjection::SuccessRate& x = *a->success_rate;
    const IntervalEjection::SuccessRate& y = *b->success_rate;
    if (x.stdev_factor != y.stdev_factor ||
        x.enforcement_percentage != y.enforcement_percentage ||
        x.minimum_hosts != y.minimum_hosts ||
        x.request_volume != y.request_volume) {
      return false;
    }
  }
  if (a->failure_percentage) {
    const IntervalEjection::FailurePercentage& x = *a->failure_percentage;
    const IntervalEjection::FailurePercentage& y = *b->failure_percentage;
    if (x.threshold != y.threshold ||
        x.enforcement_percentage != y.enforcement_percentage ||
        x.minimum_hosts != y.minimum_hosts ||
        x.request_volume != y.request_volume) {
      return false;
    }
  }
  return true;
}

bool SameBalancerOptions(const BalancerOptions& a, const BalancerOptions& b) {
  return a.kind == b.kind && a.default_rtt == b.default_rtt &&
         a.decay == b.decay &&
         a.ejection_consecutive_failures == b.ejection_consecutive_failures &&
         a.ejection_base == b.ejection_base &&
         a.ejection_max == b.ejection_max &&
         a.ejection_exponential == b.ejection_exponential &&
         a.ejection_jitter == b.ejection_jitter &&
         a.ejection_max_share == b.ejection_max_share &&
         a.ejection_min_ready == b.ejection_min_ready &&
         a.ring_min_size == b.ring_min_size &&
         a.ring_max_size == b.ring_max_size &&
         SameIntervalEjection(a.interval_ejection, b.interval_ejection);
}

absl::StatusOr<std::unique_ptr<Balancer>> Balancer::Create(
    const BalancerOptions& options, const Clock* clock, absl::BitGenRef* rng) {
  if (options.default_rtt <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "BalancerOptions.default_rtt must be > 0");
  }
  if (options.decay <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("BalancerOptions.decay must be > 0");
  }
  if (options.ejection_base <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "BalancerOptions.ejection_base must be > 0");
  }
  if (options.ejection_max < options.ejection_base) {
    return absl::InvalidArgumentError(
        "BalancerOptions.ejection_max must be >= ejection_base");
  }
  // Written so that NaN fails too.
  if (!(options.ejection_jitter >= 0 && options.ejection_jitter <= 100)) {
    return absl::InvalidArgumentError(
        "BalancerOptions.ejection_jitter must be in [0, 100]");
  }
  if (!(options.ejection_max_share >= 0 && options.ejection_max_share <= 1)) {
    return absl::InvalidArgumentError(
        "BalancerOptions.ejection_max_share must be in [0, 1]");
  }
  if (options.interval_ejection) {
    const IntervalEjection& ie = *options.interval_ejection;
    if (ie.interval <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          "BalancerOptions.interval_ejection.interval must be > 0");
    }
    if (ie.success_rate && ie.success_rate->enforcement_percentage > 100) {
      return absl::InvalidArgumentError(
          "BalancerOptions.interval_ejection.success_rate."
          "enforcement_percentage must be <= 100");
    }
    if (ie.failure_percentage &&
        (ie.failure_percentage->threshold > 100 ||
         ie.failure_percentage->enforcement_percentage > 100)) {
      return absl::InvalidArgumentError(
          "BalancerOptions.interval_ejection.failure_percentage threshold and "
          "enforcement_percentage must be <= 100");
    }
  }
  // A42's bounds. Checked for every kind: options are validated once,
  // whatever the policy.
  constexpr uint64_t kMaxRingSize = 8 * 1024 * 1024;
  if (options.ring_min_size < 1 || options.ring_min_size > kMaxRingSize) {
    return absl::InvalidArgumentError(
        "BalancerOptions.ring_min_size must be in [1, 8388608]");
  }
  if (options.ring_max_size < options.ring_min_size ||
      options.ring_max_size > kMaxRingSize) {
    return absl::InvalidArgumentError(
        "BalancerOptions.ring_max_size must be in [ring_min_size, 8388608]");
  }
  switch (options.kind) {
    case BalancerKind::kP2cPeakEwma:
      return std::unique_ptr<Balancer>(new P2cBalancer(options, clock, rng));
    case BalancerKind::kRoundRobin:
      return std::unique_ptr<Balancer>(
          new RoundRobinBalancer(options, clock, rng));
    case BalancerKind::kRingHash:
      return std::unique_ptr<Balancer>(
          new RingHashBalancer(options, clock, rng));
  }
  return absl::InvalidArgumentError("BalancerOptions.kind is unknown");
}

}  // namespace mesh::internal

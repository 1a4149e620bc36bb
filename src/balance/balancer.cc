#include "src/balance/balancer.h"

#include "src/balance/p2c_balancer.h"
#include "src/balance/ring_hash_balancer.h"
#include "src/balance/round_robin_balancer.h"

namespace mesh::internal {

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
  if (!(options.ejection_max_share >= 0 && options.ejection_max_share <= 1)) {
    return absl::InvalidArgumentError(
        "BalancerOptions.ejection_max_share must be in [0, 1]");
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

#include "mesh/balancer.h"

#include <chrono>
#include <utility>

#include "src/balance/endpoint_load.h"
#include "src/balance/p2c_balancer.h"
#include "src/balance/round_robin_balancer.h"

namespace mesh {
namespace {

class SteadyClock final : public Clock {
 public:
  int64_t NowNanos() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

Clock* Clock::Real() {
  static SteadyClock* clock = new SteadyClock();
  return clock;
}

CallHandle::CallHandle(std::shared_ptr<internal::EndpointLoad> load,
                       const Clock* clock, int64_t start_nanos)
    : load_(std::move(load)), clock_(clock), start_nanos_(start_nanos) {}

CallHandle::CallHandle(CallHandle&& other) noexcept
    : load_(std::move(other.load_)),
      clock_(other.clock_),
      start_nanos_(other.start_nanos_) {}

CallHandle& CallHandle::operator=(CallHandle&& other) noexcept {
  if (this != &other) {
    Complete(CallOutcome::kSuccess);
    load_ = std::move(other.load_);
    clock_ = other.clock_;
    start_nanos_ = other.start_nanos_;
  }
  return *this;
}

CallHandle::~CallHandle() { Complete(CallOutcome::kSuccess); }

const Endpoint& CallHandle::endpoint() const { return *load_->endpoint; }

void CallHandle::Complete(CallOutcome outcome) {
  if (load_ == nullptr) return;
  load_->Settle(outcome, start_nanos_, clock_->NowNanos());
  load_.reset();
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
  if (!(options.ejection_max_share >= 0 && options.ejection_max_share <= 1)) {
    return absl::InvalidArgumentError(
        "BalancerOptions.ejection_max_share must be in [0, 1]");
  }
  switch (options.kind) {
    case BalancerKind::kP2cPeakEwma:
      return std::unique_ptr<Balancer>(
          new internal::P2cBalancer(options, clock, rng));
    case BalancerKind::kRoundRobin:
      return std::unique_ptr<Balancer>(
          new internal::RoundRobinBalancer(options, clock, rng));
  }
  return absl::InvalidArgumentError("BalancerOptions.kind is unknown");
}

}  // namespace mesh

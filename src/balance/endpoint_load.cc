#include "src/balance/endpoint_load.h"

#include <utility>

#include "src/balance/ejection_group.h"

namespace mesh::internal {

EndpointLoad::EndpointLoad(std::shared_ptr<const Endpoint> e,
                           const BalancerOptions& options, int64_t now_ns,
                           std::shared_ptr<EjectionGroup> ejection)
    : endpoint(std::move(e)),
      ejection(std::move(ejection)),
      tracks_rtt(options.kind != BalancerKind::kRingHash),
      ewma(absl::ToInt64Nanoseconds(options.default_rtt),
           absl::ToInt64Nanoseconds(options.decay), now_ns) {}

void EndpointLoad::InheritFrom(const EndpointLoad& other) {
  ewma.CopyFrom(other.ewma);
  picks.store(other.picks.load());
  failures.store(other.failures.load());
  consecutive_failures.store(other.consecutive_failures.load());
  interval_successes.store(other.interval_successes.load());
  interval_failures.store(other.interval_failures.load());
  ejection->Replace(other, *this);
}

void EndpointLoad::SampleRtt(int64_t start_ns, const Clock& clock) {
  if (!tracks_rtt) return;
  const int64_t now_ns = clock.NowNanos();
  ewma.Observe(now_ns - start_ns, now_ns);
}

void EndpointLoad::Settle(CallOutcome outcome, int64_t start_ns,
                          const Clock& clock, bool rtt_sampled) {
  pending.fetch_sub(1, std::memory_order_relaxed);
  if (outcome == CallOutcome::kSuccess) {
    consecutive_failures.store(0, std::memory_order_relaxed);
    if ((!tracks_rtt || rtt_sampled) && !ejection->counts_intervals()) {
      return;  // no clock
    }
  }
  const int64_t now_ns = clock.NowNanos();
  if (tracks_rtt && !rtt_sampled) {
    if (outcome == CallOutcome::kSuccess) {
      ewma.Observe(now_ns - start_ns, now_ns);
    } else {
      ewma.ObservePeak(now_ns - start_ns, now_ns);
    }
  }
  if (ejection->counts_intervals() && outcome != CallOutcome::kCancelled) {
    (outcome == CallOutcome::kSuccess ? interval_successes : interval_failures)
        .fetch_add(1, std::memory_order_relaxed);
    ejection->MaybeSweep(now_ns);
  }
  if (outcome == CallOutcome::kSuccess || outcome == CallOutcome::kCancelled) {
    return;
  }
  failures.fetch_add(1, std::memory_order_relaxed);
  uint32_t n = consecutive_failures.fetch_add(1, std::memory_order_relaxed) + 1;
  uint32_t threshold = ejection->consecutive_failures();
  bool at_threshold = outcome == CallOutcome::kEndpointFailure ||
                      (threshold != 0 && n >= threshold);
  // The calls that were in flight when an endpoint went out fail together;
  // those settling while it is ejected skip the group's mutex.
  if (at_threshold && !Ejected(now_ns)) ejection->TryEject(*this, now_ns);
}

}  // namespace mesh::internal

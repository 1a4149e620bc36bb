#include "src/balance/endpoint_load.h"

#include <algorithm>
#include <utility>

namespace mesh::internal {

EndpointLoad::EndpointLoad(Endpoint e, const BalancerOptions& options,
                           int64_t now_ns)
    : endpoint(std::move(e)),
      ejection_base_ns(absl::ToInt64Nanoseconds(options.ejection_base)),
      ejection_max_ns(absl::ToInt64Nanoseconds(options.ejection_max)),
      ewma(absl::ToInt64Nanoseconds(options.default_rtt),
           absl::ToInt64Nanoseconds(options.decay), now_ns) {}

void EndpointLoad::InheritFrom(const EndpointLoad& other) {
  ewma.CopyFrom(other.ewma);
  picks.store(other.picks.load());
  failures.store(other.failures.load());
  consecutive_failures.store(other.consecutive_failures.load());
  ejected_until_ns.store(other.ejected_until_ns.load());
}

void EndpointLoad::Settle(CallOutcome outcome, int64_t start_ns,
                          int64_t now_ns) {
  pending.fetch_sub(1, std::memory_order_relaxed);
  if (outcome == CallOutcome::kSuccess) {
    ewma.Observe(now_ns - start_ns, now_ns);
  } else {
    ewma.ObservePeak(now_ns - start_ns, now_ns);
  }
  if (outcome == CallOutcome::kSuccess) {
    consecutive_failures.store(0, std::memory_order_relaxed);
  } else if (outcome == CallOutcome::kEndpointFailure) {
    failures.fetch_add(1, std::memory_order_relaxed);
    uint32_t n = consecutive_failures.fetch_add(1, std::memory_order_relaxed);
    // Backoff doubles per consecutive failure: base × 2^n, capped.
    int64_t backoff = ejection_base_ns;
    for (uint32_t i = 0; i < n && backoff < ejection_max_ns; ++i) backoff *= 2;
    backoff = std::min(backoff, ejection_max_ns);
    ejected_until_ns.store(now_ns + backoff, std::memory_order_relaxed);
  }
}

CallHandle CallHandleAccess::Make(std::shared_ptr<EndpointLoad> load,
                                  const Clock* clock, int64_t start_nanos) {
  return CallHandle(std::move(load), clock, start_nanos);
}

}  // namespace mesh::internal

// Load balancing options: how a Channel picks one endpoint of its
// destination for each request, and what it reports of each endpoint.
//
// The default is power-of-two-choices (P2C) over a Peak-EWMA latency estimate,
// as in Linkerd2's proxy: draw two distinct endpoints (with probability
// proportional to their weights), and take the one with the lower
// `rtt_estimate × (pending + 1)`. Round robin is there as a baseline.
//
//   mesh::ChannelOptions options;  // per channel (Mesh::NewChannel)
//   options.balancer.kind = mesh::BalancerKind::kP2cPeakEwma;
//   options.balancer.ejection_consecutive_failures = 3;
//
// Plain values: thread-compatible.
#ifndef MESH_BALANCER_H_
#define MESH_BALANCER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "mesh/export.h"

namespace mesh {

enum class BalancerKind {
  kP2cPeakEwma,  // the default: routes around slow and failing endpoints
  kRoundRobin,   // each endpoint in turn; ignores weights and latency
  // Consistent hashing (xDS RING_HASH, gRFC A42): a call's hash (its
  // route's hash policy, e.g. a header) picks the same endpoint while the
  // set stays, and a change of the set moves mostly the calls of the
  // endpoints that changed. (A42 rescales the ring to the set, which moves
  // some calls between the others too: a fifth equal endpoint takes about
  // 20% of the calls and about 10% more move among the four.) An ejected
  // endpoint's calls go to the next endpoint on the ring. A call without a
  // hash gets a random one.
  kRingHash,
};

// The rules of IntervalEjection (declared outside it, so that they are
// complete where std::optional needs them).
struct MESH_EXPORT SuccessRateEjection {
  uint32_t stdev_factor = 1900;
  uint32_t enforcement_percentage = 100;  // 0..100
  uint32_t minimum_hosts = 5;
  uint32_t request_volume = 100;
};
struct MESH_EXPORT FailurePercentageEjection {
  uint32_t threshold = 85;                // 0..100
  uint32_t enforcement_percentage = 100;  // 0..100
  uint32_t minimum_hosts = 5;
  uint32_t request_volume = 50;
};

// Outlier detection over intervals (Envoy's success-rate and
// failure-percentage ejection, which gRPC's xDS client also has, gRFC A50):
// every `interval` the calls each endpoint answered since the last look are
// counted (a call that ended with a classified failure or an endpoint
// failure counts as a failure, a cancelled one not at all), and endpoints
// whose numbers stand out are ejected, each with the probability its
// enforcement percentage gives. An xDS cluster's outlier_detection sets it
// (BackendPolicy::Ejection); code may set it too. The look is taken by the
// first call to end once an interval has passed: an idle destination costs
// nothing.
struct MESH_EXPORT IntervalEjection {
  // Time between two looks. Must be > 0.
  absl::Duration interval = absl::Seconds(10);
  // Ejects an endpoint whose success rate is below mean − stdev ×
  // stdev_factor / 1000 of the endpoints with at least request_volume calls
  // in the interval, when at least minimum_hosts have that many.
  using SuccessRate = SuccessRateEjection;
  std::optional<SuccessRate> success_rate;
  // Ejects an endpoint whose share of failed calls is at least threshold
  // percent, among the endpoints with at least request_volume calls, when at
  // least minimum_hosts have that many.
  using FailurePercentage = FailurePercentageEjection;
  std::optional<FailurePercentage> failure_percentage;
};

struct MESH_EXPORT BalancerOptions {
  BalancerKind kind = BalancerKind::kP2cPeakEwma;
  // RTT assumed for an endpoint with no samples yet. Must be > 0.
  absl::Duration default_rtt = absl::Milliseconds(30);
  // Time constant of the EWMA: smaller forgets a slow period faster, larger
  // is steadier. Must be > 0.
  absl::Duration decay = absl::Seconds(10);
  // Outlier ejection: a failing endpoint is ejected (P2C and round robin
  // avoid it) for a backoff period, as in Envoy's outlier detection. P2C
  // prefers a non-ejected candidate but never fails a pick because all are
  // ejected.
  //
  // Classified failures (answers that count as failures) in a row that eject
  // the endpoint. A success resets the count, a cancelled call leaves it. An
  // endpoint failure (UNAVAILABLE: refused, reset, unreachable) ejects at
  // once: a connect error is a whole threshold by itself. 0 disables
  // ejection on classified failures only.
  uint32_t ejection_consecutive_failures = 5;
  // The n-th ejection of an endpoint lasts min(ejection_base × n,
  // ejection_max) (Envoy's base_ejection_time × times ejected). n starts over
  // at 1 once the endpoint has stayed un-ejected for ejection_max after its
  // last ejection ended. Larger: a failing endpoint costs fewer failed calls,
  // a healed one waits longer for traffic. Must be > 0 and <= ejection_max.
  absl::Duration ejection_base = absl::Seconds(1);
  absl::Duration ejection_max = absl::Seconds(30);
  // true: the n-th ejection lasts min(ejection_base × 2^(n-1),
  // ejection_max) instead (Linkerd's failure accrual backoff). Either way it
  // is then lengthened by a random share, up to ejection_jitter, of itself
  // (Linkerd's jitter_ratio). ejection_jitter must be in [0, 100].
  bool ejection_exponential = false;
  double ejection_jitter = 0;
  // At most floor(ejection_max_share × n) of the n endpoints are ejected at
  // the same time, but at least 1 when n >= 2, and never all of them: a
  // failure past the limit does not eject (the endpoint keeps its count and
  // its next failure tries again). Lower keeps more capacity in a broad
  // outage, where failures are not the endpoints' fault. Must be in [0, 1].
  double ejection_max_share = 0.5;
  // A floor: an endpoint is ejected only while at least this many others
  // stay un-ejected. 0: none beyond ejection_max_share's.
  uint32_t ejection_min_ready = 0;
  // Also eject by interval statistics (see IntervalEjection). When set, the
  // ejection rules become Envoy's throughout: an endpoint may be ejected
  // while fewer than ejection_max_share × n of the n are (so 0 ejects none,
  // and 1 may eject all: picks still never fail for it), and the backoff's
  // n steps down by one for each interval an endpoint spends un-ejected,
  // instead of starting over after ejection_max.
  std::optional<IntervalEjection> interval_ejection;
  // kRingHash: the ring has between ring_min_size and ring_max_size entries
  // (each endpoint in proportion to its weight); 1 <= min <= max <= 8M.
  // Larger rings spread calls closer to the weights. Equal weights give
  // about ring_min_size entries (ceil(min / n) × n); skewed weights grow the
  // ring up to ring_max_size, at 12 bytes per entry (8M: 96 MiB per
  // balancer, and about 2 s to build). gRPC caps both at 4096 by
  // default.
  uint64_t ring_min_size = 1024;
  uint64_t ring_max_size = 8 * 1024 * 1024;
};

// A point-in-time view of one endpoint's load, for debugging and tests.
struct MESH_EXPORT EndpointStats {
  std::string address;
  uint32_t weight = 1;
  int64_t pending = 0;
  double rtt_estimate_ms = 0;  // decayed to now; kRingHash samples none
  uint64_t picks = 0;
  uint64_t failures = 0;   // classified and endpoint failures seen
  uint64_t ejections = 0;  // times ejected
  bool ejected = false;    // ejected now
  // While ejected: how long the ejection has left, and why it came:
  // "consecutive_failures", "success_rate" or "failure_percentage" (the
  // interval rules). 0 and empty otherwise.
  double ejection_left_ms = 0;
  std::string ejection_reason;
};

}  // namespace mesh

#endif  // MESH_BALANCER_H_

// Load balancers: pick one endpoint of a destination for each request.
//
// The default is power-of-two-choices (P2C) over a Peak-EWMA latency estimate,
// as in Linkerd2's proxy: draw two distinct endpoints (with probability
// proportional to their weights), and take the one with the lower
// `rtt_estimate × (pending + 1)`. Round robin is there as a baseline.
//
//   auto balancer = mesh::Balancer::Create(mesh::BalancerOptions{});
//   (*balancer)->SetEndpoints(endpoints);
//   absl::StatusOr<mesh::CallHandle> h = (*balancer)->Pick();
//   if (h.ok()) { send to h->endpoint().address; h->Complete(outcome); }
//
// Thread-safe: Pick() runs lock-free on any thread against an immutable
// snapshot; SetEndpoints() publishes a new snapshot without waiting for calls.
#ifndef MESH_BALANCER_H_
#define MESH_BALANCER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/clock.h"
#include "mesh/endpoint.h"

namespace mesh {

namespace internal {
struct EndpointLoad;
struct CallHandleAccess;
}  // namespace internal

enum class BalancerKind {
  kP2cPeakEwma,  // the default: routes around slow and failing endpoints
  kRoundRobin,   // each endpoint in turn; ignores weights and latency
};

struct BalancerOptions {
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
  // Classified failures (CallOutcome::kFailure) in a row that eject the
  // endpoint. A success resets the count, a cancelled call leaves it. An
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
  // At most floor(ejection_max_share × n) of the n endpoints are ejected at
  // the same time, but at least 1 when n >= 2, and never all of them: a
  // failure past the limit does not eject (the endpoint keeps its count and
  // its next failure tries again). Lower keeps more capacity in a broad
  // outage, where failures are not the endpoints' fault. Must be in [0, 1].
  double ejection_max_share = 0.5;
};

// How a call ended, for the endpoint's statistics.
enum class CallOutcome {
  kSuccess,          // an answer from the server (resets the failure count)
  kFailure,          // an answer that is a failure (INTERNAL, UNKNOWN, ...):
                     // its RTT may raise the estimate (a new peak) but is
                     // not blended in, so fast failures do not pull it
                     // down; ejection_consecutive_failures in a row eject
  kEndpointFailure,  // UNAVAILABLE: refused, reset, unreachable, or the
                     // server saying it cannot serve (ejects the endpoint
                     // at once; its RTT counts as for kFailure)
  kCancelled,        // the caller gave up (deadline, cancel): no verdict
};

// One picked endpoint, in flight. Move-only. While it lives, the endpoint's
// pending count includes it; Complete() (or destruction) settles the pending
// count and records the round-trip time as an RTT sample, whatever the
// outcome. Thread-compatible.
class CallHandle {
 public:
  CallHandle(CallHandle&& other) noexcept;
  CallHandle& operator=(CallHandle&& other) noexcept;
  CallHandle(const CallHandle&) = delete;
  CallHandle& operator=(const CallHandle&) = delete;
  ~CallHandle();  // Complete(kSuccess) if not yet completed

  const Endpoint& endpoint() const;
  // Settles this call; later calls do nothing.
  void Complete(CallOutcome outcome);

 private:
  friend struct internal::CallHandleAccess;
  CallHandle(std::shared_ptr<internal::EndpointLoad> load, const Clock* clock,
             int64_t start_nanos);

  std::shared_ptr<internal::EndpointLoad> load_;
  const Clock* clock_ = nullptr;
  int64_t start_nanos_ = 0;
};

// A point-in-time view of one endpoint's load, for debugging and tests.
struct EndpointStats {
  std::string address;
  uint32_t weight = 1;
  int64_t pending = 0;
  double rtt_estimate_ms = 0;  // decayed to now
  uint64_t picks = 0;
  uint64_t failures = 0;   // classified and endpoint failures seen
  uint64_t ejections = 0;  // times ejected
  bool ejected = false;    // ejected now
};

class Balancer {
 public:
  virtual ~Balancer() = default;

  // INVALID_ARGUMENT naming the field if options are invalid. `clock` and
  // `rng` may be null (real clock, a per-thread generator); if given, they
  // must outlive the balancer, and an injected `rng` makes Pick()
  // thread-compatible instead of thread-safe (it is meant for tests).
  static absl::StatusOr<std::unique_ptr<Balancer>> Create(
      const BalancerOptions& options, const Clock* clock = nullptr,
      absl::BitGenRef* rng = nullptr);

  // Replaces the endpoint set. Endpoints whose address survives keep their
  // load statistics (pending, EWMA, ejection). Endpoints must be valid
  // (ValidateEndpoint) and distinct; callers validate.
  virtual void SetEndpoints(const std::vector<Endpoint>& endpoints) = 0;

  // One endpoint, or UNAVAILABLE if the set is empty.
  virtual absl::StatusOr<CallHandle> Pick() = 0;

  // Statistics of the current endpoints, sorted by address.
  virtual std::vector<EndpointStats> Stats() const = 0;
};

}  // namespace mesh

#endif  // MESH_BALANCER_H_

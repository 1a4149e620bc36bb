// Endpoint and the discovery update vocabulary.
//
// An Endpoint is one address that serves a destination. Discovery sources
// describe changes to a destination's endpoint set with four updates, the same
// vocabulary Linkerd's Destination API and tower's discovery use:
//
//   Reset{endpoints}      the whole set (xDS, DNS and reconnects deliver this)
//   Add{endpoints}        insert or replace by address
//   Remove{addresses}     evict by address (unknown addresses are ignored)
//   NoEndpoints{exists}   the set is empty; exists=false: no such destination
//
// Example:
//   mesh::Endpoint e;
//   e.address = "127.0.0.1:8080";
//   e.weight = 2;
//   observer->OnEndpointUpdate(mesh::EndpointUpdate::Add({e}));
//
// Plain value types: thread-compatible.
#ifndef MESH_ENDPOINT_H_
#define MESH_ENDPOINT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "mesh/balancer.h"
#include "mesh/export.h"
#include "mesh/tls.h"

namespace mesh {

// What the control plane says the endpoint speaks.
enum class ProtocolHint { kUnknown, kHttp2, kOpaque };

struct MESH_EXPORT Endpoint {
  Endpoint() = default;
  // Implicit, so that `{{"10.0.0.1:80"}, {"10.0.0.2:80", 2}}` is a list of
  // endpoints.
  Endpoint(std::string address, uint32_t weight = 1)  // NOLINT
      : address(std::move(address)), weight(weight) {}

  // "a.b.c.d:port" or "[v6]:port". Host names are not endpoints: resolve them
  // with a discovery source first.
  std::string address;
  // Relative share of picks among endpoints of equal cost; 1 or more.
  uint32_t weight = 1;
  // Metric and tap labels (e.g. pod, zone).
  std::map<std::string, std::string> labels;
  // Expected TLS identity of the server; empty for none. With `tls` set, a
  // label only (metrics' server_id).
  std::string tls_identity;
  // TLS as the control plane describes it (see mesh/tls.h); shared by the
  // endpoints of one cluster. Null: tls_identity and MeshOptions::identity
  // decide.
  std::shared_ptr<const EndpointTls> tls;
  ProtocolHint protocol_hint = ProtocolHint::kUnknown;
  // If set, sent as :authority instead of the channel's target.
  std::string authority_override;

  friend MESH_EXPORT bool operator==(const Endpoint& a, const Endpoint& b);
};

// OK, or INVALID_ARGUMENT naming the bad field (address syntax, port outside
// 1..65535, weight 0).
MESH_EXPORT absl::Status ValidateEndpoint(const Endpoint& endpoint);

struct MESH_EXPORT EndpointUpdate {
  enum class Kind { kReset, kAdd, kRemove, kNoEndpoints };

  static EndpointUpdate Reset(std::vector<Endpoint> endpoints);
  static EndpointUpdate Add(std::vector<Endpoint> endpoints);
  static EndpointUpdate Remove(std::vector<std::string> addresses);
  // `reason`: why there are none, for the calls that find none (e.g. "DNS:
  // no such name 'db.example' (NXDOMAIN)"); empty if the source has none.
  static EndpointUpdate NoEndpoints(bool exists, std::string reason = "");

  Kind kind = Kind::kReset;
  std::vector<Endpoint> endpoints;     // kReset, kAdd
  std::vector<std::string> addresses;  // kRemove
  bool exists = true;                  // kNoEndpoints
  std::string reason;                  // kNoEndpoints
};

// What a discovery source emits into. Calls for one subscription are
// serialized by the source; they may come from any thread.
// What a control plane says about calling one backend's endpoints beyond
// the endpoints themselves (xDS: the Cluster's circuit breaker, the
// ClusterLoadAssignment's drop_overloads).
struct MESH_EXPORT BackendPolicy {
  // How the backend's endpoints are balanced. kChannelDefault: as the
  // channel's BalancerOptions say (P2C Peak-EWMA by default); kRoundRobin:
  // round robin whatever the channel says; kRingHash: consistent hashing by
  // the route's RequestHashPolicy, on a ring of ring_min_size to
  // ring_max_size entries.
  enum class Balancing { kChannelDefault, kRoundRobin, kRingHash };
  Balancing balancing = Balancing::kChannelDefault;
  uint64_t ring_min_size = 1024;
  uint64_t ring_max_size = 8 * 1024 * 1024;
  // Requests in flight to the backend at once, over every channel of the
  // Mesh; one more fails UNAVAILABLE at once, naming the limit. 0: none.
  uint32_t max_requests = 0;
  // Calls dropped on purpose before an endpoint is picked, per category:
  // each in turn drops its share (millionths) of what reaches it; a
  // dropped call fails UNAVAILABLE naming the category.
  struct Drop {
    std::string category;
    uint32_t per_million = 0;
  };
  std::vector<Drop> drops;
  // Outlier ejection for the backend's endpoints (xDS outlier_detection):
  // when set, replaces the channel's ejection_* options and sets
  // interval_ejection (see BalancerOptions).
  struct Ejection {
    uint32_t consecutive_failures = 5;  // 0: not on classified failures
    absl::Duration base = absl::Seconds(30);
    absl::Duration max = absl::Seconds(300);  // >= base
    double max_share = 0.1;                   // 0..1
    IntervalEjection interval;
    // true: Envoy's interval rules (xDS). false: the channel's rules for
    // consecutive failures (BalancerOptions), `interval` unused — Linkerd's
    // failure accrual.
    bool interval_rules = true;
    // An endpoint is ejected only while this many others stay un-ejected
    // (Linkerd's min_ready_endpoints); 0: no floor beyond the rules' own.
    uint32_t min_ready_endpoints = 0;
    // The backoff doubles with each ejection instead of growing by `base`,
    // and each is lengthened by a random share of up to `jitter` of itself
    // (Linkerd's ExponentialBackoff; BalancerOptions::ejection_exponential
    // and ejection_jitter). jitter in [0, 100].
    bool exponential = false;
    double jitter = 0;
  };
  std::optional<Ejection> ejection;
  // The P2C Peak-EWMA tuning of the backend's endpoints (a Linkerd policy
  // backend's peak_ewma): each, when set, replaces the channel's
  // BalancerOptions::default_rtt or decay. Must be > 0.
  std::optional<absl::Duration> default_rtt;
  std::optional<absl::Duration> decay;
  // The queue of calls waiting for the backend's endpoints (a Linkerd
  // policy backend's queue): at most `queue_capacity` wait at once (0: no
  // limit), one more fails UNAVAILABLE at once naming the limit; and a call
  // waits at most `fail_fast_timeout` (when set, > 0) in place of the
  // channel's ChannelOptions::fail_fast_timeout.
  uint32_t queue_capacity = 0;
  std::optional<absl::Duration> fail_fast_timeout;
};

class MESH_EXPORT EndpointObserver {
 public:
  virtual ~EndpointObserver() = default;
  // The backend's policy; replaces the last one. Sources without policies
  // never call it (the default applies: no limit, no drops).
  virtual void OnBackendPolicy(const BackendPolicy& policy) { (void)policy; }
  // A change to the set. The receiver validates it; an invalid update is
  // rejected whole and the last good set keeps serving.
  virtual void OnEndpointUpdate(const EndpointUpdate& update) = 0;
  // The source could not get an answer (stream error, bad message). The
  // receiver keeps its last good set; `status` says what went wrong. The
  // code FAILED_PRECONDITION means final: the source will not answer for
  // this target again (e.g. Linkerd: not a mesh service).
  virtual void OnDiscoveryError(const absl::Status& status) { (void)status; }
};

}  // namespace mesh

#endif  // MESH_ENDPOINT_H_

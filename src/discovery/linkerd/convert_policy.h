// Conversion of Linkerd's outbound policies (OutboundPolicies.Watch, one
// per target: its HTTPRoutes or GRPCRoutes with their backends, timeouts,
// retries and filters) to the mesh model: one ServiceConfig whose routes are
// in the order the proxy ranks them, so that the route table's first match
// is linkerd2-proxy's most specific match.
//
//   absl::StatusOr<PolicyConversion> p = ConvertPolicy(wire, "books:8080");
//   if (!p.ok()) keep the last good config, log p.status();
//   for (const std::string& line : p->dropped) LOG(WARNING) << line;
//   config_observer->OnServiceConfig(p->config);
//
// Pure functions: thread-safe.
#ifndef MESH_SRC_DISCOVERY_LINKERD_CONVERT_POLICY_H_
#define MESH_SRC_DISCOVERY_LINKERD_CONVERT_POLICY_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "linkerd/outbound.pb.h"
#include "mesh/endpoint.h"
#include "mesh/service_config.h"

namespace mesh::internal::linkerd {

struct PolicyConversion {
  ServiceConfig config;
  // The protocol the policy names: "grpc", "http1", "http2", "detect",
  // "opaque" or "tls".
  std::string protocol;
  // The policy's parent: "kind namespace/name" of its resource (a Service,
  // say), or "default <name>".
  std::string parent;
  // The protocol's failure accrual as the ejection of its backends'
  // endpoints; unset: none (or turned off).
  std::optional<BackendPolicy::Ejection> failure_accrual;
  // The policy of each backend the routes name (by DestinationGet path):
  // `failure_accrual` as its ejection, its balancer's Peak-EWMA
  // default_rtt and decay. Only backends with something to set.
  std::map<std::string, BackendPolicy> backend_policies;
  // The endpoint of each `forward` backend the routes name, by the cluster
  // name (ForwardBackendName) its WeightedBackend carries.
  std::map<std::string, Endpoint> forward_backends;
  // One human-readable line per part left out or not applied, naming it
  // (route, rule, match, backend, filter by index and name) and why.
  std::vector<std::string> dropped;
};

// The cluster name a `forward` backend to `address` ("ip:port") has in the
// routes: the Linkerd source serves it that one endpoint (SubscribeCluster).
// Holds a space, so it never names a target.
inline constexpr absl::string_view kForwardBackendPrefix = "linkerd-forward ";
inline std::string ForwardBackendName(absl::string_view address) {
  return absl::StrCat(kForwardBackendPrefix, address);
}

// `authority` is the target the policy was asked for ("name:port"); a
// route's `hosts` are matched against its host.
//
// The whole policy is refused (INVALID_ARGUMENT, naming the field) when it
// has no protocol, or `detect` without its http2 part. Otherwise it is
// converted piecewise, as ConvertProfile does: a bad part is left out with a
// line in `dropped`.
//  - Routes: grpc → its GRPCRoutes; http1, http2 → their HTTPRoutes;
//    detect → the HTTP/2 routes (mesh's calls are HTTP/2); opaque and tls →
//    no routes (calls take the default route to the target).
//  - Ranking: a route applies if one of its hosts matches the authority's
//    host (exact, or a `*.suffix` with at least one more label) or it has
//    none. Each rule's matches (an empty list: one that matches everything)
//    become one model route each, ordered by: the host match (exact, then
//    the longer suffix, then none), then the match — HTTP: a whole path
//    (exact or regex) over a prefix, a longer prefix over a shorter, then
//    more header matches, more query parameter matches, a method over none;
//    gRPC: the longer service name, then the longer method name, then more
//    header matches — and, when equal, the order of the policy.
//  - At most RouteLimits::max_routes (1,000) rules are looked at and as
//    many model routes made, in the policy's order; one line names the
//    limit when more came.
//  - A rule is dropped, with a line, when one of its matches is invalid
//    (a path that does not start with '/', a regex RE2 refuses, a header or
//    query parameter without a name or a value, a bad method, a gRPC
//    service or method holding '/'), or its distribution is missing.
//  - Backends: random_available → a weighted split, first_available →
//    Route::backends_first_available, of the backends' DestinationGet
//    paths, and of `forward` backends' clusters (ForwardBackendName, their
//    endpoints in forward_backends; calls keep the channel's authority);
//    empty, or no backend left → every call of the rule fails UNAVAILABLE
//    naming the route (unless a redirect answers them all). Weight 0, a
//    path that is not "name:port", a forward address that does not convert,
//    or a weight sum past 2^32 - 1 drops the backend (the sum: the rule's
//    distribution).
//  - Timeouts: `timeouts.request` (or the deprecated `requestTimeout`) →
//    Route::timeout, `response` → Route::response_timeout (each attempt,
//    not retried), `idle` → Route::idle_timeout; zero means none.
//  - Retries: max_retries + 1 attempts, the backoff's bounds, the per-try
//    `timeout` (→ RetryPolicy::per_try_timeout; zero: none),
//    max_request_bytes (→ RetryPolicy::max_request_bytes), gRPC
//    conditions → RetryPolicy::retry_on, HTTP status ranges →
//    retry_on_http_status (a range outside 1..599 or reversed drops the
//    retry), under the default retry budget.
//  - Filters: failure_injector → a FaultInjection abort (its ratio; an HTTP
//    status becomes the gRPC code a gRPC client reads for it); a redirect
//    fails a call with UNKNOWN (a gRPC client cannot follow it), naming it;
//    request and response header modifiers → Route::request_headers and
//    response_headers (names lower-cased; a name gRPC reserves or a value
//    that is not printable drops the rule).
//  - A call that matches no route fails with NOT_FOUND, as the proxy
//    answers it, when the protocol has routes.
//  - Route metrics carry the parent's and the route's group, kind,
//    namespace and name, as linkerd2-proxy labels them.
//  - Backends' queues: capacity → BackendPolicy::queue_capacity, a
//    failfast_timeout above zero → fail_fast_timeout.
//  - Backends' balancers: a `peak_ewma` (or `penalty_peak_ewma`)
//    default_rtt and decay above zero → backend_policies; a backend named
//    twice takes its first settings.
//  - Failure accrual (consecutive_failures, or unified's
//    max_consecutive_failures) → `failure_accrual`: an endpoint is ejected
//    after max_failures classified failures in a row, its n-th ejection
//    lasting min(min_backoff × n, max_backoff) (the channel's rules, not
//    Linkerd's jittered doubling), up to every endpoint but one, and never
//    below ejection.min_ready_endpoints left. max_failures 0 turns it off; a
//    backoff that is not 0 < min ≤ max drops it, with a line; unified's
//    success-rate trip is not applied, with a line.
// Not applied yet, each with a line when present: response and idle
// timeouts, backend-level filters and queues.
absl::StatusOr<PolicyConversion> ConvertPolicy(
    const io::linkerd::proxy::outbound::OutboundPolicy& policy,
    absl::string_view authority);

// The host of `authority` ("name:port", "[v6]:port" or a bare name) as
// routes' hosts are compared with it: lower case, without the port and a
// trailing dot.
std::string PolicyHostOf(absl::string_view authority);

}  // namespace mesh::internal::linkerd

#endif  // MESH_SRC_DISCOVERY_LINKERD_CONVERT_POLICY_H_

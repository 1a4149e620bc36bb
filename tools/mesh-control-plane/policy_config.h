// A target's Linkerd OutboundPolicy in the control plane's config file: the
// protocol, the HTTPRoutes or GRPCRoutes with their rules, and failure
// accrual (docs/linkerd.md shows the format). The control plane checks the
// file's shape and leaves regexes and ranges to the clients, which judge
// them (so a test can serve a hostile policy from a file).
//
//   absl::StatusOr<PolicySpec> p = ParsePolicy(value, "targets[...].policy");
//
// Thread-compatible.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_POLICY_CONFIG_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_POLICY_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/mesh-control-plane/json.h"

namespace mesh::controlplane {

// A header or query-parameter condition: the whole value equals `value`, or
// matches it as a regex.
struct PolicyValueMatch {
  std::string name;
  std::string value;
  bool regex = false;
};

// One match of a rule; every part given must hold. HTTP routes use path,
// http_method and query; gRPC routes use service and rpc_method.
struct PolicyMatchSpec {
  enum class PathKind { kAny, kExact, kPrefix, kRegex };
  PathKind path_kind = PathKind::kAny;
  std::string path;
  std::string http_method;  // empty: any
  std::vector<PolicyValueMatch> query;
  std::string service;     // gRPC; empty: any
  std::string rpc_method;  // gRPC; empty: any
  std::vector<PolicyValueMatch> headers;
};

struct PolicyHeaderModifier {
  std::vector<std::pair<std::string, std::string>> add;
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> remove;
};

// Answers a share of the rule's requests without reaching a backend: a gRPC
// code (GRPCRoute) or an HTTP status (HTTPRoute).
struct PolicyFailureSpec {
  uint32_t code = 0;  // gRPC code, or HTTP status
  std::string message;
  double ratio = 1.0;  // 0..1
};

struct PolicyRetrySpec {
  uint32_t max_retries = 2;
  // gRPC routes: Linkerd's retryable codes by name (CANCELLED,
  // DEADLINE_EXCEEDED, INTERNAL, RESOURCE_EXHAUSTED, UNAVAILABLE).
  std::vector<std::string> codes;
  // HTTP routes: status ranges retried, e.g. [[500, 599]].
  std::vector<std::pair<uint32_t, uint32_t>> statuses;
  int64_t min_backoff_ms = 25;
  int64_t max_backoff_ms = 250;
};

struct PolicyRuleSpec {
  std::vector<PolicyMatchSpec> matches;  // empty: every request
  // (authority, weight); unset: the target itself; set and empty: no
  // backend (only a failure injector answers).
  std::optional<std::vector<std::pair<std::string, uint32_t>>> backends;
  bool first_available = false;
  int64_t timeout_ms = 0;           // the whole request; 0: none
  int64_t response_timeout_ms = 0;  // each attempt, not retried; 0: none
  int64_t idle_timeout_ms = 0;      // nothing sent or received; 0: none
  std::optional<PolicyRetrySpec> retry;
  std::optional<PolicyHeaderModifier> request_headers;
  std::optional<PolicyHeaderModifier> response_headers;  // HTTP only
  std::optional<PolicyFailureSpec> failure_injector;
};

struct PolicyRouteSpec {
  std::string name;
  std::vector<std::string> hosts;  // "books.local", "*.local"; empty: any
  std::vector<PolicyRuleSpec> rules;
};

struct PolicyAccrualSpec {
  uint32_t max_failures = 7;
  int64_t min_backoff_ms = 1000;
  int64_t max_backoff_ms = 60000;
  uint32_t min_ready_endpoints = 0;  // 0: no floor
};

struct PolicySpec {
  // "grpc" (GRPCRoutes), "http2", "http1", "detect" (HTTPRoutes), "opaque".
  std::string protocol = "detect";
  std::vector<PolicyRouteSpec> routes;
  std::optional<PolicyAccrualSpec> failure_accrual;
};

// INVALID_ARGUMENT "line N: <path>...: <problem>".
absl::StatusOr<PolicySpec> ParsePolicy(const JsonValue& v,
                                       const std::string& path);

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_POLICY_CONFIG_H_

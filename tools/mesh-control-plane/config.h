// The local control plane's configuration: which endpoints, which service
// profile and which outbound policy each target has, read from a JSON file
// (docs/linkerd.md shows the format). Errors name the line and the field.
//
//   absl::StatusOr<Config> c = ParseConfig(text);
//   // "line 7: targets["books.local:7001"].endpoints[1].address: port ..."
//
// Thread-compatible.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_CONFIG_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/mesh-control-plane/policy_config.h"

namespace mesh::controlplane {

struct EndpointSpec {
  std::string address;  // "a.b.c.d:port" or "[v6]:port"
  uint32_t weight = 1;
  std::map<std::string, std::string> labels;
  std::string tls_identity;
  // xDS: the endpoint's locality (one per zone; "" is a locality too).
  std::string zone;
  // false: sent to xDS clients as UNHEALTHY, left out of Linkerd's Get.
  bool healthy = true;
};

// One request-header condition of a route (xDS only): exactly one of
// exact, prefix, regex (RE2, whole value) or present, optionally inverted.
struct HeaderMatchSpec {
  enum class Kind { kExact, kPrefix, kRegex, kPresent };
  std::string name;  // lower case
  Kind kind = Kind::kPresent;
  std::string value;  // unused for kPresent
  bool invert = false;
};

struct RouteSpec {
  std::string name;        // sent as metrics label route=<name>
  std::string path_regex;  // sent as is: the client judges it
  std::string method;      // empty: any
  int64_t timeout_ms = 0;  // 0: none
  bool retryable = false;
  // HTTP status ranges classified as failures, e.g. [[500, 599]].
  std::vector<std::pair<uint32_t, uint32_t>> failure_statuses;
  // xDS only: every condition must hold too.
  std::vector<HeaderMatchSpec> headers;
  // xDS retry policy of a retryable route: the gRPC codes retried, in
  // xDS's spelling ("unavailable", "deadline-exceeded"; the config names
  // them UNAVAILABLE, DEADLINE_EXCEEDED), and the retries per call.
  std::vector<std::string> retry_on;  // empty: {"unavailable"}
  uint32_t max_retries = 2;
  // xDS only: this route's own backends (authority, weight), in place of
  // the profile's dst_overrides.
  std::vector<std::pair<std::string, uint32_t>> dst_overrides;

  // Linkerd's profiles have no header conditions and no per-route
  // backends: such a route is served to xDS clients only.
  bool xds_only() const { return !headers.empty() || !dst_overrides.empty(); }
};

struct BudgetSpec {
  double retry_ratio = 0.2;
  uint32_t min_retries_per_second = 10;
  int64_t ttl_ms = 10000;
};

struct ProfileSpec {
  std::vector<RouteSpec> routes;
  std::optional<BudgetSpec> retry_budget;
  std::vector<std::pair<std::string, uint32_t>>
      dst_overrides;  // authority, weight
};

struct TargetSpec {
  std::vector<EndpointSpec> endpoints;
  std::optional<ProfileSpec> profile;
  // Linkerd's OutboundPolicies; unset: a default policy (every request to
  // the target itself), as Linkerd serves for a Service without routes.
  std::optional<PolicySpec> policy;
};

struct Config {
  std::map<std::string, TargetSpec> targets;  // "name:port" → spec
  // Answered with InvalidArgument, as Linkerd answers non-mesh hosts.
  std::set<std::string> not_mesh;
  // Streams for these stay open and silent (to test clients that wait).
  std::set<std::string> silent;
  // xDS only: the certificate provider instance (a key of the clients'
  // bootstrap "certificate_providers") that the TLS context of a cluster
  // whose endpoints have identities names for the client's certificate
  // and the roots. Never empty.
  std::string xds_certificate_provider = "default";
};

// INVALID_ARGUMENT "line N: <field path>: <problem>".
absl::StatusOr<Config> ParseConfig(absl::string_view text);

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_CONFIG_H_

// The four xDS resource types as the client keeps them: what a Listener,
// RouteConfiguration, Cluster and ClusterLoadAssignment say, converted from
// the wire (xds_convert.h) into plain values, validated, nothing left that
// mesh would have to look up in a protobuf again.
//
//   absl::StatusOr<ListenerResource> l = ConvertListener(wire_listener);
//
// Plain value types: thread-compatible.
#ifndef MESH_SRC_DISCOVERY_XDS_XDS_RESOURCES_H_
#define MESH_SRC_DISCOVERY_XDS_XDS_RESOURCES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "mesh/endpoint.h"
#include "mesh/service_config.h"
#include "mesh/tls.h"

namespace mesh::internal::xds {

// A fault filter of the listener (envoy.extensions.filters.http.fault.v3.
// HTTPFault), by its filter name; routes, virtual hosts and weighted
// clusters may override its config by that name (typed_per_filter_config).
struct FaultFilter {
  std::string name;
  FaultInjection config;
};

// The route's hash policy for RING_HASH clusters (RouteAction.hash_policy).
struct HashPolicy {
  enum class Kind { kHeader, kChannelId };
  Kind kind = Kind::kHeader;
  std::string header_name;  // kHeader, lower case
  // kHeader: the value is rewritten before it is hashed, every match of
  // `regex` (RE2) replaced by `regex_substitution`; empty: hashed as sent.
  std::string regex;
  std::string regex_substitution;
  bool terminal = false;
};

struct RouteResource {
  // The route's match (path, case_sensitive, headers, runtime_fraction;
  // a match with query_parameters is left out of the config altogether),
  // its retry policy (retry_on codes, num_retries + 1 attempts, backoff;
  // the route's, else the virtual host's), and its name.
  Route route;
  // Where calls go: cluster names with weights (`cluster` is weight 1).
  // Empty when the action is one mesh cannot carry out; then
  // `unsupported_action` says which (calls fail UNAVAILABLE with it).
  std::vector<WeightedBackend> clusters;
  std::string unsupported_action;
  // RouteAction.max_stream_duration: grpc_timeout_header_max if set, else
  // max_stream_duration; unset: the listener's. Zero means none (infinite).
  std::optional<absl::Duration> max_stream_duration;
  // Fault filter configs by filter name (typed_per_filter_config).
  std::map<std::string, FaultInjection> fault_overrides;
  std::vector<HashPolicy> hash_policies;
};

struct VirtualHostResource {
  std::string name;
  std::vector<std::string> domains;
  std::vector<RouteResource> routes;
  std::map<std::string, FaultInjection> fault_overrides;
  // Not empty while the virtual host is not converted yet (RDS converts
  // only those a target reaches; xds_convert.h): the VirtualHost as it
  // came, which ConvertLazyVirtualHost converts; `routes` and
  // `fault_overrides` are empty until then.
  std::string wire;
};

struct RouteConfigResource {
  std::string name;
  std::vector<VirtualHostResource> virtual_hosts;
};

struct ListenerResource {
  std::string name;
  // RDS over ADS: the RouteConfiguration's name. Empty with an inline one.
  std::string route_config_name;
  std::optional<RouteConfigResource> inline_route_config;
  // The fault filters, in order (the router is last and not listed; other
  // filters are optional ones mesh ignores).
  std::vector<FaultFilter> fault_filters;
  // HttpConnectionManager common_http_protocol_options.max_stream_duration;
  // infinite when unset or zero.
  absl::Duration max_stream_duration = absl::InfiniteDuration();
};

// Cluster.outlier_detection (gRFC A50). Unset fields hold Envoy's defaults.
struct OutlierDetection {
  absl::Duration interval = absl::Seconds(10);
  absl::Duration base_ejection_time = absl::Seconds(30);
  absl::Duration max_ejection_time = absl::Seconds(300);
  uint32_t max_ejection_percent = 10;
  // Consecutive-failure ejection: consecutive_5xx failures in a row, unless
  // enforcing_consecutive_5xx is 0 (any other percentage applies as 100).
  uint32_t consecutive_5xx = 5;
  uint32_t enforcing_consecutive_5xx = 100;
  // Success-rate ejection; unset (no enforcing_success_rate ... ) when
  // absent from the resource.
  struct SuccessRate {
    uint32_t stdev_factor = 1900;  // thousandths
    uint32_t enforcement_percentage = 100;
    uint32_t minimum_hosts = 5;
    uint32_t request_volume = 100;
  };
  std::optional<SuccessRate> success_rate;
  struct FailurePercentage {
    uint32_t threshold = 85;
    uint32_t enforcement_percentage = 0;
    uint32_t minimum_hosts = 5;
    uint32_t request_volume = 50;
  };
  std::optional<FailurePercentage> failure_percentage;
};

// A name a DNS cluster resolves: one lb_endpoint of its load_assignment.
struct DnsHost {
  std::string host;  // a DNS name or an IP literal, as written
  uint16_t port = 0;
  // The lb_endpoint's load_balancing_weight: each address the name
  // resolves to gets it.
  uint32_t weight = 1;

  // "host:port" ("[v6]:port" for an IPv6 literal), as DNS discovery takes
  // it.
  std::string Target() const;
  friend bool operator==(const DnsHost& a, const DnsHost& b) {
    return a.host == b.host && a.port == b.port && a.weight == b.weight;
  }
};

struct ClusterResource {
  std::string name;
  // Where the endpoints come from (Cluster.type). EDS: the
  // ClusterLoadAssignment named below. LOGICAL_DNS (gRFC A37, as gRPC):
  // every address of its one host. STRICT_DNS (as Envoy): every address of
  // each of its hosts.
  enum class Discovery { kEds, kLogicalDns, kStrictDns };
  Discovery discovery = Discovery::kEds;
  // EDS: the ClusterLoadAssignment to ask for: eds_cluster_config.
  // service_name, else the cluster's name. Empty for DNS clusters.
  std::string eds_service_name;
  // LOGICAL_DNS (exactly one) and STRICT_DNS (1 to 100): the hosts of
  // load_assignment, in order, distinct. Empty for EDS.
  std::vector<DnsHost> dns_hosts;
  // DNS clusters: which of a name's addresses serve (dns_lookup_family,
  // as Envoy reads it). kAuto: the IPv6 ones if the name has any, else the
  // IPv4 ones; kV4Preferred the other way round.
  enum class DnsFamily { kAuto, kV4Only, kV6Only, kV4Preferred, kAll };
  DnsFamily dns_family = DnsFamily::kAuto;
  enum class LbPolicy { kRoundRobin, kLeastRequest, kRingHash };
  LbPolicy lb_policy = LbPolicy::kRoundRobin;
  // RING_HASH: ring_hash_lb_config min/max ring size (defaults 1024 and
  // 8M, each at most 8M).
  uint64_t min_ring_size = 1024;
  uint64_t max_ring_size = 8 * 1024 * 1024;
  // circuit_breakers thresholds[DEFAULT].max_requests; unset: 1024 (gRPC's
  // default, gRFC A32).
  uint32_t max_requests = 1024;
  std::optional<OutlierDetection> outlier_detection;
  // transport_socket's UpstreamTlsContext; null: plaintext. Given to every
  // endpoint of the cluster (Endpoint::tls), with tls_identity as its
  // server_id label.
  std::shared_ptr<const EndpointTls> tls;
  std::string tls_identity;
};

// One locality of a ClusterLoadAssignment.
struct LocalityEndpoints {
  // region/zone/sub_zone: the labels "region", "zone", "sub_zone" (where
  // set) of the endpoints served (EndpointsToServe adds them).
  std::string region;
  std::string zone;
  std::string sub_zone;
  // load_balancing_weight; a locality without one is dropped.
  uint32_t weight = 1;
  uint32_t priority = 0;
  // The endpoints that may serve (health UNKNOWN or HEALTHY), with their
  // weights (load_balancing_weight, default 1); no labels.
  std::vector<Endpoint> endpoints;
  // How many were left out for their health status.
  uint32_t unhealthy = 0;
};

struct EndpointsResource {
  std::string cluster_name;
  // Sorted by priority (0 first), priorities dense from 0.
  std::vector<LocalityEndpoints> localities;
  // policy.drop_overloads: a category and its share, in millionths.
  struct Drop {
    std::string category;
    uint32_t per_million = 0;
  };
  std::vector<Drop> drop_overloads;
};

// The four types, as the client asks for them.
enum class ResourceType { kListener, kRouteConfig, kCluster, kEndpoints };
constexpr int kResourceTypes = 4;
constexpr ResourceType kAllResourceTypes[kResourceTypes] = {
    ResourceType::kListener, ResourceType::kRouteConfig, ResourceType::kCluster,
    ResourceType::kEndpoints};
// "type.googleapis.com/envoy.config.listener.v3.Listener", …
const char* TypeUrl(ResourceType type);
// "Listener", "RouteConfiguration", "Cluster", "ClusterLoadAssignment".
const char* TypeName(ResourceType type);

// One resource of any of the four types.
using AnyResource = std::variant<ListenerResource, RouteConfigResource,
                                 ClusterResource, EndpointsResource>;

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_XDS_RESOURCES_H_

// Cluster and ClusterLoadAssignment conversion (gRFCs A27, A32, A42, A50),
// as gRPC C++ 1.51's xDS client validates them.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "src/base/utf8.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/model/address.h"

namespace mesh::internal::xds {
namespace {

using envoy::config::cluster::v3::Cluster;
namespace endpoint_v3 = envoy::config::endpoint::v3;

constexpr uint64_t kMaxRingSize = 8 * 1024 * 1024;  // Envoy's and gRPC's cap
constexpr int kMaxEndpoints = 100'000;
// The most hosts a STRICT_DNS cluster resolves: each is a DNS watch of
// its own.
constexpr int kMaxDnsHosts = 100;
constexpr uint64_t kMaxWeightSum = std::numeric_limits<uint32_t>::max();

// An enum value's name, or its number when mesh's protos do not know it.
template <typename Enum>
std::string EnumName(const std::string& name, Enum value) {
  return name.empty() ? absl::StrCat(static_cast<int>(value)) : name;
}

absl::StatusOr<ClusterResource::Discovery> DiscoveryOf(const Cluster& cluster) {
  switch (cluster.cluster_discovery_type_case()) {
    case Cluster::kClusterType:
      return FieldError(
          "cluster_type",
          absl::StrCat("custom cluster type '", cluster.cluster_type().name(),
                       "' (", TypeNameOf(cluster.cluster_type().typed_config()),
                       ") is not supported"));
    case Cluster::CLUSTER_DISCOVERY_TYPE_NOT_SET:
      return FieldError("type",
                        "unset (STATIC) clusters are not supported: "
                        "mesh takes endpoints from EDS or DNS");
    case Cluster::kType:
      break;
  }
  switch (cluster.type()) {
    case Cluster::EDS:
      return ClusterResource::Discovery::kEds;
    case Cluster::LOGICAL_DNS:
      return ClusterResource::Discovery::kLogicalDns;
    case Cluster::STRICT_DNS:
      return ClusterResource::Discovery::kStrictDns;
    default:
      return FieldError(
          "type",
          absl::StrCat(EnumName(Cluster::DiscoveryType_Name(cluster.type()),
                                cluster.type()),
                       " clusters are not supported: mesh takes endpoints "
                       "from EDS or DNS"));
  }
}

absl::Status ConvertEdsConfig(const Cluster& cluster, ClusterResource* out) {
  if (!cluster.has_eds_cluster_config()) {
    return FieldError("eds_cluster_config", "missing for an EDS cluster");
  }
  const Cluster::EdsClusterConfig& eds = cluster.eds_cluster_config();
  if (!eds.has_eds_config()) {
    return FieldError("eds_cluster_config.eds_config", "missing");
  }
  if (!eds.eds_config().has_ads() && !eds.eds_config().has_self()) {
    return FieldError("eds_cluster_config.eds_config",
                      "must be ads or self: mesh asks for endpoints on its "
                      "ADS stream only");
  }
  out->eds_service_name =
      eds.service_name().empty() ? cluster.name() : eds.service_name();
  return absl::OkStatus();
}

// One lb_endpoint of a DNS cluster's load_assignment: a socket_address
// with a name (or an IP literal) and a port_value, resolved through DNS.
absl::StatusOr<DnsHost> ConvertDnsHost(
    const endpoint_v3::LbEndpoint& lb_endpoint) {
  if (!lb_endpoint.has_endpoint()) return FieldError("endpoint", "missing");
  const auto& address = lb_endpoint.endpoint().address();
  if (!address.has_socket_address()) {
    return FieldError("endpoint.address.socket_address",
                      "missing: a DNS cluster resolves a name and a port");
  }
  const auto& socket = address.socket_address();
  constexpr absl::string_view kSocket = "endpoint.address.socket_address";
  if (!socket.resolver_name().empty()) {
    return FieldError(absl::StrCat(kSocket, ".resolver_name"),
                      absl::StrCat("'", QuotedText(socket.resolver_name()),
                                   "': a DNS cluster resolves through DNS "
                                   "only"));
  }
  if (socket.has_named_port()) {
    return FieldError(absl::StrCat(kSocket, ".named_port"),
                      "not supported: give a port_value");
  }
  if (socket.address().empty()) {
    return FieldError(absl::StrCat(kSocket, ".address"), "empty");
  }
  DnsHost out;
  out.host = socket.address();
  if (!IpAddress::Parse(out.host).ok() && !IsDnsName(out.host)) {
    return FieldError(absl::StrCat(kSocket, ".address"),
                      absl::StrCat("'", QuotedText(out.host),
                                   "' is neither a DNS name nor an IP "
                                   "address"));
  }
  const uint32_t port = socket.port_value();
  if (port == 0 || port > 65535) {
    return FieldError(absl::StrCat(kSocket, ".port_value"),
                      absl::StrCat(port, " is outside 1..65535"));
  }
  out.port = static_cast<uint16_t>(port);
  if (lb_endpoint.has_load_balancing_weight()) {
    out.weight = lb_endpoint.load_balancing_weight().value();
    if (out.weight == 0) {
      return FieldError("load_balancing_weight", "must be at least 1");
    }
  }
  return out;
}

// A DNS cluster's dns_lookup_family.
absl::StatusOr<ClusterResource::DnsFamily> ConvertDnsFamily(
    const Cluster& cluster) {
  using Family = ClusterResource::DnsFamily;
  switch (cluster.dns_lookup_family()) {
    case Cluster::AUTO:
      return Family::kAuto;
    case Cluster::V4_ONLY:
      return Family::kV4Only;
    case Cluster::V6_ONLY:
      return Family::kV6Only;
    case Cluster::V4_PREFERRED:
      return Family::kV4Preferred;
    case Cluster::ALL:
      return Family::kAll;
    default:
      return FieldError(
          "dns_lookup_family",
          absl::StrCat(static_cast<int>(cluster.dns_lookup_family()),
                       " is not a known DnsLookupFamily"));
  }
}

// A DNS cluster's hosts from its load_assignment. LOGICAL_DNS (gRFC A37):
// exactly one locality with exactly one lb_endpoint. STRICT_DNS: every
// lb_endpoint that may serve (health UNKNOWN or HEALTHY, as for EDS), at
// most kMaxDnsHosts, each once. Priorities other than 0 are refused:
// failing over between DNS names is not carried out.
absl::Status ConvertDnsHosts(const Cluster& cluster, ClusterResource* out) {
  const auto& assignment = cluster.load_assignment();
  const bool logical =
      out->discovery == ClusterResource::Discovery::kLogicalDns;
  const char* type = logical ? "LOGICAL_DNS" : "STRICT_DNS";
  absl::StatusOr<ClusterResource::DnsFamily> family = ConvertDnsFamily(cluster);
  if (!family.ok()) return family.status();
  out->dns_family = *family;
  if (!cluster.has_load_assignment()) {
    return FieldError("load_assignment",
                      absl::StrCat("missing: a ", type,
                                   " cluster resolves the hosts it names"));
  }
  if (logical && assignment.endpoints_size() != 1) {
    return FieldError(
        "load_assignment.endpoints",
        absl::StrCat(assignment.endpoints_size(),
                     " localities: a LOGICAL_DNS cluster has exactly one"));
  }
  int64_t count = 0;
  for (const auto& locality : assignment.endpoints()) {
    count += locality.lb_endpoints_size();
  }
  if (count == 0) {
    return FieldError("load_assignment.endpoints",
                      absl::StrCat("no lb_endpoints: a ", type,
                                   " cluster needs a host to resolve"));
  }
  if (count > kMaxDnsHosts) {
    return FieldError("load_assignment.endpoints",
                      absl::StrCat(count, " hosts, more than ", kMaxDnsHosts,
                                   " (the most a DNS cluster resolves)"));
  }
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < assignment.endpoints_size(); ++i) {
    const endpoint_v3::LocalityLbEndpoints& locality = assignment.endpoints(i);
    const std::string path = absl::StrCat("load_assignment.endpoints[", i, "]");
    if (locality.priority() != 0) {
      return FieldError(path + ".priority",
                        absl::StrCat(locality.priority(),
                                     ": priorities are not supported for DNS "
                                     "clusters"));
    }
    if (logical && locality.lb_endpoints_size() != 1) {
      return FieldError(
          path + ".lb_endpoints",
          absl::StrCat(locality.lb_endpoints_size(),
                       " lb_endpoints: a LOGICAL_DNS cluster has exactly "
                       "one"));
    }
    for (int j = 0; j < locality.lb_endpoints_size(); ++j) {
      const endpoint_v3::LbEndpoint& lb_endpoint = locality.lb_endpoints(j);
      const std::string at = absl::StrCat(path, ".lb_endpoints[", j, "]");
      absl::StatusOr<DnsHost> host = ConvertDnsHost(lb_endpoint);
      if (!host.ok()) return Within(at, host.status());
      const auto health = lb_endpoint.health_status();
      // gRPC reads no health for its one LOGICAL_DNS host.
      if (!logical && health != envoy::config::core::v3::UNKNOWN &&
          health != envoy::config::core::v3::HEALTHY) {
        continue;
      }
      if (!seen.insert(host->Target()).second) {
        return FieldError(at + ".endpoint.address",
                          absl::StrCat("duplicate host ", host->Target()));
      }
      out->dns_hosts.push_back(*std::move(host));
    }
  }
  return absl::OkStatus();
}

absl::Status ConvertRingHash(const Cluster& cluster, ClusterResource* out) {
  if (!cluster.has_ring_hash_lb_config()) return absl::OkStatus();
  const Cluster::RingHashLbConfig& config = cluster.ring_hash_lb_config();
  if (config.hash_function() != Cluster::RingHashLbConfig::XX_HASH) {
    return FieldError(
        "ring_hash_lb_config.hash_function",
        absl::StrCat(EnumName(Cluster::RingHashLbConfig::HashFunction_Name(
                                  config.hash_function()),
                              config.hash_function()),
                     " is not supported: gRPC hashes with XX_HASH"));
  }
  if (config.has_minimum_ring_size()) {
    out->min_ring_size = config.minimum_ring_size().value();
    if (out->min_ring_size == 0 || out->min_ring_size > kMaxRingSize) {
      return FieldError("ring_hash_lb_config.minimum_ring_size",
                        absl::StrCat(out->min_ring_size, " is outside [1, ",
                                     kMaxRingSize, "]"));
    }
  }
  if (config.has_maximum_ring_size()) {
    out->max_ring_size = config.maximum_ring_size().value();
    if (out->max_ring_size == 0 || out->max_ring_size > kMaxRingSize) {
      return FieldError("ring_hash_lb_config.maximum_ring_size",
                        absl::StrCat(out->max_ring_size, " is outside [1, ",
                                     kMaxRingSize, "]"));
    }
  }
  if (out->min_ring_size > out->max_ring_size) {
    return FieldError(
        "ring_hash_lb_config.minimum_ring_size",
        absl::StrCat(out->min_ring_size, " is above the maximum ring size ",
                     out->max_ring_size));
  }
  return absl::OkStatus();
}

absl::Status ConvertLbPolicy(const Cluster& cluster, ClusterResource* out) {
  // load_balancing_policy supersedes lb_policy only for a client that
  // supports it (Envoy's API); mesh does not, so it reads lb_policy.
  switch (cluster.lb_policy()) {
    case Cluster::ROUND_ROBIN:
      out->lb_policy = ClusterResource::LbPolicy::kRoundRobin;
      return absl::OkStatus();
    case Cluster::LEAST_REQUEST:
      out->lb_policy = ClusterResource::LbPolicy::kLeastRequest;
      if (cluster.least_request_lb_config().has_choice_count() &&
          cluster.least_request_lb_config().choice_count().value() < 2) {
        return FieldError("least_request_lb_config.choice_count",
                          "must be at least 2");
      }
      return absl::OkStatus();
    case Cluster::RING_HASH:
      out->lb_policy = ClusterResource::LbPolicy::kRingHash;
      return ConvertRingHash(cluster, out);
    default:
      return FieldError(
          "lb_policy",
          absl::StrCat(EnumName(Cluster::LbPolicy_Name(cluster.lb_policy()),
                                cluster.lb_policy()),
                       " is not supported (ROUND_ROBIN, LEAST_REQUEST and "
                       "RING_HASH are)"));
  }
}

// A UInt32Value percentage, at most 100.
absl::Status Percent(const google::protobuf::UInt32Value& value,
                     absl::string_view field, uint32_t* out) {
  if (value.value() > 100) {
    return FieldError(field, absl::StrCat(value.value(), " is above 100"));
  }
  *out = value.value();
  return absl::OkStatus();
}

// Envoy requires each of outlier_detection's durations to be > 0.
absl::Status SetDuration(const google::protobuf::Duration& value,
                         absl::string_view field, absl::Duration* out) {
  absl::StatusOr<absl::Duration> d = ConvertDuration(value);
  if (!d.ok()) return Within(field, d.status());
  if (*d <= absl::ZeroDuration()) return FieldError(field, "must be > 0");
  *out = *d;
  return absl::OkStatus();
}

// gRFC A50: success-rate ejection unless enforcing_success_rate is 0 (its
// default is 100), failure-percentage ejection if
// enforcing_failure_percentage is above 0 (its default is 0).
absl::StatusOr<OutlierDetection> ConvertOutlierDetection(
    const envoy::config::cluster::v3::OutlierDetection& od) {
  OutlierDetection out;
  if (od.has_interval()) {
    absl::Status s = SetDuration(od.interval(), "interval", &out.interval);
    if (!s.ok()) return s;
  }
  if (od.has_base_ejection_time()) {
    absl::Status s = SetDuration(od.base_ejection_time(), "base_ejection_time",
                                 &out.base_ejection_time);
    if (!s.ok()) return s;
  }
  if (od.has_max_ejection_time()) {
    absl::Status s = SetDuration(od.max_ejection_time(), "max_ejection_time",
                                 &out.max_ejection_time);
    if (!s.ok()) return s;
  }
  if (od.has_max_ejection_percent()) {
    absl::Status s = Percent(od.max_ejection_percent(), "max_ejection_percent",
                             &out.max_ejection_percent);
    if (!s.ok()) return s;
  }
  if (od.has_consecutive_5xx()) {
    out.consecutive_5xx = od.consecutive_5xx().value();
  }
  if (od.has_enforcing_consecutive_5xx()) {
    absl::Status s =
        Percent(od.enforcing_consecutive_5xx(), "enforcing_consecutive_5xx",
                &out.enforcing_consecutive_5xx);
    if (!s.ok()) return s;
  }
  OutlierDetection::SuccessRate success;
  if (od.has_enforcing_success_rate()) {
    absl::Status s =
        Percent(od.enforcing_success_rate(), "enforcing_success_rate",
                &success.enforcement_percentage);
    if (!s.ok()) return s;
  }
  if (success.enforcement_percentage > 0) {
    if (od.has_success_rate_stdev_factor()) {
      success.stdev_factor = od.success_rate_stdev_factor().value();
    }
    if (od.has_success_rate_minimum_hosts()) {
      success.minimum_hosts = od.success_rate_minimum_hosts().value();
    }
    if (od.has_success_rate_request_volume()) {
      success.request_volume = od.success_rate_request_volume().value();
    }
    out.success_rate = success;
  }
  OutlierDetection::FailurePercentage failure;
  if (od.has_enforcing_failure_percentage()) {
    absl::Status s = Percent(od.enforcing_failure_percentage(),
                             "enforcing_failure_percentage",
                             &failure.enforcement_percentage);
    if (!s.ok()) return s;
  }
  if (failure.enforcement_percentage > 0) {
    if (od.has_failure_percentage_threshold()) {
      absl::Status s =
          Percent(od.failure_percentage_threshold(),
                  "failure_percentage_threshold", &failure.threshold);
      if (!s.ok()) return s;
    }
    if (od.has_failure_percentage_minimum_hosts()) {
      failure.minimum_hosts = od.failure_percentage_minimum_hosts().value();
    }
    if (od.has_failure_percentage_request_volume()) {
      failure.request_volume = od.failure_percentage_request_volume().value();
    }
    out.failure_percentage = failure;
  }
  return out;
}

absl::StatusOr<Endpoint> ConvertLbEndpoint(
    const endpoint_v3::LbEndpoint& lb_endpoint) {
  if (!lb_endpoint.has_endpoint()) return FieldError("endpoint", "missing");
  const auto& address = lb_endpoint.endpoint().address();
  if (!address.has_socket_address()) {
    return FieldError("endpoint.address.socket_address",
                      "missing: mesh reaches endpoints by IP address and port");
  }
  const auto& socket = address.socket_address();
  const uint32_t port = socket.port_value();
  if (port == 0 || port > 65535) {
    return FieldError("endpoint.address.socket_address.port_value",
                      absl::StrCat(port, " is outside 1..65535"));
  }
  absl::StatusOr<IpAddress> ip = IpAddress::Parse(socket.address());
  if (!ip.ok()) {
    return FieldError("endpoint.address.socket_address.address",
                      absl::StrCat("'", socket.address(),
                                   "' is not an IP address (host names come "
                                   "with DNS discovery)"));
  }
  Endpoint out;
  out.address = SocketAddress(*ip, static_cast<uint16_t>(port)).ToString();
  if (lb_endpoint.has_load_balancing_weight()) {
    out.weight = lb_endpoint.load_balancing_weight().value();
    if (out.weight == 0) {
      return FieldError("load_balancing_weight", "must be at least 1");
    }
  }
  return out;
}

// One locality with a weight; its serving endpoints' addresses go into
// `seen`, which refuses one twice in the assignment (gRPC).
absl::StatusOr<LocalityEndpoints> ConvertLocality(
    const endpoint_v3::LocalityLbEndpoints& locality,
    absl::flat_hash_set<std::string>* seen) {
  LocalityEndpoints out;
  out.region = locality.locality().region();
  out.zone = locality.locality().zone();
  out.sub_zone = locality.locality().sub_zone();
  out.weight = locality.load_balancing_weight().value();
  out.priority = locality.priority();
  uint64_t weights = 0;
  out.endpoints.reserve(static_cast<size_t>(locality.lb_endpoints_size()));
  for (int i = 0; i < locality.lb_endpoints_size(); ++i) {
    const endpoint_v3::LbEndpoint& lb_endpoint = locality.lb_endpoints(i);
    const std::string path = absl::StrCat("lb_endpoints[", i, "]");
    const auto health = lb_endpoint.health_status();
    if (health != envoy::config::core::v3::UNKNOWN &&
        health != envoy::config::core::v3::HEALTHY) {
      ++out.unhealthy;
      continue;
    }
    absl::StatusOr<Endpoint> endpoint = ConvertLbEndpoint(lb_endpoint);
    if (!endpoint.ok()) return Within(path, endpoint.status());
    if (!seen->insert(endpoint->address).second) {
      return FieldError(
          path + ".endpoint.address",
          absl::StrCat("duplicate endpoint address ", endpoint->address));
    }
    weights += endpoint->weight;
    if (weights > kMaxWeightSum) {
      return FieldError("lb_endpoints",
                        "the endpoint weights add up to more than 2^32 - 1");
    }
    out.endpoints.push_back(*std::move(endpoint));
  }
  return out;
}

// Priorities dense from 0, each with distinct localities whose weights add
// up within uint32 (gRPC). `localities` (each with its index in the
// resource) is sorted by priority.
absl::Status CheckPriorities(
    const std::vector<std::pair<int, LocalityEndpoints>>& localities) {
  uint32_t next = 0;  // the priority after the last one seen
  uint64_t weights = 0;
  std::set<std::tuple<std::string, std::string, std::string>> names;
  for (const auto& [index, l] : localities) {
    const std::string path = absl::StrCat("endpoints[", index, "]");
    if (l.priority == next) {
      ++next;
      weights = 0;
      names.clear();
    } else if (next == 0 || l.priority != next - 1) {
      return FieldError(
          path + ".priority",
          absl::StrCat(l.priority, " leaves a gap: priority ", next,
                       " has no locality with a weight, and "
                       "priorities must run from 0 without one"));
    }
    if (!names.emplace(l.region, l.zone, l.sub_zone).second) {
      return FieldError(
          path + ".locality",
          absl::StrCat("duplicate locality {region '", l.region, "', zone '",
                       l.zone, "', sub_zone '", l.sub_zone, "'} in priority ",
                       l.priority));
    }
    weights += l.weight;
    if (weights > kMaxWeightSum) {
      return FieldError(
          path + ".load_balancing_weight",
          absl::StrCat("the locality weights of priority ", l.priority,
                       " add up to more than 2^32 - 1"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string DnsHost::Target() const { return JoinHostPort(host, port); }

absl::StatusOr<ClusterResource> ConvertCluster(
    const Cluster& cluster, const CertificateProviders& providers) {
  ClusterResource out;
  out.name = cluster.name();
  absl::StatusOr<ClusterResource::Discovery> discovery = DiscoveryOf(cluster);
  if (!discovery.ok()) return discovery.status();
  out.discovery = *discovery;
  // A DNS cluster needs no eds_cluster_config; one it has is not read.
  absl::Status s = out.discovery == ClusterResource::Discovery::kEds
                       ? ConvertEdsConfig(cluster, &out)
                       : ConvertDnsHosts(cluster, &out);
  if (!s.ok()) return s;
  s = ConvertLbPolicy(cluster, &out);
  if (!s.ok()) return s;
  if (cluster.has_transport_socket()) {
    const auto& socket = cluster.transport_socket();
    if (!socket.name().empty() || socket.has_typed_config()) {
      absl::StatusOr<std::shared_ptr<const EndpointTls>> tls =
          ConvertTransportSocket(socket, providers);
      if (!tls.ok()) return Within("transport_socket", tls.status());
      out.tls = *std::move(tls);
      out.tls_identity = TlsIdentityLabel(*out.tls);
    }
  }
  // gRFC A32: the first threshold of priority DEFAULT.
  for (const auto& threshold : cluster.circuit_breakers().thresholds()) {
    if (threshold.priority() != envoy::config::core::v3::DEFAULT) continue;
    if (threshold.has_max_requests()) {
      out.max_requests = threshold.max_requests().value();
    }
    break;
  }
  if (cluster.has_outlier_detection()) {
    absl::StatusOr<OutlierDetection> od =
        ConvertOutlierDetection(cluster.outlier_detection());
    if (!od.ok()) return Within("outlier_detection", od.status());
    out.outlier_detection = *std::move(od);
  }
  return out;
}

absl::StatusOr<EndpointsResource> ConvertClusterLoadAssignment(
    const endpoint_v3::ClusterLoadAssignment& assignment) {
  EndpointsResource out;
  out.cluster_name = assignment.cluster_name();
  int64_t count = 0;
  for (const auto& locality : assignment.endpoints()) {
    count += locality.lb_endpoints_size();
  }
  if (count > kMaxEndpoints) {
    return FieldError("endpoints", absl::StrCat(count, " endpoints, more than ",
                                                kMaxEndpoints));
  }
  std::vector<std::pair<int, LocalityEndpoints>> kept;  // index, locality
  absl::flat_hash_set<std::string> seen;
  seen.reserve(static_cast<size_t>(count));
  for (int i = 0; i < assignment.endpoints_size(); ++i) {
    const endpoint_v3::LocalityLbEndpoints& locality = assignment.endpoints(i);
    // gRPC: a locality without weight gets no traffic; left out unread.
    if (locality.load_balancing_weight().value() == 0) continue;
    absl::StatusOr<LocalityEndpoints> l = ConvertLocality(locality, &seen);
    if (!l.ok()) return Within(absl::StrCat("endpoints[", i, "]"), l.status());
    kept.emplace_back(i, *std::move(l));
  }
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second.priority < b.second.priority;
  });
  absl::Status s = CheckPriorities(kept);
  if (!s.ok()) return s;
  for (auto& entry : kept) out.localities.push_back(std::move(entry.second));
  const auto& drops = assignment.policy().drop_overloads();
  for (int i = 0; i < drops.size(); ++i) {
    const std::string path = absl::StrCat("policy.drop_overloads[", i, "]");
    if (drops[i].category().empty()) {
      return FieldError(path + ".category", "empty");
    }
    if (!drops[i].has_drop_percentage()) {
      return FieldError(path + ".drop_percentage", "missing");
    }
    absl::StatusOr<uint32_t> share =
        ConvertFraction(drops[i].drop_percentage());
    if (!share.ok()) return Within(path + ".drop_percentage", share.status());
    out.drop_overloads.push_back({drops[i].category(), *share});
  }
  return out;
}

}  // namespace mesh::internal::xds

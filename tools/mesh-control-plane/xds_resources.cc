#include "tools/mesh-control-plane/xds_resources.h"

#include <google/protobuf/util/time_util.h>

#include <cstdint>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/extensions/filters/http/router/v3/router.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "envoy/extensions/transport_sockets/tls/v3/tls.pb.h"
#include "src/model/address.h"

namespace mesh::controlplane {
namespace {

namespace core = ::envoy::config::core::v3;
namespace route = ::envoy::config::route::v3;
namespace hcm =
    ::envoy::extensions::filters::network::http_connection_manager::v3;
namespace tls = ::envoy::extensions::transport_sockets::tls::v3;
using ::envoy::config::cluster::v3::Cluster;
using ::envoy::config::endpoint::v3::ClusterLoadAssignment;
using ::envoy::config::listener::v3::Listener;
using ::google::protobuf::util::TimeUtil;

constexpr char kRouterFilterName[] = "envoy.filters.http.router";
constexpr char kTlsTransportSocketName[] = "envoy.transport_sockets.tls";
// The certificate names istiod sends its proxyless clients: the
// workload's own certificate and key, and the roots.
constexpr char kIdentityCertificateName[] = "default";
constexpr char kRootCertificateName[] = "ROOTCA";
constexpr uint64_t kMaxWeight = std::numeric_limits<uint32_t>::max();

// "name:port" → {"name", "port"}; no ':' → {target, ""}.
std::pair<std::string, std::string> SplitTarget(const std::string& target) {
  size_t colon = target.rfind(':');
  if (colon == std::string::npos) return {target, ""};
  return {target.substr(0, colon), target.substr(colon + 1)};
}

void SetAds(core::ConfigSource* source) {
  source->mutable_ads();
  source->set_resource_api_version(core::V3);
}

// Halves every weight until their sum fits in 32 bits (xDS weights and
// their totals are uint32); a weight never drops below 1.
void FitWeights(std::vector<uint64_t>* weights) {
  while (true) {
    uint64_t sum = 0;
    for (uint64_t w : *weights) sum += w;
    if (sum <= kMaxWeight) return;
    for (uint64_t& w : *weights) w = std::max<uint64_t>(1, w >> 1);
  }
}

// The target's own cluster, or weighted clusters over the named targets'
// clusters (weights of one authority added; zero weights left out; all
// zero: the target's own cluster).
void SetBackends(const std::string& target,
                 const std::vector<std::pair<std::string, uint32_t>>& overrides,
                 route::RouteAction* action) {
  std::vector<std::string> names;
  std::vector<uint64_t> weights;
  for (const auto& [authority, weight] : overrides) {
    if (weight == 0) continue;
    std::string name = ClusterName(authority);
    size_t i = 0;
    while (i < names.size() && names[i] != name) ++i;
    if (i == names.size()) {
      names.push_back(std::move(name));
      weights.push_back(0);
    }
    weights[i] += weight;
  }
  if (names.empty()) {
    action->set_cluster(ClusterName(target));
    return;
  }
  FitWeights(&weights);
  route::WeightedCluster* split = action->mutable_weighted_clusters();
  uint64_t total = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    route::WeightedCluster::ClusterWeight* c = split->add_clusters();
    c->set_name(names[i]);
    c->mutable_weight()->set_value(static_cast<uint32_t>(weights[i]));
    total += weights[i];
  }
  split->mutable_total_weight()->set_value(static_cast<uint32_t>(total));
}

void SetHeader(const HeaderMatchSpec& spec, route::HeaderMatcher* m) {
  m->set_name(spec.name);
  m->set_invert_match(spec.invert);
  switch (spec.kind) {
    case HeaderMatchSpec::Kind::kExact:
      m->set_exact_match(spec.value);
      break;
    case HeaderMatchSpec::Kind::kPrefix:
      m->set_prefix_match(spec.value);
      break;
    case HeaderMatchSpec::Kind::kRegex:
      m->mutable_safe_regex_match()->set_regex(spec.value);
      break;
    case HeaderMatchSpec::Kind::kPresent:
      m->set_present_match(true);
      break;
  }
}

// One profile route as an xDS route; false if no gRPC call can match it
// (a method other than POST).
bool SetRoute(const std::string& target, const ProfileSpec& profile,
              const RouteSpec& spec, route::Route* out) {
  // Every gRPC call is a POST: that condition always holds, any other
  // never does.
  if (!spec.method.empty() && spec.method != "POST") return false;
  out->set_name(spec.name);
  route::RouteMatch* match = out->mutable_match();
  if (spec.path_regex.empty()) {
    match->set_prefix("/");
  } else {
    match->mutable_safe_regex()->set_regex(spec.path_regex);
  }
  for (const HeaderMatchSpec& h : spec.headers)
    SetHeader(h, match->add_headers());
  route::RouteAction* action = out->mutable_route();
  SetBackends(
      target,
      spec.dst_overrides.empty() ? profile.dst_overrides : spec.dst_overrides,
      action);
  if (spec.timeout_ms > 0) {
    // gRPC clients read max_stream_duration; Envoy reads timeout.
    *action->mutable_timeout() =
        TimeUtil::MillisecondsToDuration(spec.timeout_ms);
    *action->mutable_max_stream_duration()->mutable_max_stream_duration() =
        TimeUtil::MillisecondsToDuration(spec.timeout_ms);
  }
  if (spec.retryable) {
    route::RetryPolicy* retry = action->mutable_retry_policy();
    retry->set_retry_on(spec.retry_on.empty()
                            ? std::string("unavailable")
                            : absl::StrJoin(spec.retry_on, ","));
    retry->mutable_num_retries()->set_value(spec.max_retries);
    *retry->mutable_retry_back_off()->mutable_base_interval() =
        TimeUtil::MillisecondsToDuration(25);
    *retry->mutable_retry_back_off()->mutable_max_interval() =
        TimeUtil::MillisecondsToDuration(250);
  }
  return true;
}

template <typename Message>
google::protobuf::Any Pack(const Message& message) {
  google::protobuf::Any any;
  any.PackFrom(message);
  return any;
}

Listener ListenerFor(const std::string& target) {
  hcm::HttpConnectionManager manager;
  hcm::Rds* rds = manager.mutable_rds();
  SetAds(rds->mutable_config_source());
  rds->set_route_config_name(ClusterName(target));
  hcm::HttpFilter* router = manager.add_http_filters();
  router->set_name(kRouterFilterName);
  router->mutable_typed_config()->PackFrom(
      envoy::extensions::filters::http::router::v3::Router());
  Listener listener;
  listener.set_name(ListenerName(target));
  listener.mutable_api_listener()->mutable_api_listener()->PackFrom(manager);
  return listener;
}

route::RouteConfiguration RoutesFor(const std::string& target,
                                    const TargetSpec& spec) {
  route::RouteConfiguration config;
  config.set_name(ClusterName(target));
  route::VirtualHost* host = config.add_virtual_hosts();
  host->set_name(target);
  host->add_domains(target);
  host->add_domains(SplitTarget(target).first);
  static const ProfileSpec kNoProfile;
  const ProfileSpec& profile = spec.profile ? *spec.profile : kNoProfile;
  for (const RouteSpec& r : profile.routes) {
    route::Route candidate;
    if (SetRoute(target, profile, r, &candidate)) {
      *host->add_routes() = std::move(candidate);
    }
  }
  route::Route* fallback = host->add_routes();
  fallback->set_name("default");
  fallback->mutable_match()->set_prefix("/");
  SetBackends(target, profile.dst_overrides, fallback->mutable_route());
  return config;
}

// Mutual TLS to endpoints carrying one of `identities` (gRFC A29, as
// istiod configures proxyless clients): the client's certificate and the
// roots from the bootstrap's certificate provider instance `provider`, and
// the server's certificate must carry a SAN equal to one of the identities.
tls::UpstreamTlsContext TlsContextFor(const std::set<std::string>& identities,
                                      const std::string& provider) {
  tls::UpstreamTlsContext context;
  tls::CommonTlsContext* common = context.mutable_common_tls_context();
  tls::CertificateProviderPluginInstance* own =
      common->mutable_tls_certificate_provider_instance();
  own->set_instance_name(provider);
  own->set_certificate_name(kIdentityCertificateName);
  tls::CertificateValidationContext* validation =
      common->mutable_combined_validation_context()
          ->mutable_default_validation_context();
  tls::CertificateProviderPluginInstance* roots =
      validation->mutable_ca_certificate_provider_instance();
  roots->set_instance_name(provider);
  roots->set_certificate_name(kRootCertificateName);
  for (const std::string& id : identities) {
    validation->add_match_subject_alt_names()->set_exact(id);
  }
  return context;
}

Cluster ClusterFor(const std::string& target, const TargetSpec& spec,
                   const Config& config) {
  Cluster cluster;
  cluster.set_name(ClusterName(target));
  cluster.set_type(Cluster::EDS);
  SetAds(cluster.mutable_eds_cluster_config()->mutable_eds_config());
  cluster.mutable_eds_cluster_config()->set_service_name(ClusterName(target));
  cluster.set_lb_policy(Cluster::ROUND_ROBIN);
  // Sorted and distinct: the same endpoints in another order are the same
  // resource (and version).
  std::set<std::string> identities;
  for (const EndpointSpec& e : spec.endpoints) {
    if (!e.tls_identity.empty()) identities.insert(e.tls_identity);
  }
  if (!identities.empty()) {
    core::TransportSocket* socket = cluster.mutable_transport_socket();
    socket->set_name(kTlsTransportSocketName);
    socket->mutable_typed_config()->PackFrom(
        TlsContextFor(identities, config.xds_certificate_provider));
  }
  return cluster;
}

}  // namespace

const std::string& TypeUrl(XdsType type) {
  static const std::string* const kUrls = new std::string[kXdsTypes]{
      "type.googleapis.com/envoy.config.listener.v3.Listener",
      "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
      "type.googleapis.com/envoy.config.cluster.v3.Cluster",
      "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"};
  return kUrls[static_cast<int>(type)];
}

std::optional<XdsType> TypeOfUrl(absl::string_view type_url) {
  for (XdsType t : kAllXdsTypes) {
    if (TypeUrl(t) == type_url) return t;
  }
  return std::nullopt;
}

const char* ShortName(XdsType type) {
  static const char* const kNames[] = {"LDS", "RDS", "CDS", "EDS"};
  return kNames[static_cast<int>(type)];
}

bool IsFullSet(XdsType type) {
  return type == XdsType::kListener || type == XdsType::kCluster;
}

std::string ListenerName(const std::string& target) { return target; }

std::string ClusterName(const std::string& target) {
  auto [host, port] = SplitTarget(target);
  return absl::StrCat("outbound|", port, "||", host);
}

ClusterLoadAssignment LoadAssignmentFor(const std::string& target,
                                        const TargetSpec& spec) {
  ClusterLoadAssignment cla;
  cla.set_cluster_name(ClusterName(target));
  // One locality per zone, in the order zones first appear.
  std::vector<std::string> zones;
  std::vector<uint64_t> weights;
  std::vector<std::vector<uint64_t>> endpoint_weights;  // per locality
  std::vector<envoy::config::endpoint::v3::LocalityLbEndpoints*> localities;
  for (const EndpointSpec& e : spec.endpoints) {
    size_t i = 0;
    while (i < zones.size() && zones[i] != e.zone) ++i;
    if (i == zones.size()) {
      zones.push_back(e.zone);
      weights.push_back(0);
      endpoint_weights.emplace_back();
      localities.push_back(cla.add_endpoints());
      // gRPC clients require a locality, even an empty one.
      localities[i]->mutable_locality()->set_zone(e.zone);
    }
    weights[i] += e.weight;
    endpoint_weights[i].push_back(e.weight);
    auto* lb = localities[i]->add_lb_endpoints();
    // ParseConfig checked the address.
    internal::SocketAddress a = *internal::SocketAddress::Parse(e.address);
    core::SocketAddress* socket =
        lb->mutable_endpoint()->mutable_address()->mutable_socket_address();
    socket->set_address(a.ip().ToString());
    socket->set_port_value(a.port());
    lb->set_health_status(e.healthy ? core::HEALTHY : core::UNHEALTHY);
  }
  // gRPC clients skip a locality without a weight.
  FitWeights(&weights);
  for (size_t i = 0; i < localities.size(); ++i) {
    localities[i]->mutable_load_balancing_weight()->set_value(
        static_cast<uint32_t>(weights[i]));
    // Envoy refuses a locality whose endpoints' weights add up past 32 bits.
    FitWeights(&endpoint_weights[i]);
    for (size_t j = 0; j < endpoint_weights[i].size(); ++j) {
      localities[i]
          ->mutable_lb_endpoints(static_cast<int>(j))
          ->mutable_load_balancing_weight()
          ->set_value(static_cast<uint32_t>(endpoint_weights[i][j]));
    }
  }
  return cla;
}

XdsResourceSet BuildXdsResources(const Config& config) {
  XdsResourceSet set;
  for (const auto& [target, spec] : config.targets) {
    set[XdsType::kListener][ListenerName(target)] = Pack(ListenerFor(target));
    std::string cluster = ClusterName(target);
    set[XdsType::kRoute][cluster] = Pack(RoutesFor(target, spec));
    set[XdsType::kCluster][cluster] = Pack(ClusterFor(target, spec, config));
    set[XdsType::kEndpoints][cluster] = Pack(LoadAssignmentFor(target, spec));
  }
  return set;
}

}  // namespace mesh::controlplane

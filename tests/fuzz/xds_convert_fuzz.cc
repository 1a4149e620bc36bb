// libFuzzer target for the xDS wire → client conversion
// (src/discovery/xds/xds_convert.h): whatever an xDS server (or an attacker
// in its place) sends as a Listener, RouteConfiguration, Cluster or
// ClusterLoadAssignment must convert or be refused with INVALID_ARGUMENT
// and a message for the NACK, never crash, and what converts must satisfy
// xds_resources.h's rules. Routes go on the whole way to matching: the
// ServiceConfig for a fixed authority (BuildServiceConfig), compiled by the
// route engine (RouteTable::Build) and matched against a fixed request
// head; endpoints go on to EndpointsToServe. The first input byte picks the
// resource (modulo 4: Listener, RouteConfiguration, Cluster,
// ClusterLoadAssignment); the rest is the message.
//
// Run through scripts/fuzz.sh. A violated invariant aborts with a message.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "google/protobuf/stubs/logging.h"
#include "mesh/endpoint.h"
#include "mesh/service_config.h"
#include "re2/re2.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/discovery/xds/xds_resources.h"
#include "src/discovery/xds/xds_service_config.h"
#include "src/model/address.h"
#include "src/route/route_table.h"
#include "src/tls/server_name_match.h"
#include "tests/fuzz/fuzz_require.h"

namespace {

namespace xds = ::mesh::internal::xds;
using envoy::config::cluster::v3::Cluster;
using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using ::mesh::ServerNameMatcher;
using ::mesh::internal::ValidateServerNameMatcher;

constexpr char kAuthority[] = "svc.test:7001";
constexpr char kHost[] = "svc.test";
constexpr uint32_t kMillion = 1'000'000;
constexpr uint64_t kMaxUint32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kMaxRingSize = 8 * 1024 * 1024;

// The conversions' contract: OK, or INVALID_ARGUMENT with a message (it
// goes into the NACK).
void CheckRefusal(const absl::Status& status, const char* what) {
  REQUIRE(status.code() == absl::StatusCode::kInvalidArgument, what,
          " refused with ", status.ToString());
  REQUIRE(!status.message().empty(), what, " refused without a message");
}

bool IsLower(const std::string& s) { return absl::AsciiStrToLower(s) == s; }

// Compiles as CheckRegex (xds_convert_route.cc) let it through.
bool RegexCompiles(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(1 << 20);
  return RE2(pattern, options).ok();
}

void CheckFault(const mesh::FaultInjection& f) {
  REQUIRE(f.delay_per_million <= kMillion, "delay share ", f.delay_per_million);
  REQUIRE(f.abort_per_million <= kMillion, "abort share ", f.abort_per_million);
  REQUIRE(f.delay >= absl::ZeroDuration(), "negative delay");
  const int code = static_cast<int>(f.abort_code);
  REQUIRE(code >= 0 && code <= 16, "abort code ", code);
  REQUIRE(f.abort_code == absl::StatusCode::kOk || !f.abort_message.empty(),
          "abort without a message");
}

void CheckRequestMatch(const mesh::RequestMatch& m) {
  using Kind = mesh::RequestMatch::Kind;
  switch (m.kind) {
    case Kind::kAll:
    case Kind::kAny:
      break;
    case Kind::kNot:
      REQUIRE(m.children.size() == 1, "not without exactly one child");
      break;
    case Kind::kPath:
      REQUIRE(RegexCompiles(m.path_regex),
              "path regex does not compile: ", m.path_regex);
      break;
    case Kind::kMethod:
      mesh::fuzz::Fail("xDS routes have no method matches");
    case Kind::kHeader:
      REQUIRE(!m.header.name.empty(), "empty header name");
      REQUIRE(IsLower(m.header.name),
              "header name not lower case: ", m.header.name);
      if (m.header.kind == mesh::HeaderMatch::Kind::kRegex) {
        REQUIRE(RegexCompiles(m.header.value),
                "header regex does not compile: ", m.header.value);
      }
      if (m.header.kind == mesh::HeaderMatch::Kind::kRange) {
        REQUIRE(m.header.range_start < m.header.range_end, "empty range ",
                m.header.range_start, "..", m.header.range_end);
      }
      break;
    case Kind::kPathPrefix:
    case Kind::kPathExact:
      break;
    case Kind::kFraction:
      REQUIRE(m.per_million <= kMillion, "fraction ", m.per_million);
      break;
    case Kind::kQueryParam:
      mesh::fuzz::Fail("xDS routes convert no query parameter matches");
  }
  for (const mesh::RequestMatch& c : m.children) CheckRequestMatch(c);
}

void CheckRoute(const xds::RouteResource& r) {
  CheckRequestMatch(r.route.condition);
  REQUIRE(r.clusters.empty() != r.unsupported_action.empty(),
          "clusters and unsupported_action: exactly one must be set (",
          r.clusters.size(), " clusters, action '", r.unsupported_action, "')");
  uint64_t sum = 0;
  for (const mesh::WeightedBackend& b : r.clusters) {
    REQUIRE(!b.cluster.empty(), "empty cluster name");
    REQUIRE(b.authority.empty(), "a cluster backend with an authority");
    REQUIRE(b.weight > 0, "cluster weight 0");
    sum += b.weight;
  }
  REQUIRE(sum <= kMaxUint32, "cluster weights add up to ", sum);
  if (r.max_stream_duration.has_value()) {
    REQUIRE(*r.max_stream_duration >= absl::ZeroDuration(),
            "negative max_stream_duration");
  }
  if (r.route.is_retryable) {
    const mesh::RetryPolicy& p = r.route.retry_policy;
    REQUIRE(!p.retry_on.empty(), "retryable without retry_on codes");
    REQUIRE(p.max_attempts >= 2 && p.max_attempts <= 5, "max_attempts ",
            p.max_attempts);
    REQUIRE(p.backoff_base >= absl::Milliseconds(1), "backoff_base ",
            absl::FormatDuration(p.backoff_base));
    REQUIRE(p.backoff_max >= p.backoff_base, "backoff_max below base");
  }
  for (const auto& [name, fault] : r.fault_overrides) {
    REQUIRE(!name.empty(), "fault override without a filter name");
    CheckFault(fault);
  }
  for (const xds::HashPolicy& h : r.hash_policies) {
    if (h.kind == xds::HashPolicy::Kind::kHeader) {
      REQUIRE(IsLower(h.header_name), "hash header not lower case");
      if (!h.regex.empty()) {
        REQUIRE(RegexCompiles(h.regex), "hash regex does not compile");
      }
    }
  }
}

void CheckRouteConfig(const RouteConfiguration& wire,
                      const xds::RouteConfigResource& c) {
  REQUIRE(c.name == wire.name(), "name lost");
  REQUIRE(
      c.virtual_hosts.size() == static_cast<size_t>(wire.virtual_hosts_size()),
      "virtual hosts lost or added");
  for (size_t i = 0; i < c.virtual_hosts.size(); ++i) {
    const xds::VirtualHostResource& v = c.virtual_hosts[i];
    REQUIRE(!v.domains.empty(), "virtual host without domains");
    for (const std::string& d : v.domains) {
      REQUIRE(!d.empty(), "empty domain");
      REQUIRE(IsLower(d), "domain not lower case: ", d);
    }
    REQUIRE(!v.routes.empty(), "virtual host without routes");
    REQUIRE(v.routes.size() <=
                static_cast<size_t>(
                    wire.virtual_hosts(static_cast<int>(i)).routes_size()),
            "more routes than sent");
    for (const xds::RouteResource& r : v.routes) CheckRoute(r);
    for (const auto& [name, fault] : v.fault_overrides) {
      REQUIRE(!name.empty(), "fault override without a filter name");
      CheckFault(fault);
    }
  }
}

// The fixed request the compiled routes are matched against.
const std::vector<std::pair<std::string, std::string>>& Headers() {
  static const auto* const kHeaders =
      new std::vector<std::pair<std::string, std::string>>{
          {"content-type", "application/grpc"},
          {"x-user", "alice"},
          {"x-shard", "42"},
          {"x-trace-bin", "AAEC"},
      };
  return *kHeaders;
}

// From the converted resources to a match on the data path.
void CheckServiceConfig(const xds::ListenerResource& listener,
                        const xds::RouteConfigResource& routes) {
  const xds::VirtualHostResource* vhost =
      xds::SelectVirtualHost(routes, kAuthority);
  absl::StatusOr<mesh::ServiceConfig> config =
      xds::BuildServiceConfig(listener, routes, kAuthority);
  if (!config.ok()) {
    REQUIRE(config.status().code() == absl::StatusCode::kUnavailable,
            "BuildServiceConfig failed with ", config.status().ToString());
    REQUIRE(!config.status().message().empty(), "failure without a message");
    REQUIRE(vhost == nullptr, "failed though a virtual host matches");
    return;
  }
  REQUIRE(vhost != nullptr, "a config without a virtual host");
  REQUIRE(config->fully_qualified_name == kHost, "fully_qualified_name '",
          config->fully_qualified_name, "'");
  REQUIRE(config->routes.size() == vhost->routes.size(), "routes lost");
  for (size_t i = 0; i < config->routes.size(); ++i) {
    const mesh::Route& r = config->routes[i];
    REQUIRE(r.timeout > absl::ZeroDuration(), "timeout not positive");
    CheckFault(r.fault);
    if (vhost->routes[i].unsupported_action.empty()) {
      REQUIRE(r.backends.size() == vhost->routes[i].clusters.size(),
              "backends lost");
    } else {
      REQUIRE(r.backends.empty(), "backends for an unsupported action");
      REQUIRE(r.fault.abort_per_million == kMillion &&
                  r.fault.abort_code == absl::StatusCode::kUnavailable,
              "an unsupported action that does not fail every call");
    }
  }
  std::vector<std::string> clusters = xds::ClustersOf(*config);
  for (size_t i = 0; i < clusters.size(); ++i) {
    REQUIRE(!clusters[i].empty(), "ClustersOf: an empty name");
    REQUIRE(i == 0 || clusters[i - 1] < clusters[i], "ClustersOf: unsorted");
  }

  std::vector<std::string> dropped;
  std::shared_ptr<const mesh::internal::RouteTable> table =
      mesh::internal::RouteTable::Build(*config, &dropped);
  REQUIRE(table != nullptr, "no table");
  const mesh::RouteLimits limits;
  REQUIRE(table->size() <= config->routes.size(), "more routes than given");
  REQUIRE(config->routes.size() > limits.max_routes ||
              table->size() + dropped.size() >= config->routes.size(),
          "a route left out without a line");
  REQUIRE(table->At(table->size()).is_default, "default route not last");
  for (const char* path : {"/svc.test.Echo/Call", "/SVC.TEST.ECHO/call?x=1"}) {
    const mesh::internal::CompiledRoute& route =
        table->Match({"POST", path, &Headers()});
    REQUIRE(route.index <= table->size(), "match out of range");
  }
}

void CheckListener(const Listener& wire) {
  absl::StatusOr<xds::ListenerResource> l = xds::ConvertListener(wire);
  if (!l.ok()) return CheckRefusal(l.status(), "Listener");
  REQUIRE(l->name == wire.name(), "name lost");
  REQUIRE(l->route_config_name.empty() == l->inline_route_config.has_value(),
          "neither or both of RDS and an inline route config");
  REQUIRE(l->max_stream_duration > absl::ZeroDuration(),
          "max_stream_duration not positive");
  std::set<std::string> names;
  for (const xds::FaultFilter& f : l->fault_filters) {
    REQUIRE(!f.name.empty(), "fault filter without a name");
    REQUIRE(names.insert(f.name).second, "duplicate filter ", f.name);
    CheckFault(f.config);
  }
  if (!l->inline_route_config.has_value()) return;
  // ConvertListener succeeded, so the HCM in it parses.
  envoy::extensions::filters::network::http_connection_manager::v3::
      HttpConnectionManager hcm;
  REQUIRE(wire.api_listener().api_listener().UnpackTo(&hcm), "HCM lost");
  CheckRouteConfig(hcm.route_config(), *l->inline_route_config);
  CheckServiceConfig(*l, *l->inline_route_config);
}

// RDS's way (split, the virtual hosts chosen converted) must agree with
// converting the whole: refused alike, and with every virtual host
// chosen, the same virtual hosts and routes; with none chosen, each host
// converts later as it would have.
void CheckLazyConversion(const RouteConfiguration& wire, bool eager_ok) {
  const std::string bytes = wire.SerializeAsString();
  absl::StatusOr<xds::RouteConfigurationSlices> slices =
      xds::SliceRouteConfiguration(bytes);
  REQUIRE(slices.ok(), "a serialized RouteConfiguration did not slice");
  absl::StatusOr<xds::RouteConfigResource> all =
      xds::ConvertRouteConfiguration(*slices, nullptr);
  REQUIRE(all.ok() == eager_ok, "lazy and eager conversion disagree");
  if (all.ok()) CheckRouteConfig(wire, *all);
  absl::StatusOr<xds::RouteConfigResource> none =
      xds::ConvertRouteConfiguration(*slices,
                                     [](const xds::RouteConfigResource&) {
                                       return std::vector<size_t>();
                                     });
  if (!none.ok()) {
    REQUIRE(!eager_ok, "a host's head refused what converts whole");
    return;
  }
  bool every_host_converts = true;
  for (const xds::VirtualHostResource& v : none->virtual_hosts) {
    REQUIRE(!v.wire.empty() && v.routes.empty(), "a host converted early");
    every_host_converts &= xds::ConvertLazyVirtualHost(v).ok();
  }
  REQUIRE(every_host_converts == eager_ok,
          "hosts converted one by one disagree with the whole");
}

void CheckRouteConfiguration(const RouteConfiguration& wire) {
  absl::StatusOr<xds::RouteConfigResource> c =
      xds::ConvertRouteConfiguration(wire);
  CheckLazyConversion(wire, c.ok());
  if (!c.ok()) return CheckRefusal(c.status(), "RouteConfiguration");
  CheckRouteConfig(wire, *c);
  CheckServiceConfig(xds::ListenerResource(), *c);
}

// Certificate providers as a bootstrap names them, so that TLS clusters
// that refer to them are converted, not refused for want of one.
const xds::CertificateProviders& Providers() {
  static const xds::CertificateProviders* providers = [] {
    auto* p = new xds::CertificateProviders();
    xds::FileWatcherConfig files;
    files.certificate_file = "/certs/cert.pem";
    files.private_key_file = "/certs/key.pem";
    files.ca_certificate_file = "/certs/ca.pem";
    (*p)["default"] = xds::CertificateProvider{"file_watcher", "{}", files};
    (*p)["roots"] = xds::CertificateProvider{
        "file_watcher", "{}",
        xds::FileWatcherConfig{"", "", "/roots/ca.pem", absl::Seconds(5)}};
    return p;
  }();
  return *providers;
}

void CheckCluster(const Cluster& wire) {
  absl::StatusOr<xds::ClusterResource> c =
      xds::ConvertCluster(wire, Providers());
  if (!c.ok()) return CheckRefusal(c.status(), "Cluster");
  if (c->tls != nullptr) {
    // Roots always; a chain only with its key; every matcher usable.
    REQUIRE(!c->tls->certificates.trust_roots_file.empty(),
            "TLS without roots");
    REQUIRE(c->tls->certificates.cert_chain_file.empty() ==
                c->tls->certificates.private_key_file.empty(),
            "TLS chain without key");
    for (const ServerNameMatcher& m : c->tls->server_names) {
      REQUIRE(ValidateServerNameMatcher(m).ok(), "unusable SAN matcher '",
              m.value, "'");
    }
  }
  REQUIRE(c->name == wire.name(), "name lost");
  if (c->discovery == xds::ClusterResource::Discovery::kEds) {
    const std::string& service = wire.eds_cluster_config().service_name();
    REQUIRE(c->eds_service_name == (service.empty() ? wire.name() : service),
            "eds_service_name '", c->eds_service_name, "'");
    REQUIRE(c->dns_hosts.empty(), "an EDS cluster with DNS names");
  } else {
    // A DNS cluster: at most 100 names (none if every lb_endpoint is
    // unhealthy), each with a port, none asked of EDS.
    REQUIRE(c->eds_service_name.empty(), "a DNS cluster asks EDS");
    REQUIRE(c->dns_hosts.size() <= 100, c->dns_hosts.size(), " DNS names");
    if (c->discovery == xds::ClusterResource::Discovery::kLogicalDns) {
      REQUIRE(c->dns_hosts.size() == 1, "LOGICAL_DNS with ",
              c->dns_hosts.size(), " names");
    }
    for (const xds::DnsHost& h : c->dns_hosts) {
      REQUIRE(!h.host.empty() && h.port > 0, "DNS name '", h.host, "' port ",
              h.port);
    }
  }
  REQUIRE(c->min_ring_size >= 1 && c->min_ring_size <= c->max_ring_size &&
              c->max_ring_size <= kMaxRingSize,
          "ring sizes ", c->min_ring_size, "..", c->max_ring_size);
  if (c->outlier_detection.has_value()) {
    const xds::OutlierDetection& od = *c->outlier_detection;
    REQUIRE(od.interval >= absl::ZeroDuration() &&
                od.base_ejection_time >= absl::ZeroDuration() &&
                od.max_ejection_time >= absl::ZeroDuration(),
            "negative outlier detection time");
    REQUIRE(od.max_ejection_percent <= 100, "max_ejection_percent");
    if (od.success_rate.has_value()) {
      REQUIRE(od.success_rate->enforcement_percentage > 0 &&
                  od.success_rate->enforcement_percentage <= 100,
              "success rate enforcement");
    }
    if (od.failure_percentage.has_value()) {
      REQUIRE(od.failure_percentage->enforcement_percentage > 0 &&
                  od.failure_percentage->enforcement_percentage <= 100 &&
                  od.failure_percentage->threshold <= 100,
              "failure percentage");
    }
  }
}

void CheckAddress(const std::string& address) {
  absl::StatusOr<mesh::internal::SocketAddress> parsed =
      mesh::internal::SocketAddress::Parse(address);
  REQUIRE(parsed.ok(), "address does not parse: ", address);
  REQUIRE(parsed->ToString() == address, "address not canonical: ", address);
}

// EndpointsToServe: the endpoints of the first priority that has any, in
// order, each weighted by its locality's share of the priority split among
// the locality's endpoints by their weights (thousandths of the locality's
// weight, at least 1, at most 2^31); one locality: the weights as sent.
void CheckServe(const xds::EndpointsResource& e,
                const std::vector<mesh::Endpoint>& serve) {
  const std::vector<xds::LocalityEndpoints>& l = e.localities;
  size_t begin = 0;
  size_t end = 0;
  bool any = false;
  while (begin < l.size() && !any) {
    end = begin;
    while (end < l.size() && l[end].priority == l[begin].priority) {
      any = any || !l[end].endpoints.empty();
      ++end;
    }
    if (!any) begin = end;
  }
  size_t k = 0;
  // Each endpoint's share (its locality's weight split by endpoint
  // weights); served weights must be within [1, 2^31] and order as the
  // shares do (rounding may tie them, never swap them).
  std::vector<std::pair<long double, uint32_t>> shares;
  for (size_t i = begin; any && i < end; ++i) {
    long double sum = 0;
    for (const mesh::Endpoint& ep : l[i].endpoints) sum += ep.weight;
    for (const mesh::Endpoint& ep : l[i].endpoints) {
      REQUIRE(k < serve.size(), "an endpoint not served: ", ep.address);
      REQUIRE(serve[k].address == ep.address, "served ", serve[k].address,
              " in place of ", ep.address);
      if (end - begin == 1) {
        REQUIRE(serve[k].weight == ep.weight, "endpoint ", ep.address,
                " of the only locality served with weight ", serve[k].weight,
                ", not its own ", ep.weight);
      }
      REQUIRE(serve[k].weight >= 1 && serve[k].weight <= (uint32_t{1} << 31),
              "endpoint ", ep.address, " served with weight ", serve[k].weight);
      shares.emplace_back(
          static_cast<long double>(l[i].weight) * ep.weight / sum,
          serve[k].weight);
      REQUIRE(mesh::ValidateEndpoint(serve[k]).ok(), "invalid endpoint ",
              serve[k].address);
      // Served, an endpoint carries its locality's names, and nothing else.
      const mesh::Endpoint& served = serve[k];
      auto label = [&served](const char* key) {
        auto it = served.labels.find(key);
        return it == served.labels.end() ? std::string() : it->second;
      };
      REQUIRE(label("region") == l[i].region && label("zone") == l[i].zone &&
                  label("sub_zone") == l[i].sub_zone &&
                  served.labels.size() == (!l[i].region.empty()) +
                                              (!l[i].zone.empty()) +
                                              (!l[i].sub_zone.empty()),
              "locality labels of ", served.address);
      ++k;
    }
  }
  std::sort(shares.begin(), shares.end());
  for (size_t i = 1; i < shares.size(); ++i) {
    REQUIRE(shares[i - 1].first == shares[i].first ||
                shares[i - 1].second <= shares[i].second,
            "a larger share served with a smaller weight (",
            shares[i - 1].second, " > ", shares[i].second, ")");
  }
  REQUIRE(k == serve.size(), "more endpoints served than the priority has");
}

void CheckClusterLoadAssignment(const ClusterLoadAssignment& wire) {
  absl::StatusOr<xds::EndpointsResource> e =
      xds::ConvertClusterLoadAssignment(wire);
  if (!e.ok()) return CheckRefusal(e.status(), "ClusterLoadAssignment");
  REQUIRE(e->cluster_name == wire.cluster_name(), "cluster_name lost");
  REQUIRE(e->localities.size() <= static_cast<size_t>(wire.endpoints_size()),
          "more localities than sent");
  absl::flat_hash_set<std::string> seen;
  size_t total = 0;
  uint64_t priority_weight = 0;
  for (size_t i = 0; i < e->localities.size(); ++i) {
    const xds::LocalityEndpoints& l = e->localities[i];
    const uint32_t previous = i == 0 ? 0 : e->localities[i - 1].priority;
    REQUIRE(l.priority == previous || (i > 0 && l.priority == previous + 1),
            "priorities not dense from 0: ", previous, " then ", l.priority);
    if (i > 0 && l.priority != previous) priority_weight = 0;
    REQUIRE(l.weight > 0, "a locality without weight kept");
    priority_weight += l.weight;
    REQUIRE(priority_weight <= kMaxUint32, "locality weights overflow");
    uint64_t weights = 0;
    for (const mesh::Endpoint& ep : l.endpoints) {
      REQUIRE(mesh::ValidateEndpoint(ep).ok(), "invalid endpoint ", ep.address);
      CheckAddress(ep.address);
      REQUIRE(seen.insert(ep.address).second, "duplicate address ", ep.address);
      weights += ep.weight;
      // Labels come with serving (CheckServe), not in the cached resource.
      REQUIRE(ep.labels.empty(), "labels on a resource endpoint ", ep.address);
    }
    REQUIRE(weights <= kMaxUint32, "endpoint weights overflow");
    total += l.endpoints.size();
  }
  for (const xds::EndpointsResource::Drop& d : e->drop_overloads) {
    REQUIRE(!d.category.empty(), "drop without a category");
    REQUIRE(d.per_million <= kMillion, "drop share ", d.per_million);
  }

  std::vector<mesh::Endpoint> serve = xds::EndpointsToServe(*e);
  REQUIRE(total == 0 || !serve.empty(), "endpoints kept, none to serve");
  CheckServe(*e, serve);
}

}  // namespace

// protobuf logs every string field with invalid UTF-8 it refuses to parse;
// at tens of thousands of inputs a second that is only noise.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const void* body = data + 1;
  const int body_size = static_cast<int>(size - 1);
  switch (data[0] % 4) {
    case 0: {
      Listener listener;
      if (listener.ParseFromArray(body, body_size)) CheckListener(listener);
      break;
    }
    case 1: {
      RouteConfiguration config;
      if (config.ParseFromArray(body, body_size)) {
        CheckRouteConfiguration(config);
      }
      break;
    }
    case 2: {
      Cluster cluster;
      if (cluster.ParseFromArray(body, body_size)) CheckCluster(cluster);
      break;
    }
    default: {
      ClusterLoadAssignment assignment;
      if (assignment.ParseFromArray(body, body_size)) {
        CheckClusterLoadAssignment(assignment);
      }
      break;
    }
  }
  return 0;
}

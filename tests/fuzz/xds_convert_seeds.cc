// Writes a seed corpus for xds_convert_fuzz: realistic xDS resources (and a
// few broken ones) in the fuzzer's input format, a selector byte (0:
// Listener, 1: RouteConfiguration, 2: Cluster, 3: ClusterLoadAssignment)
// then the serialized resource. Seeds are generated rather than checked in
// so they follow the .proto files.
//
//   xds_convert_seeds OUT_DIR
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/extensions/filters/http/fault/v3/fault.pb.h"
#include "envoy/extensions/filters/http/router/v3/router.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "envoy/extensions/transport_sockets/tls/v3/tls.pb.h"
#include "google/protobuf/message.h"

namespace {

namespace core = ::envoy::config::core::v3;
namespace route = ::envoy::config::route::v3;
namespace endpoint = ::envoy::config::endpoint::v3;
namespace fault = ::envoy::extensions::filters::http::fault::v3;
namespace hcm_v3 =
    ::envoy::extensions::filters::network::http_connection_manager::v3;
using ::envoy::config::cluster::v3::Cluster;
namespace tls_v3 = ::envoy::extensions::transport_sockets::tls::v3;
using ::envoy::config::listener::v3::Listener;
using ::envoy::extensions::filters::http::router::v3::Router;
using ::envoy::type::v3::FractionalPercent;

int written = 0;

bool Write(const std::string& dir, char selector,
           const google::protobuf::Message& m) {
  std::string path = dir + "/seed-" + std::to_string(written++);
  std::ofstream out(path, std::ios::binary);
  out << selector << m.SerializeAsString();
  return static_cast<bool>(out);
}

void SetMillis(int64_t ms, google::protobuf::Duration* d) {
  d->set_seconds(ms / 1000);
  d->set_nanos(static_cast<int32_t>((ms % 1000) * 1'000'000));
}

void SetPercent(uint32_t numerator, FractionalPercent::DenominatorType d,
                FractionalPercent* out) {
  out->set_numerator(numerator);
  out->set_denominator(d);
}

void AddRouter(hcm_v3::HttpConnectionManager* hcm) {
  hcm_v3::HttpFilter* router = hcm->add_http_filters();
  router->set_name("envoy.filters.http.router");
  router->mutable_typed_config()->PackFrom(Router());
}

fault::HTTPFault Fault() {
  fault::HTTPFault f;
  SetMillis(5, f.mutable_delay()->mutable_fixed_delay());
  SetPercent(10, FractionalPercent::HUNDRED,
             f.mutable_delay()->mutable_percentage());
  f.mutable_abort()->set_grpc_status(14);
  SetPercent(500, FractionalPercent::TEN_THOUSAND,
             f.mutable_abort()->mutable_percentage());
  f.mutable_max_active_faults()->set_value(100);
  return f;
}

// A route configuration for svc.test:7001 that uses most of what mesh
// reads: prefix, path and regex routes, header matchers of each kind,
// weighted clusters, retry policies, max_stream_duration, hash policies,
// fault overrides, and routes mesh leaves out or fails.
route::RouteConfiguration Routes() {
  route::RouteConfiguration config;
  config.set_name("outbound|7001||svc.test");
  route::VirtualHost* host = config.add_virtual_hosts();
  host->set_name("svc.test");
  host->add_domains("svc.test:7001");
  host->add_domains("svc.test");
  host->add_domains("*.svc.test:7001");
  route::RetryPolicy* vhost_retry = host->mutable_retry_policy();
  vhost_retry->set_retry_on("unavailable");
  vhost_retry->mutable_num_retries()->set_value(1);
  fault::HTTPFault no_abort;
  no_abort.mutable_abort()->mutable_header_abort();
  SetPercent(100, FractionalPercent::HUNDRED,
             no_abort.mutable_abort()->mutable_percentage());
  (*host->mutable_typed_per_filter_config())["envoy.filters.http.fault"]
      .PackFrom(no_abort);

  // Prefix, headers, weighted clusters, own retry policy, stream limits.
  route::Route* r = host->add_routes();
  r->set_name("echo-prefix");
  route::RouteMatch* m = r->mutable_match();
  m->set_prefix("/svc.test.Echo/");
  route::HeaderMatcher* h = m->add_headers();
  h->set_name("X-User");
  h->set_exact_match("alice");
  h = m->add_headers();
  h->set_name("x-shard");
  h->mutable_range_match()->set_start(0);
  h->mutable_range_match()->set_end(100);
  h = m->add_headers();
  h->set_name("x-canary");
  h->set_present_match(true);
  h->set_invert_match(true);
  h = m->add_headers();
  h->set_name("content-type");
  h->set_prefix_match("application/grpc");
  h = m->add_headers();
  h->set_name("x-region");
  h->mutable_safe_regex_match()->set_regex("eu-(west|north)-[0-9]+");
  h->set_invert_match(true);
  h = m->add_headers();
  h->set_name("user-agent");
  h->mutable_string_match()->set_contains("GRPC");
  h->mutable_string_match()->set_ignore_case(true);
  h = m->add_headers();
  h->set_name("x-trace-bin");
  h->set_suffix_match("==");
  route::RouteAction* a = r->mutable_route();
  route::WeightedCluster* split = a->mutable_weighted_clusters();
  route::WeightedCluster::ClusterWeight* c = split->add_clusters();
  c->set_name("outbound|7001||svc-v1.test");
  c->mutable_weight()->set_value(90);
  c = split->add_clusters();
  c->set_name("outbound|7001||svc-v2.test");
  c->mutable_weight()->set_value(10);
  c = split->add_clusters();
  c->set_name("outbound|7001||svc-v3.test");
  c->mutable_weight()->set_value(0);
  split->mutable_total_weight()->set_value(100);
  route::RetryPolicy* retry = a->mutable_retry_policy();
  retry->set_retry_on("unavailable, cancelled,5xx,resource-exhausted");
  retry->mutable_num_retries()->set_value(3);
  SetMillis(10, retry->mutable_retry_back_off()->mutable_base_interval());
  SetMillis(100, retry->mutable_retry_back_off()->mutable_max_interval());
  SetMillis(
      2000,
      a->mutable_max_stream_duration()->mutable_grpc_timeout_header_max());
  SetMillis(5000,
            a->mutable_max_stream_duration()->mutable_max_stream_duration());
  route::RouteAction::HashPolicy* hash = a->add_hash_policy();
  hash->mutable_header()->set_header_name("X-User");
  hash->mutable_header()->mutable_regex_rewrite()->mutable_pattern()->set_regex(
      "^(\\w+)@.*$");
  hash->mutable_header()->mutable_regex_rewrite()->set_substitution("\\1");
  a->add_hash_policy()->mutable_filter_state()->set_key("io.grpc.channel_id");

  // Exact path, case insensitive, with a fault override in a FilterConfig.
  r = host->add_routes();
  r->set_name("echo-call");
  r->mutable_match()->set_path("/svc.test.Echo/Call");
  r->mutable_match()->mutable_case_sensitive()->set_value(false);
  r->mutable_route()->set_cluster("outbound|7001||svc.test");
  SetMillis(750, r->mutable_route()
                     ->mutable_max_stream_duration()
                     ->mutable_max_stream_duration());
  route::FilterConfig wrapper;
  wrapper.mutable_config()->PackFrom(Fault());
  wrapper.set_is_optional(true);
  (*r->mutable_typed_per_filter_config())["envoy.filters.http.fault"].PackFrom(
      wrapper);

  // Regex path with a runtime fraction, the virtual host's retry policy.
  r = host->add_routes();
  r->mutable_match()->mutable_safe_regex()->set_regex(
      "/svc\\.test\\.Echo/(Get|List)[A-Z][a-z]*");
  SetPercent(
      50, FractionalPercent::HUNDRED,
      r->mutable_match()->mutable_runtime_fraction()->mutable_default_value());
  r->mutable_route()->set_cluster("outbound|7001||svc.test");

  // Left out: query parameters, a cluster header.
  r = host->add_routes();
  r->mutable_match()->set_prefix("/");
  r->mutable_match()->add_query_parameters();
  r->mutable_route()->set_cluster("never");
  r = host->add_routes();
  r->mutable_match()->set_prefix("/");
  r->mutable_route()->set_cluster_header("x-cluster");

  // Kept, failing every call: a redirect.
  r = host->add_routes();
  r->set_name("moved");
  r->mutable_match()->set_prefix("/old.Service/");
  r->mutable_redirect();

  r = host->add_routes();
  r->set_name("default");
  r->mutable_match()->set_prefix("");
  r->mutable_route()->set_cluster("outbound|7001||svc.test");

  route::VirtualHost* other = config.add_virtual_hosts();
  other->set_name("fallback");
  other->add_domains("*");
  r = other->add_routes();
  r->mutable_match()->set_prefix("/");
  r->mutable_direct_response();
  return config;
}

std::vector<Listener> Listeners() {
  std::vector<Listener> out;
  // Over RDS, as mesh-control-plane serves it.
  hcm_v3::HttpConnectionManager rds;
  rds.mutable_rds()->mutable_config_source()->mutable_ads();
  rds.mutable_rds()->mutable_config_source()->set_resource_api_version(
      core::V3);
  rds.mutable_rds()->set_route_config_name("outbound|7001||svc.test");
  AddRouter(&rds);
  Listener listener;
  listener.set_name("svc.test:7001");
  listener.mutable_api_listener()->mutable_api_listener()->PackFrom(rds);
  out.push_back(listener);

  // Inline routes, a fault filter and an optional unknown one before the
  // router, a stream limit.
  hcm_v3::HttpConnectionManager inline_routes;
  *inline_routes.mutable_route_config() = Routes();
  SetMillis(30'000, inline_routes.mutable_common_http_protocol_options()
                        ->mutable_max_stream_duration());
  hcm_v3::HttpFilter* f = inline_routes.add_http_filters();
  f->set_name("envoy.filters.http.fault");
  f->mutable_typed_config()->PackFrom(Fault());
  f = inline_routes.add_http_filters();
  f->set_name("envoy.filters.http.unknown");
  f->mutable_typed_config()->PackFrom(Cluster());
  f->set_is_optional(true);
  AddRouter(&inline_routes);
  listener.mutable_api_listener()->mutable_api_listener()->PackFrom(
      inline_routes);
  out.push_back(listener);

  // Broken: the router is not last.
  hcm_v3::HttpConnectionManager broken = rds;
  f = broken.add_http_filters();
  f->set_name("late-fault");
  f->mutable_typed_config()->PackFrom(Fault());
  listener.mutable_api_listener()->mutable_api_listener()->PackFrom(broken);
  out.push_back(listener);

  // Broken: no api_listener.
  out.push_back(Listener());
  return out;
}

std::vector<route::RouteConfiguration> RouteConfigs() {
  std::vector<route::RouteConfiguration> out;
  out.push_back(Routes());
  // Broken: a regex RE2 refuses.
  route::RouteConfiguration broken = Routes();
  broken.mutable_virtual_hosts(0)
      ->mutable_routes(2)
      ->mutable_match()
      ->mutable_safe_regex()
      ->set_regex("(a)\\1");
  out.push_back(broken);
  return out;
}

std::vector<Cluster> Clusters() {
  std::vector<Cluster> out;
  Cluster c;
  c.set_name("outbound|7001||svc.test");
  c.set_type(Cluster::EDS);
  c.mutable_eds_cluster_config()->mutable_eds_config()->mutable_ads();
  c.mutable_eds_cluster_config()->set_service_name("svc.test-endpoints");
  c.set_lb_policy(Cluster::RING_HASH);
  c.mutable_ring_hash_lb_config()->mutable_minimum_ring_size()->set_value(1024);
  c.mutable_ring_hash_lb_config()->mutable_maximum_ring_size()->set_value(
      65536);
  auto* high = c.mutable_circuit_breakers()->add_thresholds();
  high->set_priority(core::HIGH);
  high->mutable_max_requests()->set_value(10);
  auto* normal = c.mutable_circuit_breakers()->add_thresholds();
  normal->set_priority(core::DEFAULT);
  normal->mutable_max_requests()->set_value(200);
  auto* od = c.mutable_outlier_detection();
  SetMillis(5000, od->mutable_interval());
  SetMillis(10'000, od->mutable_base_ejection_time());
  SetMillis(120'000, od->mutable_max_ejection_time());
  od->mutable_max_ejection_percent()->set_value(50);
  od->mutable_enforcing_success_rate()->set_value(80);
  od->mutable_success_rate_stdev_factor()->set_value(1500);
  od->mutable_success_rate_minimum_hosts()->set_value(3);
  od->mutable_success_rate_request_volume()->set_value(20);
  od->mutable_enforcing_failure_percentage()->set_value(20);
  od->mutable_failure_percentage_threshold()->set_value(90);
  od->mutable_failure_percentage_minimum_hosts()->set_value(4);
  od->mutable_failure_percentage_request_volume()->set_value(30);
  out.push_back(c);

  Cluster least;
  least.set_name("outbound|7002||other.test");
  least.set_type(Cluster::EDS);
  least.mutable_eds_cluster_config()->mutable_eds_config()->mutable_self();
  least.set_lb_policy(Cluster::LEAST_REQUEST);
  least.mutable_least_request_lb_config()->mutable_choice_count()->set_value(3);
  out.push_back(least);

  // DNS clusters: one name (LOGICAL_DNS), two names with weights
  // (STRICT_DNS).
  Cluster logical = least;
  logical.clear_eds_cluster_config();
  logical.set_type(Cluster::LOGICAL_DNS);
  auto* host = logical.mutable_load_assignment()
                   ->add_endpoints()
                   ->add_lb_endpoints()
                   ->mutable_endpoint()
                   ->mutable_address()
                   ->mutable_socket_address();
  host->set_address("echo.mesh.test");
  host->set_port_value(7002);
  out.push_back(logical);
  Cluster strict = logical;
  strict.set_type(Cluster::STRICT_DNS);
  auto* second = strict.mutable_load_assignment()
                     ->mutable_endpoints(0)
                     ->add_lb_endpoints();
  second->mutable_load_balancing_weight()->set_value(3);
  auto* other =
      second->mutable_endpoint()->mutable_address()->mutable_socket_address();
  other->set_address("other.mesh.test");
  other->set_port_value(7002);
  out.push_back(strict);
  // Broken: DNS without load_assignment, and a TLS transport socket.
  Cluster dns = least;
  dns.set_type(Cluster::STRICT_DNS);
  out.push_back(dns);
  Cluster tls = least;
  tls.mutable_transport_socket()->set_name("envoy.transport_sockets.tls");
  out.push_back(tls);
  // TLS as istiod sends it (the fuzzer's bootstrap has "default").
  Cluster mtls = least;
  tls_v3::UpstreamTlsContext context;
  auto* common = context.mutable_common_tls_context();
  common->mutable_tls_certificate_provider_instance()->set_instance_name(
      "default");
  auto* validation = common->mutable_combined_validation_context()
                         ->mutable_default_validation_context();
  validation->mutable_ca_certificate_provider_instance()->set_instance_name(
      "default");
  validation->add_match_subject_alt_names()->set_exact(
      "spiffe://cluster.local/ns/a/sa/b");
  validation->add_match_subject_alt_names()->mutable_safe_regex()->set_regex(
      "spiffe://cluster\\.local/ns/[a-z]+/sa/.*");
  mtls.mutable_transport_socket()->set_name("envoy.transport_sockets.tls");
  mtls.mutable_transport_socket()->mutable_typed_config()->PackFrom(context);
  out.push_back(mtls);
  return out;
}

void AddEndpoint(const std::string& ip, uint32_t port, core::HealthStatus h,
                 uint32_t weight, endpoint::LocalityLbEndpoints* locality) {
  endpoint::LbEndpoint* e = locality->add_lb_endpoints();
  core::SocketAddress* s =
      e->mutable_endpoint()->mutable_address()->mutable_socket_address();
  s->set_address(ip);
  s->set_port_value(port);
  e->set_health_status(h);
  if (weight > 0) e->mutable_load_balancing_weight()->set_value(weight);
}

std::vector<endpoint::ClusterLoadAssignment> Assignments() {
  std::vector<endpoint::ClusterLoadAssignment> out;
  endpoint::ClusterLoadAssignment cla;
  cla.set_cluster_name("svc.test-endpoints");
  // Priority 1 first on the wire: the conversion sorts.
  endpoint::LocalityLbEndpoints* backup = cla.add_endpoints();
  backup->mutable_locality()->set_region("eu-west");
  backup->mutable_locality()->set_zone("eu-west-1c");
  backup->mutable_load_balancing_weight()->set_value(1);
  backup->set_priority(1);
  AddEndpoint("10.0.1.1", 7001, core::HEALTHY, 0, backup);
  endpoint::LocalityLbEndpoints* a = cla.add_endpoints();
  a->mutable_locality()->set_region("eu-west");
  a->mutable_locality()->set_zone("eu-west-1a");
  a->mutable_locality()->set_sub_zone("rack-7");
  a->mutable_load_balancing_weight()->set_value(3);
  AddEndpoint("10.0.0.1", 7001, core::HEALTHY, 2, a);
  AddEndpoint("10.0.0.2", 7001, core::UNKNOWN, 0, a);
  AddEndpoint("10.0.0.3", 7001, core::UNHEALTHY, 1, a);
  AddEndpoint("10.0.0.4", 7001, core::DRAINING, 1, a);
  endpoint::LocalityLbEndpoints* b = cla.add_endpoints();
  b->mutable_locality()->set_region("eu-west");
  b->mutable_locality()->set_zone("eu-west-1b");
  b->mutable_load_balancing_weight()->set_value(1);
  AddEndpoint("2001:db8::1", 7001, core::HEALTHY, 5, b);
  AddEndpoint("2001:0db8:0:0::2", 7001, core::DEGRADED, 1, b);
  AddEndpoint("2001:db8::3", 7001, core::TIMEOUT, 1, b);
  endpoint::LocalityLbEndpoints* unweighted = cla.add_endpoints();
  unweighted->mutable_locality()->set_zone("eu-west-1d");
  AddEndpoint("10.0.2.1", 7001, core::HEALTHY, 1, unweighted);
  auto* drop = cla.mutable_policy()->add_drop_overloads();
  drop->set_category("throttle");
  SetPercent(5, FractionalPercent::HUNDRED, drop->mutable_drop_percentage());
  drop = cla.mutable_policy()->add_drop_overloads();
  drop->set_category("lb");
  SetPercent(1000, FractionalPercent::MILLION, drop->mutable_drop_percentage());
  out.push_back(cla);

  // Priority 0 has no endpoint that may serve: priority 1 serves.
  endpoint::ClusterLoadAssignment failover;
  failover.set_cluster_name("failover");
  endpoint::LocalityLbEndpoints* down = failover.add_endpoints();
  down->mutable_load_balancing_weight()->set_value(1);
  AddEndpoint("10.1.0.1", 80, core::UNHEALTHY, 1, down);
  endpoint::LocalityLbEndpoints* up = failover.add_endpoints();
  up->mutable_load_balancing_weight()->set_value(1);
  up->set_priority(1);
  AddEndpoint("10.1.1.1", 80, core::HEALTHY, 1, up);
  out.push_back(failover);

  // Broken: a gap in the priorities, a duplicate address, a host name.
  endpoint::ClusterLoadAssignment gap = failover;
  gap.mutable_endpoints(1)->set_priority(2);
  out.push_back(gap);
  endpoint::ClusterLoadAssignment dup = failover;
  AddEndpoint("10.1.1.1", 80, core::HEALTHY, 1, dup.mutable_endpoints(0));
  out.push_back(dup);
  endpoint::ClusterLoadAssignment dns = failover;
  AddEndpoint("svc.test", 80, core::HEALTHY, 1, dns.mutable_endpoints(1));
  out.push_back(dns);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  for (const Listener& l : Listeners()) {
    if (!Write(argv[1], 0, l)) return 1;
  }
  for (const route::RouteConfiguration& r : RouteConfigs()) {
    if (!Write(argv[1], 1, r)) return 1;
  }
  for (const Cluster& c : Clusters()) {
    if (!Write(argv[1], 2, c)) return 1;
  }
  for (const endpoint::ClusterLoadAssignment& e : Assignments()) {
    if (!Write(argv[1], 3, e)) return 1;
  }
  std::printf("wrote %d seeds to %s\n", written, argv[1]);
  return 0;
}

// The control plane's xDS half without a network: a config as Listener,
// RouteConfiguration, Cluster and ClusterLoadAssignment (each unpacked and
// checked field by field), the catalog's versions by content, and one ADS
// stream's protocol — subscriptions, ACKs, NACKs, stale nonces, unknown
// types, the node, and log text a hostile client cannot make unprintable or
// huge.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/extensions/filters/http/router/v3/router.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "envoy/extensions/transport_sockets/tls/v3/tls.pb.h"
#include "envoy/service/discovery/v3/discovery.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/mesh-control-plane/ads_stream.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/xds_catalog.h"
#include "tools/mesh-control-plane/xds_resources.h"

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
using ::envoy::service::discovery::v3::DiscoveryRequest;
using ::envoy::service::discovery::v3::DiscoveryResponse;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Kind = AdsRequestOutcome::Kind;

constexpr uint64_t kMaxUint32 = std::numeric_limits<uint32_t>::max();

EndpointSpec Endpoint(std::string address, uint32_t weight = 1,
                      std::string zone = "", bool healthy = true) {
  EndpointSpec e;
  e.address = std::move(address);
  e.weight = weight;
  e.zone = std::move(zone);
  e.healthy = healthy;
  return e;
}

EndpointSpec WithIdentity(std::string address, std::string identity) {
  EndpointSpec e = Endpoint(std::move(address));
  e.tls_identity = std::move(identity);
  return e;
}

HeaderMatchSpec Header(std::string name, HeaderMatchSpec::Kind kind,
                       std::string value, bool invert = false) {
  HeaderMatchSpec h;
  h.name = std::move(name);
  h.kind = kind;
  h.value = std::move(value);
  h.invert = invert;
  return h;
}

// books.local:7001 with a profile of every kind of route, endpoints in two
// zones (one unhealthy, one IPv6); reviews.local:9090 plain.
Config BooksConfig() {
  Config config;
  TargetSpec& books = config.targets["books.local:7001"];
  books.endpoints = {Endpoint("10.0.0.1:7001", 2, "zone-a"),
                     Endpoint("10.0.0.2:7001", 3, "zone-a", false),
                     Endpoint("10.0.1.1:7001", 5, "zone-b"),
                     Endpoint("[::1]:7002", 7, "zone-b")};
  ProfileSpec& profile = books.profile.emplace();
  profile.dst_overrides = {{"books.local:7001", 9}, {"books-v2.local:7001", 1}};
  RouteSpec get_book;
  get_book.name = "GetBook";
  get_book.path_regex = "^/books.Library/GetBook$";
  get_book.method = "POST";
  get_book.timeout_ms = 1500;
  get_book.retryable = true;
  get_book.retry_on = {"unavailable", "deadline-exceeded"};
  get_book.max_retries = 4;
  get_book.headers = {
      Header("x-exact", HeaderMatchSpec::Kind::kExact, "yes"),
      Header("x-prefix", HeaderMatchSpec::Kind::kPrefix, "pre", true),
      Header("x-regex", HeaderMatchSpec::Kind::kRegex, "v[0-9]+"),
      Header("x-present", HeaderMatchSpec::Kind::kPresent, "", true)};
  RouteSpec browser;  // a GET: no gRPC call can match it
  browser.name = "Browse";
  browser.path_regex = "^/browse$";
  browser.method = "GET";
  RouteSpec canary;
  canary.name = "Canary";
  canary.path_regex = "^/books.Library/.*$";
  canary.retryable = true;  // retry_on left out: "unavailable"
  canary.dst_overrides = {{"books-canary.local:7001", 1}};
  profile.routes = {get_book, browser, canary};
  config.targets["reviews.local:9090"].endpoints = {Endpoint("10.0.2.1:9090")};
  return config;
}

template <typename Message>
Message Unpack(const google::protobuf::Any& any) {
  Message m;
  EXPECT_TRUE(any.UnpackTo(&m)) << any.type_url();
  return m;
}

template <typename Message>
Message Resource(const XdsResourceSet& set, XdsType type,
                 const std::string& name) {
  auto it = set[type].find(name);
  if (it == set[type].end()) {
    ADD_FAILURE() << "no " << ShortName(type) << " resource " << name;
    return Message();
  }
  return Unpack<Message>(it->second);
}

int64_t Millis(const google::protobuf::Duration& d) {
  return d.seconds() * 1000 + d.nanos() / 1000000;
}

// --- names, type URLs ---------------------------------------------------

TEST(XdsResourcesTest, NamesAndTypeUrls) {
  EXPECT_EQ(ListenerName("books.local:7001"), "books.local:7001");
  EXPECT_EQ(ClusterName("books.local:7001"), "outbound|7001||books.local");
  for (XdsType t : kAllXdsTypes) EXPECT_EQ(TypeOfUrl(TypeUrl(t)), t);
  EXPECT_EQ(TypeUrl(XdsType::kEndpoints),
            "type.googleapis.com/"
            "envoy.config.endpoint.v3.ClusterLoadAssignment");
  EXPECT_EQ(TypeOfUrl("type.googleapis.com/envoy.config.listener.v3.Listene"),
            std::nullopt);
  EXPECT_TRUE(IsFullSet(XdsType::kListener));
  EXPECT_FALSE(IsFullSet(XdsType::kRoute));
  EXPECT_TRUE(IsFullSet(XdsType::kCluster));
  EXPECT_FALSE(IsFullSet(XdsType::kEndpoints));
}

TEST(XdsResourcesTest, EveryTargetHasOneResourceOfEachType) {
  Config config = BooksConfig();
  config.not_mesh.insert("external.example.com:443");
  config.silent.insert("quiet.local:80");
  XdsResourceSet set = BuildXdsResources(config);
  for (XdsType t : kAllXdsTypes) {
    EXPECT_EQ(set[t].size(), 2u) << ShortName(t);
    for (const auto& [name, any] : set[t])
      EXPECT_EQ(any.type_url(), TypeUrl(t));
  }
  EXPECT_EQ(set[XdsType::kListener].count("reviews.local:9090"), 1u);
  EXPECT_EQ(set[XdsType::kEndpoints].count("outbound|9090||reviews.local"), 1u);
}

TEST(XdsResourcesTest, ListenerIsAnHttpConnectionManagerWithRdsOverAds) {
  XdsResourceSet set = BuildXdsResources(BooksConfig());
  Listener listener =
      Resource<Listener>(set, XdsType::kListener, "books.local:7001");
  EXPECT_EQ(listener.name(), "books.local:7001");
  hcm::HttpConnectionManager manager = Unpack<hcm::HttpConnectionManager>(
      listener.api_listener().api_listener());
  ASSERT_TRUE(manager.has_rds());
  EXPECT_TRUE(manager.rds().config_source().has_ads());
  EXPECT_EQ(manager.rds().config_source().resource_api_version(), core::V3);
  EXPECT_EQ(manager.rds().route_config_name(), "outbound|7001||books.local");
  ASSERT_EQ(manager.http_filters_size(), 1);
  EXPECT_EQ(manager.http_filters(0).name(), "envoy.filters.http.router");
  EXPECT_EQ(
      manager.http_filters(0).typed_config().type_url(),
      "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router");
}

TEST(XdsResourcesTest, RouteConfigurationFollowsTheProfile) {
  XdsResourceSet set = BuildXdsResources(BooksConfig());
  route::RouteConfiguration config = Resource<route::RouteConfiguration>(
      set, XdsType::kRoute, "outbound|7001||books.local");
  EXPECT_EQ(config.name(), "outbound|7001||books.local");
  ASSERT_EQ(config.virtual_hosts_size(), 1);
  const route::VirtualHost& host = config.virtual_hosts(0);
  EXPECT_THAT(host.domains(), ElementsAre("books.local:7001", "books.local"));
  // GetBook, Canary, then the default; the GET route is left out.
  ASSERT_EQ(host.routes_size(), 3);
  EXPECT_EQ(host.routes(0).name(), "GetBook");
  EXPECT_EQ(host.routes(1).name(), "Canary");
  EXPECT_EQ(host.routes(2).name(), "default");

  // GetBook: its regex, every kind of header condition, the profile's
  // split, its timeout and its retries. POST is no condition at all.
  const route::Route& get_book = host.routes(0);
  EXPECT_EQ(get_book.match().safe_regex().regex(), "^/books.Library/GetBook$");
  ASSERT_EQ(get_book.match().headers_size(), 4);
  const auto& h = get_book.match().headers();
  EXPECT_EQ(h[0].name(), "x-exact");
  EXPECT_EQ(h[0].exact_match(), "yes");
  EXPECT_FALSE(h[0].invert_match());
  EXPECT_EQ(h[1].name(), "x-prefix");
  EXPECT_EQ(h[1].prefix_match(), "pre");
  EXPECT_TRUE(h[1].invert_match());
  EXPECT_EQ(h[2].name(), "x-regex");
  EXPECT_EQ(h[2].safe_regex_match().regex(), "v[0-9]+");
  EXPECT_FALSE(h[2].invert_match());
  EXPECT_EQ(h[3].name(), "x-present");
  EXPECT_TRUE(h[3].present_match());
  EXPECT_TRUE(h[3].invert_match());
  for (const route::HeaderMatcher& m : h) EXPECT_NE(m.name(), ":method");
  const route::RouteAction& action = get_book.route();
  ASSERT_TRUE(action.has_weighted_clusters());
  const route::WeightedCluster& split = action.weighted_clusters();
  ASSERT_EQ(split.clusters_size(), 2);
  EXPECT_EQ(split.clusters(0).name(), "outbound|7001||books.local");
  EXPECT_EQ(split.clusters(0).weight().value(), 9u);
  EXPECT_EQ(split.clusters(1).name(), "outbound|7001||books-v2.local");
  EXPECT_EQ(split.clusters(1).weight().value(), 1u);
  EXPECT_EQ(split.total_weight().value(), 10u);
  EXPECT_EQ(Millis(action.timeout()), 1500);
  EXPECT_EQ(Millis(action.max_stream_duration().max_stream_duration()), 1500);
  EXPECT_EQ(action.retry_policy().retry_on(), "unavailable,deadline-exceeded");
  EXPECT_EQ(action.retry_policy().num_retries().value(), 4u);

  // Canary: its own backends, retries on "unavailable", no timeout.
  const route::Route& canary = host.routes(1);
  EXPECT_EQ(canary.match().safe_regex().regex(), "^/books.Library/.*$");
  EXPECT_EQ(canary.match().headers_size(), 0);
  ASSERT_TRUE(canary.route().has_weighted_clusters());
  ASSERT_EQ(canary.route().weighted_clusters().clusters_size(), 1);
  EXPECT_EQ(canary.route().weighted_clusters().clusters(0).name(),
            "outbound|7001||books-canary.local");
  EXPECT_EQ(canary.route().weighted_clusters().total_weight().value(), 1u);
  EXPECT_FALSE(canary.route().has_timeout());
  EXPECT_FALSE(canary.route().has_max_stream_duration());
  EXPECT_EQ(canary.route().retry_policy().retry_on(), "unavailable");
  EXPECT_EQ(canary.route().retry_policy().num_retries().value(), 2u);

  // The default: every path, the profile's split, no retries.
  const route::Route& fallback = host.routes(2);
  EXPECT_EQ(fallback.match().prefix(), "/");
  EXPECT_EQ(fallback.route().weighted_clusters().total_weight().value(), 10u);
  EXPECT_FALSE(fallback.route().has_retry_policy());

  // No profile: only the default route, to the target's own cluster.
  route::RouteConfiguration plain = Resource<route::RouteConfiguration>(
      set, XdsType::kRoute, "outbound|9090||reviews.local");
  ASSERT_EQ(plain.virtual_hosts_size(), 1);
  ASSERT_EQ(plain.virtual_hosts(0).routes_size(), 1);
  EXPECT_EQ(plain.virtual_hosts(0).routes(0).match().prefix(), "/");
  EXPECT_EQ(plain.virtual_hosts(0).routes(0).route().cluster(),
            "outbound|9090||reviews.local");
}

TEST(XdsResourcesTest, AMethodOtherThanPostLeavesTheRouteOut) {
  Config config;
  ProfileSpec& profile = config.targets["a.local:80"].profile.emplace();
  RouteSpec get;
  get.name = "get";
  get.method = "GET";
  RouteSpec post;
  post.name = "post";
  post.method = "POST";
  profile.routes = {get, post};
  XdsResourceSet set = BuildXdsResources(config);
  route::RouteConfiguration rc = Resource<route::RouteConfiguration>(
      set, XdsType::kRoute, "outbound|80||a.local");
  ASSERT_EQ(rc.virtual_hosts(0).routes_size(), 2);
  const route::Route& kept = rc.virtual_hosts(0).routes(0);
  EXPECT_EQ(kept.name(), "post");
  EXPECT_EQ(kept.match().prefix(), "/");  // no path_regex: every path
  EXPECT_EQ(kept.match().headers_size(), 0);
  EXPECT_EQ(kept.route().cluster(), "outbound|80||a.local");
}

TEST(XdsResourcesTest, ClusterIsEdsOverAds) {
  XdsResourceSet set = BuildXdsResources(BooksConfig());
  Cluster cluster =
      Resource<Cluster>(set, XdsType::kCluster, "outbound|7001||books.local");
  EXPECT_EQ(cluster.name(), "outbound|7001||books.local");
  EXPECT_EQ(cluster.type(), Cluster::EDS);
  EXPECT_TRUE(cluster.eds_cluster_config().eds_config().has_ads());
  EXPECT_EQ(cluster.eds_cluster_config().eds_config().resource_api_version(),
            core::V3);
  EXPECT_EQ(cluster.eds_cluster_config().service_name(),
            "outbound|7001||books.local");
  EXPECT_EQ(cluster.lb_policy(), Cluster::ROUND_ROBIN);
}

TEST(XdsResourcesTest, TargetsWithoutIdentitiesHavePlaintextClusters) {
  XdsResourceSet set = BuildXdsResources(BooksConfig());
  for (const auto& [name, any] : set[XdsType::kCluster]) {
    EXPECT_FALSE(Unpack<Cluster>(any).has_transport_socket()) << name;
  }
}

// The SAN matchers of a cluster's TLS context, in order.
std::vector<std::string> ExactSans(const tls::UpstreamTlsContext& context) {
  std::vector<std::string> sans;
  for (const auto& m : context.common_tls_context()
                           .combined_validation_context()
                           .default_validation_context()
                           .match_subject_alt_names()) {
    EXPECT_EQ(m.match_pattern_case(), m.kExact);
    EXPECT_FALSE(m.ignore_case());
    sans.push_back(m.exact());
  }
  return sans;
}

tls::UpstreamTlsContext TlsContextOf(const XdsResourceSet& set,
                                     const std::string& cluster_name) {
  Cluster cluster = Resource<Cluster>(set, XdsType::kCluster, cluster_name);
  EXPECT_TRUE(cluster.has_transport_socket()) << cluster_name;
  EXPECT_EQ(cluster.transport_socket().name(), "envoy.transport_sockets.tls");
  EXPECT_EQ(cluster.transport_socket().typed_config().type_url(),
            "type.googleapis.com/"
            "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext");
  return Unpack<tls::UpstreamTlsContext>(
      cluster.transport_socket().typed_config());
}

TEST(XdsResourcesTest, IdentitiesMakeAnUpstreamTlsContextAsIstiodSendsIt) {
  Config config = BooksConfig();
  // Two identities, one of them twice, and an endpoint without one.
  config.targets["secure.local:8443"].endpoints = {
      WithIdentity("10.0.3.1:8443", "spiffe://cluster.local/ns/x/sa/y"),
      WithIdentity("10.0.3.2:8443", "secure.x.svc.cluster.local"),
      WithIdentity("10.0.3.3:8443", "spiffe://cluster.local/ns/x/sa/y"),
      Endpoint("10.0.3.4:8443")};
  XdsResourceSet set = BuildXdsResources(config);
  tls::UpstreamTlsContext context =
      TlsContextOf(set, "outbound|8443||secure.local");
  const tls::CommonTlsContext& common = context.common_tls_context();
  EXPECT_EQ(common.tls_certificate_provider_instance().instance_name(),
            "default");
  EXPECT_EQ(common.tls_certificate_provider_instance().certificate_name(),
            "default");
  ASSERT_EQ(common.validation_context_type_case(),
            tls::CommonTlsContext::kCombinedValidationContext);
  const tls::CertificateValidationContext& validation =
      common.combined_validation_context().default_validation_context();
  EXPECT_EQ(validation.ca_certificate_provider_instance().instance_name(),
            "default");
  EXPECT_EQ(validation.ca_certificate_provider_instance().certificate_name(),
            "ROOTCA");
  // One exact matcher per distinct identity, sorted.
  EXPECT_THAT(ExactSans(context),
              ElementsAre("secure.x.svc.cluster.local",
                          "spiffe://cluster.local/ns/x/sa/y"));
  // Nothing else: no SNI, no inline certificates, none of the deprecated
  // provider fields, no typed SAN matchers.
  EXPECT_EQ(context.sni(), "");
  EXPECT_EQ(common.tls_certificates_size(), 0);
  EXPECT_FALSE(common.has_tls_certificate_certificate_provider_instance());
  EXPECT_FALSE(common.combined_validation_context()
                   .has_validation_context_certificate_provider_instance());
  EXPECT_EQ(validation.match_typed_subject_alt_names_size(), 0);
  EXPECT_FALSE(validation.has_trusted_ca());
  // The cluster is otherwise the plaintext one, and the target's endpoints
  // are unchanged by their identities.
  Cluster cluster =
      Resource<Cluster>(set, XdsType::kCluster, "outbound|8443||secure.local");
  EXPECT_EQ(cluster.type(), Cluster::EDS);
  EXPECT_EQ(cluster.lb_policy(), Cluster::ROUND_ROBIN);
  EXPECT_EQ(Resource<ClusterLoadAssignment>(set, XdsType::kEndpoints,
                                            "outbound|8443||secure.local")
                .endpoints(0)
                .lb_endpoints_size(),
            4);
  // The other targets keep their plaintext clusters.
  EXPECT_FALSE(
      Resource<Cluster>(set, XdsType::kCluster, "outbound|7001||books.local")
          .has_transport_socket());
}

TEST(XdsResourcesTest, TheConfigNamesTheCertificateProviderInstance) {
  Config config;
  config.xds_certificate_provider = "spiffe-certs";
  config.targets["a.local:80"].endpoints = {
      WithIdentity("10.0.0.1:80", "a.local")};
  tls::UpstreamTlsContext context =
      TlsContextOf(BuildXdsResources(config), "outbound|80||a.local");
  EXPECT_EQ(context.common_tls_context()
                .tls_certificate_provider_instance()
                .instance_name(),
            "spiffe-certs");
  EXPECT_EQ(context.common_tls_context()
                .combined_validation_context()
                .default_validation_context()
                .ca_certificate_provider_instance()
                .instance_name(),
            "spiffe-certs");
  EXPECT_THAT(ExactSans(context), ElementsAre("a.local"));
}

TEST(XdsResourcesTest, TheTlsContextDoesNotDependOnTheEndpointsOrder) {
  Config one;
  one.targets["a.local:80"].endpoints = {WithIdentity("10.0.0.1:80", "z.id"),
                                         WithIdentity("10.0.0.2:80", "a.id")};
  Config other;
  other.targets["a.local:80"].endpoints = {WithIdentity("10.0.0.2:80", "a.id"),
                                           WithIdentity("10.0.0.1:80", "z.id")};
  const std::string cluster = "outbound|80||a.local";
  EXPECT_EQ(
      BuildXdsResources(one)[XdsType::kCluster].at(cluster).SerializeAsString(),
      BuildXdsResources(other)[XdsType::kCluster]
          .at(cluster)
          .SerializeAsString());
}

TEST(XdsResourcesTest, LoadAssignmentHasALocalityPerZone) {
  XdsResourceSet set = BuildXdsResources(BooksConfig());
  ClusterLoadAssignment cla = Resource<ClusterLoadAssignment>(
      set, XdsType::kEndpoints, "outbound|7001||books.local");
  EXPECT_EQ(cla.cluster_name(), "outbound|7001||books.local");
  ASSERT_EQ(cla.endpoints_size(), 2);
  const auto& a = cla.endpoints(0);
  const auto& b = cla.endpoints(1);
  EXPECT_EQ(a.locality().zone(), "zone-a");
  EXPECT_EQ(b.locality().zone(), "zone-b");
  // An unhealthy endpoint's weight counts: the client judges it.
  EXPECT_EQ(a.load_balancing_weight().value(), 2u + 3u);
  EXPECT_EQ(b.load_balancing_weight().value(), 5u + 7u);
  ASSERT_EQ(a.lb_endpoints_size(), 2);
  ASSERT_EQ(b.lb_endpoints_size(), 2);
  const auto& a0 = a.lb_endpoints(0);
  EXPECT_EQ(a0.endpoint().address().socket_address().address(), "10.0.0.1");
  EXPECT_EQ(a0.endpoint().address().socket_address().port_value(), 7001u);
  EXPECT_EQ(a0.health_status(), core::HEALTHY);
  EXPECT_EQ(a0.load_balancing_weight().value(), 2u);
  const auto& a1 = a.lb_endpoints(1);
  EXPECT_EQ(a1.endpoint().address().socket_address().address(), "10.0.0.2");
  EXPECT_EQ(a1.health_status(), core::UNHEALTHY);
  EXPECT_EQ(a1.load_balancing_weight().value(), 3u);
  const auto& v6 = b.lb_endpoints(1);
  EXPECT_EQ(v6.endpoint().address().socket_address().address(), "::1");
  EXPECT_EQ(v6.endpoint().address().socket_address().port_value(), 7002u);
  EXPECT_EQ(v6.health_status(), core::HEALTHY);
  EXPECT_EQ(v6.load_balancing_weight().value(), 7u);

  // No zone: one locality, zone "" (gRPC requires one).
  ClusterLoadAssignment plain = Resource<ClusterLoadAssignment>(
      set, XdsType::kEndpoints, "outbound|9090||reviews.local");
  ASSERT_EQ(plain.endpoints_size(), 1);
  EXPECT_TRUE(plain.endpoints(0).has_locality());
  EXPECT_EQ(plain.endpoints(0).locality().zone(), "");
  EXPECT_EQ(plain.endpoints(0).load_balancing_weight().value(), 1u);

  // No endpoints: no locality.
  EXPECT_EQ(LoadAssignmentFor("empty.local:80", {}).endpoints_size(), 0);
}

TEST(XdsResourcesTest, WeightsOverflowing32BitsAreScaledDown) {
  constexpr uint32_t kBig = 1u << 30;  // the largest weight a file may set
  Config config;
  TargetSpec& t = config.targets["big.local:80"];
  ProfileSpec& profile = t.profile.emplace();
  for (int i = 0; i < 5; ++i) {
    profile.dst_overrides.emplace_back("b" + std::to_string(i) + ".local:80",
                                       kBig);
    t.endpoints.push_back(
        Endpoint("10.0.0." + std::to_string(i + 1) + ":80", kBig));
  }
  t.endpoints.push_back(Endpoint("10.0.1.1:80", 1, "small"));
  // The same authority twice adds up; a zero weight is left out.
  RouteSpec r;
  r.name = "r";
  r.dst_overrides = {{"x.local:80", kBig}, {"x.local:80", kBig},
                     {"x.local:80", kBig}, {"x.local:80", kBig},
                     {"y.local:80", 1},    {"z.local:80", 0}};
  profile.routes = {r};
  XdsResourceSet set = BuildXdsResources(config);

  route::RouteConfiguration rc = Resource<route::RouteConfiguration>(
      set, XdsType::kRoute, "outbound|80||big.local");
  ASSERT_EQ(rc.virtual_hosts(0).routes_size(), 2);
  for (const route::Route& route : rc.virtual_hosts(0).routes()) {
    const route::WeightedCluster& split = route.route().weighted_clusters();
    ASSERT_GT(split.clusters_size(), 0) << route.name();
    uint64_t sum = 0;
    for (const auto& c : split.clusters()) {
      EXPECT_GE(c.weight().value(), 1u) << route.name() << " " << c.name();
      sum += c.weight().value();
    }
    EXPECT_LE(sum, kMaxUint32) << route.name();
    EXPECT_EQ(split.total_weight().value(), sum) << route.name();
  }
  const route::WeightedCluster& own =
      rc.virtual_hosts(0).routes(0).route().weighted_clusters();
  ASSERT_EQ(own.clusters_size(), 2);  // x and y; z's zero left out
  EXPECT_EQ(own.clusters(0).name(), "outbound|80||x.local");
  EXPECT_EQ(own.clusters(1).name(), "outbound|80||y.local");
  EXPECT_GT(own.clusters(0).weight().value(), 1u << 30);
  const route::WeightedCluster& even =
      rc.virtual_hosts(0).routes(1).route().weighted_clusters();
  ASSERT_EQ(even.clusters_size(), 5);
  for (const auto& c : even.clusters())
    EXPECT_EQ(c.weight().value(), even.clusters(0).weight().value());

  ClusterLoadAssignment cla = Resource<ClusterLoadAssignment>(
      set, XdsType::kEndpoints, "outbound|80||big.local");
  ASSERT_EQ(cla.endpoints_size(), 2);
  uint64_t localities = 0;
  for (const auto& locality : cla.endpoints()) {
    EXPECT_GE(locality.load_balancing_weight().value(), 1u);
    localities += locality.load_balancing_weight().value();
    uint64_t endpoints = 0;
    for (const auto& e : locality.lb_endpoints()) {
      EXPECT_GE(e.load_balancing_weight().value(), 1u);
      endpoints += e.load_balancing_weight().value();
    }
    EXPECT_LE(endpoints, kMaxUint32) << locality.locality().zone();
  }
  EXPECT_LE(localities, kMaxUint32);
  // The five big endpoints keep equal weights.
  const auto& big = cla.endpoints(0);
  ASSERT_EQ(big.lb_endpoints_size(), 5);
  for (const auto& e : big.lb_endpoints()) {
    EXPECT_EQ(e.load_balancing_weight().value(),
              big.lb_endpoints(0).load_balancing_weight().value());
  }
}

TEST(XdsResourcesTest, AllZeroDstOverridesUseTheTargetsOwnCluster) {
  Config config;
  ProfileSpec& profile = config.targets["a.local:80"].profile.emplace();
  profile.dst_overrides = {{"b.local:80", 0}, {"c.local:80", 0}};
  RouteSpec r;
  r.name = "r";
  r.dst_overrides = {{"d.local:80", 0}};
  profile.routes = {r};
  XdsResourceSet set = BuildXdsResources(config);
  route::RouteConfiguration rc = Resource<route::RouteConfiguration>(
      set, XdsType::kRoute, "outbound|80||a.local");
  ASSERT_EQ(rc.virtual_hosts(0).routes_size(), 2);
  for (const route::Route& route : rc.virtual_hosts(0).routes()) {
    EXPECT_FALSE(route.route().has_weighted_clusters()) << route.name();
    EXPECT_EQ(route.route().cluster(), "outbound|80||a.local") << route.name();
  }
}

// --- the catalog ----------------------------------------------------------

Config TwoTargets() {
  Config config;
  config.targets["a.local:80"].endpoints = {Endpoint("10.0.0.1:80")};
  config.targets["b.local:80"].endpoints = {Endpoint("10.0.0.2:80")};
  return config;
}

std::shared_ptr<const XdsCatalog> First(const Config& config) {
  return XdsCatalog::Next(nullptr, BuildXdsResources(config));
}

std::shared_ptr<const XdsCatalog> Then(const XdsCatalog& previous,
                                       const Config& config) {
  return XdsCatalog::Next(&previous, BuildXdsResources(config));
}

int64_t VersionOf(const XdsCatalog& catalog, XdsType type,
                  const std::string& name) {
  auto it = catalog.resources(type).find(name);
  return it == catalog.resources(type).end() ? -1 : it->second.version;
}

TEST(XdsCatalogTest, FirstCatalogIsVersionOneEverywhere) {
  auto catalog = First(TwoTargets());
  for (XdsType t : kAllXdsTypes) {
    EXPECT_EQ(catalog->version(t), 1) << ShortName(t);
    ASSERT_EQ(catalog->resources(t).size(), 2u) << ShortName(t);
    for (const auto& [name, r] : catalog->resources(t)) {
      EXPECT_EQ(r.version, 1) << name;
      EXPECT_EQ(r.resource.type_url(), TypeUrl(t));
    }
  }
  // An empty config: every type at 1, nothing in it.
  auto empty = First(Config());
  for (XdsType t : kAllXdsTypes) {
    EXPECT_EQ(empty->version(t), 1);
    EXPECT_THAT(empty->resources(t), IsEmpty());
  }
}

TEST(XdsCatalogTest, AnIdenticalRebuildKeepsEveryVersion) {
  auto first = First(TwoTargets());
  auto second = Then(*first, TwoTargets());
  auto third = Then(*second, TwoTargets());
  for (XdsType t : kAllXdsTypes) {
    EXPECT_EQ(third->version(t), 1) << ShortName(t);
    for (const auto& [name, r] : third->resources(t)) EXPECT_EQ(r.version, 1);
  }
}

TEST(XdsCatalogTest, ChangedEndpointsBumpOnlyEdsAndOnlyThatResource) {
  auto first = First(TwoTargets());
  Config edited = TwoTargets();
  edited.targets["b.local:80"].endpoints[0].healthy = false;
  auto second = Then(*first, edited);
  EXPECT_EQ(second->version(XdsType::kListener), 1);
  EXPECT_EQ(second->version(XdsType::kRoute), 1);
  EXPECT_EQ(second->version(XdsType::kCluster), 1);
  EXPECT_EQ(second->version(XdsType::kEndpoints), 2);
  EXPECT_EQ(VersionOf(*second, XdsType::kEndpoints, "outbound|80||a.local"), 1);
  EXPECT_EQ(VersionOf(*second, XdsType::kEndpoints, "outbound|80||b.local"), 2);
  // The next edit of a: version 3 for it, b keeps 2.
  edited.targets["a.local:80"].endpoints[0].weight = 4;
  auto third = Then(*second, edited);
  EXPECT_EQ(third->version(XdsType::kEndpoints), 3);
  EXPECT_EQ(VersionOf(*third, XdsType::kEndpoints, "outbound|80||a.local"), 3);
  EXPECT_EQ(VersionOf(*third, XdsType::kEndpoints, "outbound|80||b.local"), 2);
  EXPECT_EQ(third->version(XdsType::kListener), 1);
}

TEST(XdsCatalogTest, AChangedIdentityBumpsOnlyCdsAndOnlyThatCluster) {
  auto first = First(TwoTargets());
  Config edited = TwoTargets();
  edited.targets["b.local:80"].endpoints[0].tls_identity = "b.local";
  auto second = Then(*first, edited);
  EXPECT_EQ(second->version(XdsType::kListener), 1);
  EXPECT_EQ(second->version(XdsType::kRoute), 1);
  EXPECT_EQ(second->version(XdsType::kCluster), 2);
  EXPECT_EQ(second->version(XdsType::kEndpoints), 1);
  EXPECT_EQ(VersionOf(*second, XdsType::kCluster, "outbound|80||a.local"), 1);
  EXPECT_EQ(VersionOf(*second, XdsType::kCluster, "outbound|80||b.local"), 2);
  // Another provider instance changes only the clusters with TLS.
  edited.xds_certificate_provider = "other";
  auto third = Then(*second, edited);
  EXPECT_EQ(third->version(XdsType::kCluster), 3);
  EXPECT_EQ(VersionOf(*third, XdsType::kCluster, "outbound|80||a.local"), 1);
  EXPECT_EQ(VersionOf(*third, XdsType::kCluster, "outbound|80||b.local"), 3);
}

TEST(XdsCatalogTest, AChangedProfileBumpsOnlyRds) {
  auto first = First(TwoTargets());
  Config edited = TwoTargets();
  edited.targets["a.local:80"].profile.emplace().dst_overrides = {
      {"b.local:80", 1}};
  auto second = Then(*first, edited);
  EXPECT_EQ(second->version(XdsType::kListener), 1);
  EXPECT_EQ(second->version(XdsType::kRoute), 2);
  EXPECT_EQ(second->version(XdsType::kCluster), 1);
  EXPECT_EQ(second->version(XdsType::kEndpoints), 1);
  EXPECT_EQ(VersionOf(*second, XdsType::kRoute, "outbound|80||a.local"), 2);
  EXPECT_EQ(VersionOf(*second, XdsType::kRoute, "outbound|80||b.local"), 1);
}

TEST(XdsCatalogTest, RemovingATargetBumpsEveryType) {
  auto first = First(TwoTargets());
  Config fewer = TwoTargets();
  fewer.targets.erase("b.local:80");
  auto second = Then(*first, fewer);
  for (XdsType t : kAllXdsTypes) {
    EXPECT_EQ(second->version(t), 2) << ShortName(t);
    EXPECT_EQ(second->resources(t).size(), 1u) << ShortName(t);
  }
  EXPECT_EQ(VersionOf(*second, XdsType::kListener, "a.local:80"), 1);
  EXPECT_EQ(VersionOf(*second, XdsType::kCluster, "outbound|80||a.local"), 1);
  // Back again, with the same content: new versions all the same.
  auto third = Then(*second, TwoTargets());
  for (XdsType t : kAllXdsTypes) EXPECT_EQ(third->version(t), 3);
  EXPECT_EQ(VersionOf(*third, XdsType::kListener, "b.local:80"), 3);
  EXPECT_EQ(VersionOf(*third, XdsType::kListener, "a.local:80"), 1);
}

TEST(XdsCatalogTest, AddingATargetBumpsEveryTypeForItsResourcesOnly) {
  auto first = First(TwoTargets());
  Config more = TwoTargets();
  more.targets["c.local:80"].endpoints = {Endpoint("10.0.0.3:80")};
  auto second = Then(*first, more);
  for (XdsType t : kAllXdsTypes) {
    EXPECT_EQ(second->version(t), 2) << ShortName(t);
    EXPECT_EQ(second->resources(t).size(), 3u);
  }
  EXPECT_EQ(VersionOf(*second, XdsType::kListener, "c.local:80"), 2);
  EXPECT_EQ(VersionOf(*second, XdsType::kRoute, "outbound|80||c.local"), 2);
  EXPECT_EQ(VersionOf(*second, XdsType::kRoute, "outbound|80||a.local"), 1);
  EXPECT_EQ(VersionOf(*second, XdsType::kEndpoints, "outbound|80||b.local"), 1);
}

TEST(XdsCatalogTest, ReplacingATargetByAnotherBumpsEveryType) {
  auto first = First(TwoTargets());
  Config swapped = TwoTargets();
  swapped.targets.erase("b.local:80");
  swapped.targets["c.local:80"].endpoints = {Endpoint("10.0.0.2:80")};
  auto second = Then(*first, swapped);  // as many resources as before
  for (XdsType t : kAllXdsTypes) {
    EXPECT_EQ(second->version(t), 2) << ShortName(t);
  }
  EXPECT_EQ(VersionOf(*second, XdsType::kListener, "b.local:80"), -1);
  EXPECT_EQ(VersionOf(*second, XdsType::kListener, "c.local:80"), 2);
}

// --- one ADS stream ---------------------------------------------------------

DiscoveryRequest Request(XdsType type, std::vector<std::string> names,
                         const std::string& version = "",
                         const std::string& nonce = "") {
  DiscoveryRequest r;
  r.set_type_url(TypeUrl(type));
  for (std::string& name : names) r.add_resource_names(std::move(name));
  r.set_version_info(version);
  r.set_response_nonce(nonce);
  return r;
}

// The ACK of `response`, for `names`.
DiscoveryRequest Ack(const AdsResponse& response,
                     std::vector<std::string> names) {
  std::optional<XdsType> type = TypeOfUrl(response.message.type_url());
  EXPECT_TRUE(type.has_value());
  return Request(type.value_or(XdsType::kListener), std::move(names),
                 response.message.version_info(), response.message.nonce());
}

DiscoveryRequest Nack(const AdsResponse& response,
                      std::vector<std::string> names,
                      const std::string& previous_version,
                      const std::string& error) {
  DiscoveryRequest r = Ack(response, std::move(names));
  r.set_version_info(previous_version);
  r.mutable_error_detail()->set_code(3);
  r.mutable_error_detail()->set_message(error);
  return r;
}

std::vector<std::string> NamesIn(const DiscoveryResponse& response) {
  std::vector<std::string> names;
  for (const google::protobuf::Any& any : response.resources()) {
    if (any.type_url() == TypeUrl(XdsType::kListener)) {
      names.push_back(Unpack<Listener>(any).name());
    } else if (any.type_url() == TypeUrl(XdsType::kRoute)) {
      names.push_back(Unpack<route::RouteConfiguration>(any).name());
    } else if (any.type_url() == TypeUrl(XdsType::kCluster)) {
      names.push_back(Unpack<Cluster>(any).name());
    } else {
      names.push_back(Unpack<ClusterLoadAssignment>(any).cluster_name());
    }
  }
  return names;
}

// No control byte, no DEL: a line a terminal shows as is.
bool Printable(const std::string& text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

const std::string kA = "a.local:80";
const std::string kB = "b.local:80";
const std::string kClusterA = "outbound|80||a.local";
const std::string kClusterB = "outbound|80||b.local";

TEST(AdsStreamTest, AFirstLdsRequestIsAnsweredWithTheListener) {
  auto catalog = First(TwoTargets());
  AdsStream stream(7);
  EXPECT_EQ(stream.id(), 7);
  AdsRequestOutcome o = stream.OnRequest(Request(XdsType::kListener, {kA}));
  EXPECT_EQ(o.kind, Kind::kSubscribe);
  EXPECT_EQ(o.type, XdsType::kListener);
  EXPECT_FALSE(o.first_node);
  EXPECT_THAT(o.description, HasSubstr("LDS"));
  EXPECT_THAT(o.description, HasSubstr(kA));
  std::vector<AdsResponse> r = stream.Responses(*catalog);
  ASSERT_EQ(r.size(), 1u);
  const DiscoveryResponse& m = r[0].message;
  EXPECT_EQ(m.type_url(), TypeUrl(XdsType::kListener));
  EXPECT_EQ(m.version_info(), "1");
  EXPECT_EQ(m.nonce(), "1");
  EXPECT_EQ(m.control_plane().identifier(), "mesh-control-plane");
  EXPECT_THAT(NamesIn(m), ElementsAre(kA));
  EXPECT_THAT(r[0].names, ElementsAre(kA));
  EXPECT_THAT(r[0].Describe(), HasSubstr("LDS"));
  EXPECT_THAT(r[0].Describe(), HasSubstr("nonce=\"1\""));

  // The ACK owes nothing; neither does the same catalog again.
  o = stream.OnRequest(Ack(r[0], {kA}));
  EXPECT_EQ(o.kind, Kind::kAck);
  EXPECT_THAT(o.description, HasSubstr("ACK"));
  EXPECT_THAT(stream.Responses(*catalog), IsEmpty());
  EXPECT_THAT(stream.Responses(*Then(*catalog, TwoTargets())), IsEmpty());
}

TEST(AdsStreamTest, EachTypeHasItsOwnVersionAndEveryResponseANewNonce) {
  auto first = First(TwoTargets());
  Config edited = TwoTargets();
  edited.targets[kA].endpoints[0].weight = 2;
  auto catalog = Then(*first, edited);  // EDS at 2, the rest at 1
  AdsStream stream(1);
  // All four in one go: one response each, make before break (clusters and
  // endpoints before the listeners and routes that name them).
  stream.OnRequest(Request(XdsType::kEndpoints, {kClusterA}));
  stream.OnRequest(Request(XdsType::kCluster, {kClusterA}));
  stream.OnRequest(Request(XdsType::kListener, {kA}));
  stream.OnRequest(Request(XdsType::kRoute, {kClusterA}));
  std::vector<AdsResponse> r = stream.Responses(*catalog);
  ASSERT_EQ(r.size(), 4u);
  std::vector<std::string> nonces;
  const XdsType order[] = {XdsType::kCluster, XdsType::kEndpoints,
                           XdsType::kListener, XdsType::kRoute};
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].message.type_url(), TypeUrl(order[i]));
    EXPECT_EQ(r[i].message.version_info(),
              std::to_string(catalog->version(order[i])));
    EXPECT_EQ(r[i].message.resources_size(), 1);
    nonces.push_back(r[i].message.nonce());
  }
  EXPECT_THAT(nonces, ElementsAre("1", "2", "3", "4"));
  EXPECT_EQ(r[1].message.version_info(), "2");  // EDS
  // A response to one type's stale nonce is not one to another's.
  AdsRequestOutcome o =
      stream.OnRequest(Request(XdsType::kRoute, {kClusterA}, "1", "1"));
  EXPECT_EQ(o.kind, Kind::kStale);
}

TEST(AdsStreamTest, ANamedLdsSubscriptionIgnoresOtherTargets) {
  auto first = First(TwoTargets());
  AdsStream stream(1);
  stream.OnRequest(Request(XdsType::kListener, {kA}));
  std::vector<AdsResponse> r = stream.Responses(*first);
  ASSERT_EQ(r.size(), 1u);
  stream.OnRequest(Ack(r[0], {kA}));
  Config more = TwoTargets();
  more.targets["c.local:80"].endpoints = {Endpoint("10.0.0.3:80")};
  auto second = Then(*first, more);
  ASSERT_EQ(second->version(XdsType::kListener), 2);
  EXPECT_THAT(stream.Responses(*second), IsEmpty());
  // a's listener gone: the full set, now empty, says it was deleted.
  Config without_a = more;
  without_a.targets.erase(kA);
  auto third = Then(*second, without_a);
  r = stream.Responses(*third);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].message.version_info(), "3");
  EXPECT_EQ(r[0].message.resources_size(), 0);
}

TEST(AdsStreamTest, AWildcardLdsSubscriptionGetsTheFullSetAgain) {
  for (const std::vector<std::string>& names :
       {std::vector<std::string>{}, std::vector<std::string>{"*"}}) {
    SCOPED_TRACE(names.empty() ? "no names" : "\"*\"");
    auto first = First(TwoTargets());
    AdsStream stream(1);
    stream.OnRequest(Request(XdsType::kListener, names));
    std::vector<AdsResponse> r = stream.Responses(*first);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_THAT(NamesIn(r[0].message), ElementsAre(kA, kB));
    stream.OnRequest(Ack(r[0], names));
    EXPECT_THAT(stream.Responses(*first), IsEmpty());
    Config more = TwoTargets();
    more.targets["c.local:80"].endpoints = {Endpoint("10.0.0.3:80")};
    auto second = Then(*first, more);
    r = stream.Responses(*second);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].message.version_info(), "2");
    EXPECT_THAT(NamesIn(r[0].message), ElementsAre(kA, kB, "c.local:80"));
  }
}

TEST(AdsStreamTest, CdsSendsTheWholeSetAskedForWhenAnyOfItChanges) {
  auto first = First(TwoTargets());
  AdsStream stream(1);
  stream.OnRequest(Request(XdsType::kCluster, {kClusterA, kClusterB}));
  std::vector<AdsResponse> r = stream.Responses(*first);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_THAT(NamesIn(r[0].message), ElementsAre(kClusterA, kClusterB));
  stream.OnRequest(Ack(r[0], {kClusterA, kClusterB}));
  // Asking for fewer: the smaller set at once.
  stream.OnRequest(Request(XdsType::kCluster, {kClusterB},
                           r[0].message.version_info(), r[0].message.nonce()));
  r = stream.Responses(*first);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_THAT(NamesIn(r[0].message), ElementsAre(kClusterB));
}

TEST(AdsStreamTest, RdsAndEdsSendOnlyTheChangedResourcesAskedFor) {
  auto first = First(TwoTargets());
  AdsStream stream(1);
  for (XdsType t : {XdsType::kRoute, XdsType::kEndpoints})
    stream.OnRequest(Request(t, {kClusterA, kClusterB}));
  std::vector<AdsResponse> r = stream.Responses(*first);
  ASSERT_EQ(r.size(), 2u);
  const AdsResponse rds = r[1];  // EDS goes first (make before break)
  ASSERT_EQ(rds.message.type_url(), TypeUrl(XdsType::kRoute));
  for (const AdsResponse& response : r) {
    EXPECT_THAT(NamesIn(response.message), ElementsAre(kClusterA, kClusterB));
    stream.OnRequest(Ack(response, {kClusterA, kClusterB}));
  }
  // b's endpoints change: one EDS response, b only.
  Config edited = TwoTargets();
  edited.targets[kB].endpoints.push_back(Endpoint("10.0.0.9:80"));
  auto second = Then(*first, edited);
  r = stream.Responses(*second);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].message.type_url(), TypeUrl(XdsType::kEndpoints));
  EXPECT_EQ(r[0].message.version_info(), "2");
  EXPECT_THAT(NamesIn(r[0].message), ElementsAre(kClusterB));
  stream.OnRequest(Ack(r[0], {kClusterA, kClusterB}));
  EXPECT_THAT(stream.Responses(*second), IsEmpty());

  // A resource nobody asked for changes: nothing.
  Config more = edited;
  more.targets["c.local:80"].endpoints = {Endpoint("10.0.0.3:80")};
  auto third = Then(*second, more);
  EXPECT_THAT(stream.Responses(*third), IsEmpty());
  // A name asked for that does not exist: nothing either (RDS and EDS
  // never say a resource is absent).
  EXPECT_EQ(stream.OnRequest(Ack(rds, {kClusterA, "outbound|1||nope"})).kind,
            Kind::kAck);
  EXPECT_THAT(stream.Responses(*third), IsEmpty());
}

TEST(AdsStreamTest, ANameAskedForAgainIsSentAgain) {
  auto catalog = First(TwoTargets());
  AdsStream stream(1);
  stream.OnRequest(Request(XdsType::kEndpoints, {kClusterA, kClusterB}));
  std::vector<AdsResponse> r = stream.Responses(*catalog);
  ASSERT_EQ(r.size(), 1u);
  stream.OnRequest(Ack(r[0], {kClusterA, kClusterB}));
  // Dropped, then asked for again: the same content is sent again.
  stream.OnRequest(Ack(r[0], {kClusterA}));
  EXPECT_THAT(stream.Responses(*catalog), IsEmpty());
  stream.OnRequest(Ack(r[0], {kClusterA, kClusterB}));
  r = stream.Responses(*catalog);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_THAT(NamesIn(r[0].message), ElementsAre(kClusterB));
  EXPECT_EQ(r[0].message.version_info(), "1");
  // Everything dropped and asked for again.
  stream.OnRequest(Ack(r[0], {}));
  EXPECT_THAT(stream.Responses(*catalog), IsEmpty());
  stream.OnRequest(Ack(r[0], {kClusterA, kClusterB}));
  r = stream.Responses(*catalog);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_THAT(NamesIn(r[0].message), ElementsAre(kClusterA, kClusterB));
}

TEST(AdsStreamTest, ANackedVersionIsNotSentAgainUntilItsContentChanges) {
  auto first = First(TwoTargets());
  AdsStream stream(1);
  stream.OnRequest(Request(XdsType::kRoute, {kClusterA}));
  std::vector<AdsResponse> r = stream.Responses(*first);
  ASSERT_EQ(r.size(), 1u);
  AdsRequestOutcome o =
      stream.OnRequest(Nack(r[0], {kClusterA}, "", "regex \"(\" is invalid"));
  EXPECT_EQ(o.kind, Kind::kNack);
  EXPECT_EQ(o.type, XdsType::kRoute);
  EXPECT_EQ(o.error, "regex \"(\" is invalid");
  EXPECT_FALSE(o.repeated);
  // The same NACK again is marked so (the service neither logs nor counts
  // it twice).
  EXPECT_TRUE(
      stream.OnRequest(Nack(r[0], {kClusterA}, "", "regex \"(\" is invalid"))
          .repeated);
  EXPECT_THAT(o.description, HasSubstr("NACK"));
  EXPECT_THAT(o.description, HasSubstr("regex \"(\" is invalid"));
  EXPECT_THAT(o.description, HasSubstr(kClusterA));
  // Not again with the same catalog, nor an identical rebuild.
  EXPECT_THAT(stream.Responses(*first), IsEmpty());
  auto same = Then(*first, TwoTargets());
  EXPECT_THAT(stream.Responses(*same), IsEmpty());
  // Another resource changing does not bring it back either.
  Config b_edited = TwoTargets();
  b_edited.targets[kB].profile.emplace().dst_overrides = {{kA, 1}};
  auto second = Then(*same, b_edited);
  EXPECT_THAT(stream.Responses(*second), IsEmpty());
  // Its own content changing does.
  Config a_edited = b_edited;
  a_edited.targets[kA].profile.emplace().dst_overrides = {{kB, 1}};
  auto third = Then(*second, a_edited);
  r = stream.Responses(*third);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].message.version_info(), "3");
  EXPECT_THAT(NamesIn(r[0].message), ElementsAre(kClusterA));
  o = stream.OnRequest(Ack(r[0], {kClusterA}));
  EXPECT_EQ(o.kind, Kind::kAck);
  EXPECT_TRUE(o.error.empty());
}

TEST(AdsStreamTest, ANackedFullSetIsNotSentAgainUntilItChanges) {
  auto first = First(TwoTargets());
  AdsStream stream(1);
  stream.OnRequest(Request(XdsType::kCluster, {}));
  std::vector<AdsResponse> r = stream.Responses(*first);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(stream.OnRequest(Nack(r[0], {}, "", "no")).kind, Kind::kNack);
  EXPECT_THAT(stream.Responses(*first), IsEmpty());
  Config more = TwoTargets();
  more.targets["c.local:80"];
  r = stream.Responses(*Then(*first, more));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].message.resources_size(), 3);
}

TEST(AdsStreamTest, AStaleNonceIsIgnored) {
  auto first = First(TwoTargets());
  AdsStream stream(1);
  stream.OnRequest(Request(XdsType::kEndpoints, {kClusterA}));
  std::vector<AdsResponse> r1 = stream.Responses(*first);
  ASSERT_EQ(r1.size(), 1u);
  Config edited = TwoTargets();
  edited.targets[kA].endpoints[0].weight = 3;
  auto second = Then(*first, edited);
  // The push crosses the client's ACK of the first response.
  std::vector<AdsResponse> r2 = stream.Responses(*second);
  ASSERT_EQ(r2.size(), 1u);
  EXPECT_NE(r2[0].message.nonce(), r1[0].message.nonce());
  // That ACK, and a NACK of the same old nonce, asking for other names:
  // both stale; the names stay.
  AdsRequestOutcome o = stream.OnRequest(Ack(r1[0], {kClusterA, kClusterB}));
  EXPECT_EQ(o.kind, Kind::kStale);
  EXPECT_THAT(o.description, HasSubstr("stale"));
  o = stream.OnRequest(Nack(r1[0], {kClusterB}, "", "late"));
  EXPECT_EQ(o.kind, Kind::kStale);
  EXPECT_THAT(stream.Responses(*second), IsEmpty());  // b not subscribed
  // A nonce this stream never sent is stale too.
  EXPECT_EQ(stream
                .OnRequest(Request(XdsType::kEndpoints, {kClusterB}, "1",
                                   "no-such-nonce"))
                .kind,
            Kind::kStale);
  EXPECT_THAT(stream.Responses(*second), IsEmpty());
  // The latest nonce counts.
  o = stream.OnRequest(Ack(r2[0], {kClusterA, kClusterB}));
  EXPECT_EQ(o.kind, Kind::kAck);
  std::vector<AdsResponse> r3 = stream.Responses(*second);
  ASSERT_EQ(r3.size(), 1u);
  EXPECT_THAT(NamesIn(r3[0].message), ElementsAre(kClusterB));
}

TEST(AdsStreamTest, AnUnknownTypeIsIgnored) {
  auto catalog = First(TwoTargets());
  AdsStream stream(1);
  DiscoveryRequest secret;
  secret.set_type_url(
      "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret");
  secret.add_resource_names("default");
  AdsRequestOutcome o = stream.OnRequest(secret);
  EXPECT_EQ(o.kind, Kind::kUnknownType);
  EXPECT_FALSE(o.type.has_value());
  EXPECT_THAT(o.description, HasSubstr("tls.v3.Secret"));
  EXPECT_THAT(o.description, HasSubstr("not served"));
  EXPECT_THAT(stream.Responses(*catalog), IsEmpty());
  // The stream still serves what it knows.
  stream.OnRequest(Request(XdsType::kListener, {kA}));
  std::vector<AdsResponse> r = stream.Responses(*catalog);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].message.nonce(), "1");
}

TEST(AdsStreamTest, TheFirstNodeIsKept) {
  AdsStream stream(1);
  EXPECT_EQ(stream.NodeId(), "");
  DiscoveryRequest first = Request(XdsType::kListener, {kA});
  core::Node* node = first.mutable_node();
  node->set_id("sidecar~10.1.2.3~books-0.default~default.svc.cluster.local");
  node->set_cluster("books");
  node->set_user_agent_name("gRPC C-core");
  node->set_user_agent_version("1.51.1");
  (*node->mutable_metadata()->mutable_fields())["GENERATOR"].set_string_value(
      "grpc");
  AdsRequestOutcome o = stream.OnRequest(first);
  EXPECT_TRUE(o.first_node);
  EXPECT_EQ(stream.node().id(), node->id());
  EXPECT_EQ(stream.NodeId(), node->id());
  std::string described = stream.DescribeNode();
  EXPECT_THAT(described, HasSubstr(node->id()));
  EXPECT_THAT(described, HasSubstr("books"));
  EXPECT_THAT(described, HasSubstr("gRPC C-core 1.51.1"));
  EXPECT_THAT(described, HasSubstr(R"({"GENERATOR":"grpc"})"));
  // A later node changes nothing.
  DiscoveryRequest second = Request(XdsType::kCluster, {});
  second.mutable_node()->set_id("someone-else");
  o = stream.OnRequest(second);
  EXPECT_FALSE(o.first_node);
  EXPECT_EQ(stream.NodeId(), node->id());
}

TEST(AdsStreamTest, AFirstRequestWithoutANodeLeavesItToALaterOne) {
  AdsStream stream(1);
  EXPECT_FALSE(stream.OnRequest(Request(XdsType::kListener, {kA})).first_node);
  DiscoveryRequest later = Request(XdsType::kCluster, {});
  later.mutable_node()->set_id("late-node");
  EXPECT_TRUE(stream.OnRequest(later).first_node);
  EXPECT_EQ(stream.NodeId(), "late-node");
}

TEST(AdsStreamTest, AMissingFullSetNameIsAnsweredOnceWithAnEmptyResponse) {
  for (XdsType type : {XdsType::kListener, XdsType::kCluster}) {
    SCOPED_TRACE(ShortName(type));
    auto catalog = First(TwoTargets());
    AdsStream stream(1);
    stream.OnRequest(Request(type, {"nope.local:1"}));
    std::vector<AdsResponse> r = stream.Responses(*catalog);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].message.resources_size(), 0);
    EXPECT_EQ(r[0].message.version_info(), "1");
    EXPECT_THAT(stream.Responses(*catalog), IsEmpty());
    stream.OnRequest(Ack(r[0], {"nope.local:1"}));
    EXPECT_THAT(stream.Responses(*catalog), IsEmpty());
    EXPECT_THAT(stream.Responses(*Then(*catalog, TwoTargets())), IsEmpty());
  }
}

TEST(AdsStreamTest, AMissingNameAddedToAFullSetIsAnsweredAtOnce) {
  for (XdsType type : {XdsType::kListener, XdsType::kCluster}) {
    SCOPED_TRACE(ShortName(type));
    const std::string exists = type == XdsType::kListener ? kA : kClusterA;
    auto catalog = First(TwoTargets());
    AdsStream stream(1);
    stream.OnRequest(Request(type, {exists}));
    std::vector<AdsResponse> r = stream.Responses(*catalog);
    ASSERT_EQ(r.size(), 1u);
    stream.OnRequest(Ack(r[0], {exists}));
    // The set the request selects is the same, but the client asked for
    // more: it learns at once that the new name does not exist.
    stream.OnRequest(Ack(r[0], {exists, "nope.local:1"}));
    r = stream.Responses(*catalog);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].message.resources_size(), 1);
    EXPECT_EQ(r[0].message.version_info(), "1");
    stream.OnRequest(Ack(r[0], {exists, "nope.local:1"}));
    EXPECT_THAT(stream.Responses(*catalog), IsEmpty());
    // A name dropped needs no answer.
    stream.OnRequest(Ack(r[0], {exists}));
    EXPECT_THAT(stream.Responses(*catalog), IsEmpty());
  }
}

TEST(AdsStreamTest, AHostileClientsTextIsLoggedPrintableAndBounded) {
  // Control bytes, an escape sequence, then 10 KB of two-byte characters,
  // one of them across the 512-byte cut. (A string field that is not UTF-8
  // cannot arrive: the request would not parse.)
  std::string hostile = "evil\x01\x1b[31m\n";
  for (int i = 0; i < 5 * 1024; ++i) hostile += "\xc3\xa9";
  AdsStream stream(1);
  DiscoveryRequest request = Request(XdsType::kRoute, {});
  for (int i = 0; i < 20; ++i) request.add_resource_names(hostile);
  request.set_version_info(hostile);
  request.set_response_nonce("");
  core::Node* node = request.mutable_node();
  node->set_id(hostile);
  node->set_cluster(hostile);
  node->set_user_agent_name(hostile);
  (*node->mutable_metadata()->mutable_fields())[hostile].set_string_value(
      hostile);
  AdsRequestOutcome o = stream.OnRequest(request);
  EXPECT_TRUE(Printable(o.description)) << o.description;
  EXPECT_LT(o.description.size(), 32u * 1024);
  EXPECT_THAT(o.description, HasSubstr("evil"));
  EXPECT_THAT(o.description, HasSubstr("more"));  // 20 names, a few shown
  EXPECT_TRUE(Printable(stream.NodeId()));
  EXPECT_LT(stream.NodeId().size(), 4096u);
  EXPECT_THAT(stream.NodeId(), HasSubstr("evil"));
  std::string described = stream.DescribeNode();
  EXPECT_TRUE(Printable(described));
  EXPECT_LT(described.size(), 16u * 1024);

  // A NACK's error, and an unknown type URL, alike.
  auto catalog = First(TwoTargets());
  stream.OnRequest(Request(XdsType::kRoute, {kClusterA}));
  std::vector<AdsResponse> r = stream.Responses(*catalog);
  ASSERT_EQ(r.size(), 1u);
  o = stream.OnRequest(Nack(r[0], {hostile}, hostile, hostile));
  EXPECT_EQ(o.kind, Kind::kNack);
  EXPECT_TRUE(Printable(o.error));
  EXPECT_LT(o.error.size(), 4096u);
  EXPECT_TRUE(Printable(o.description));
  EXPECT_LT(o.description.size(), 16u * 1024);
  DiscoveryRequest unknown;
  unknown.set_type_url(hostile);
  o = stream.OnRequest(unknown);
  EXPECT_EQ(o.kind, Kind::kUnknownType);
  EXPECT_TRUE(Printable(o.description));
  EXPECT_LT(o.description.size(), 8u * 1024);
}

TEST(AdsStreamTest, NoNamesAfterNamedOnesUnsubscribes) {
  auto first = First(TwoTargets());
  AdsStream stream(1);
  stream.OnRequest(Request(XdsType::kCluster, {kClusterA}));
  std::vector<AdsResponse> r = stream.Responses(*first);
  ASSERT_EQ(r.size(), 1u);
  // No names now means none, not all (xDS: the wildcard reading of an
  // empty list holds only before any name was asked for).
  stream.OnRequest(Ack(r[0], {}));
  EXPECT_THAT(stream.Responses(*first), IsEmpty());
  Config more = TwoTargets();
  more.targets["c.local:80"].endpoints = {Endpoint("10.0.0.3:80")};
  auto second = Then(*first, more);
  EXPECT_THAT(stream.Responses(*second), IsEmpty());
  // Asked again: sent again.
  stream.OnRequest(
      Request(XdsType::kCluster, {kClusterA}, "1", r[0].message.nonce()));
  r = stream.Responses(*second);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_THAT(NamesIn(r[0].message), ElementsAre(kClusterA));
}

TEST(AdsStreamTest, TooManyNamesAreRefused) {
  auto first = First(TwoTargets());
  AdsStream stream(1);
  std::vector<std::string> names;
  for (size_t i = 0; i <= AdsStream::kMaxNamesPerRequest; ++i) {
    names.push_back("n" + std::to_string(i));
  }
  AdsRequestOutcome o = stream.OnRequest(Request(XdsType::kEndpoints, names));
  EXPECT_EQ(o.kind, Kind::kTooManyNames);
  EXPECT_THAT(o.description, HasSubstr("more than 10000 names"));
  EXPECT_LT(o.description.size(), 2000u);
  EXPECT_THAT(stream.Responses(*first), IsEmpty());
  names.pop_back();
  EXPECT_EQ(stream.OnRequest(Request(XdsType::kEndpoints, names)).kind,
            Kind::kSubscribe);
}

}  // namespace
}  // namespace mesh::controlplane

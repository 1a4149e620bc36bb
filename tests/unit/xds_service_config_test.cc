// Listener + RouteConfiguration (as plain xDS resources) → ServiceConfig
// (src/discovery/xds/xds_service_config.h): the choice of virtual host by
// domain (gRFC A27/A28, Envoy's VirtualHost.domains), routes with their
// clusters, timeouts and faults, and the clusters a config sends to.
#include "src/discovery/xds/xds_service_config.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/service_config.h"
#include "src/discovery/xds/xds_resources.h"

namespace mesh::internal::xds {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

VirtualHostResource Vhost(std::string name, std::vector<std::string> domains) {
  VirtualHostResource vhost;
  vhost.name = std::move(name);
  vhost.domains = std::move(domains);
  return vhost;
}

RouteConfigResource Config(std::vector<VirtualHostResource> vhosts) {
  RouteConfigResource config;
  config.name = "outbound|7000||echo";
  config.virtual_hosts = std::move(vhosts);
  return config;
}

// The name of the virtual host chosen for `authority`, "" if none.
std::string Chosen(const RouteConfigResource& config,
                   const std::string& authority) {
  const VirtualHostResource* vhost = SelectVirtualHost(config, authority);
  return vhost == nullptr ? "" : vhost->name;
}

WeightedBackend Cluster(std::string name, uint32_t weight = 1) {
  WeightedBackend backend;
  backend.cluster = std::move(name);
  backend.weight = weight;
  return backend;
}

RouteResource RouteTo(std::string name, std::string cluster) {
  RouteResource route;
  route.route.name = std::move(name);
  route.clusters.push_back(Cluster(std::move(cluster)));
  return route;
}

FaultInjection Delay(absl::Duration delay, uint32_t per_million) {
  FaultInjection fault;
  fault.delay = delay;
  fault.delay_per_million = per_million;
  return fault;
}

// A config of one virtual host for every domain, with `routes`.
RouteConfigResource OneVhost(std::vector<RouteResource> routes) {
  VirtualHostResource vhost = Vhost("all", {"*"});
  vhost.routes = std::move(routes);
  return Config({std::move(vhost)});
}

ServiceConfig Build(const ListenerResource& listener,
                    const RouteConfigResource& config) {
  absl::StatusOr<ServiceConfig> got =
      BuildServiceConfig(listener, config, "echo.local:7000");
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? *std::move(got) : ServiceConfig();
}

// --- virtual host choice ----------------------------------------------------

TEST(SelectVirtualHostTest, ExactBeatsSuffixBeatsPrefixBeatsUniverse) {
  VirtualHostResource any = Vhost("any", {"*"});
  VirtualHostResource prefix = Vhost("prefix", {"echo.*"});
  VirtualHostResource suffix = Vhost("suffix", {"*.local:7000"});
  VirtualHostResource exact = Vhost("exact", {"echo.local:7000"});
  EXPECT_EQ(Chosen(Config({any, prefix, suffix, exact}), "echo.local:7000"),
            "exact");
  EXPECT_EQ(Chosen(Config({any, prefix, suffix}), "echo.local:7000"), "suffix");
  EXPECT_EQ(Chosen(Config({any, prefix}), "echo.local:7000"), "prefix");
  EXPECT_EQ(Chosen(Config({any}), "echo.local:7000"), "any");
}

TEST(SelectVirtualHostTest, LongestSuffixWins) {
  RouteConfigResource config = Config({Vhost("short", {"*.local:7000"}),
                                       Vhost("long", {"*.echo.local:7000"}),
                                       Vhost("shortest", {"*:7000"})});
  EXPECT_EQ(Chosen(config, "a.echo.local:7000"), "long");
  EXPECT_EQ(Chosen(config, "a.other.local:7000"), "short");
}

TEST(SelectVirtualHostTest, LongestPrefixWins) {
  RouteConfigResource config =
      Config({Vhost("short", {"echo.*"}), Vhost("long", {"echo.local:*"}),
              Vhost("shortest", {"e*"})});
  EXPECT_EQ(Chosen(config, "echo.local:7000"), "long");
  EXPECT_EQ(Chosen(config, "echo.remote:7000"), "short");
}

TEST(SelectVirtualHostTest, WildcardMatchesAtLeastOneCharacter) {
  RouteConfigResource config = Config(
      {Vhost("suffix", {"*-bar.foo.com"}), Vhost("prefix", {"foo.com*"})});
  EXPECT_EQ(Chosen(config, "baz-bar.foo.com"), "suffix");
  EXPECT_EQ(Chosen(config, "-bar.foo.com"), "");
  EXPECT_EQ(Chosen(config, "foo.com"), "");
  EXPECT_EQ(Chosen(config, "foo.com:80"), "prefix");
}

TEST(SelectVirtualHostTest, ComparesWithoutRegardToCase) {
  RouteConfigResource config =
      Config({Vhost("exact", {"Echo.LOCAL:7000"}), Vhost("suffix", {"*.Foo"}),
              Vhost("prefix", {"BAR.*"})});
  EXPECT_EQ(Chosen(config, "ECHO.local:7000"), "exact");
  EXPECT_EQ(Chosen(config, "a.fOO"), "suffix");
  EXPECT_EQ(Chosen(config, "bar.x"), "prefix");
}

TEST(SelectVirtualHostTest, PortIsPartOfTheDomain) {
  RouteConfigResource config = Config(
      {Vhost("no-port", {"echo.local"}), Vhost("port", {"echo.local:7000"})});
  EXPECT_EQ(Chosen(config, "echo.local:7000"), "port");
  EXPECT_EQ(Chosen(config, "echo.local"), "no-port");
  EXPECT_EQ(Chosen(config, "echo.local:8000"), "");
}

TEST(SelectVirtualHostTest, FirstOfEqualMatchesWins) {
  EXPECT_EQ(Chosen(Config({Vhost("first", {"echo.local:7000"}),
                           Vhost("second", {"echo.local:7000"})}),
                   "echo.local:7000"),
            "first");
  // Suffixes of the same length.
  EXPECT_EQ(Chosen(Config({Vhost("first", {"*.local:7000"}),
                           Vhost("second", {"*.LOCAL:7000"})}),
                   "echo.local:7000"),
            "first");
  EXPECT_EQ(Chosen(Config({Vhost("first", {"*"}), Vhost("second", {"*"})}),
                   "echo.local:7000"),
            "first");
}

TEST(SelectVirtualHostTest, StarInTheMiddleNeverMatches) {
  RouteConfigResource config =
      Config({Vhost("middle", {"echo.*:7000", "*.local:*", "**"})});
  EXPECT_EQ(Chosen(config, "echo.local:7000"), "");
  EXPECT_EQ(Chosen(config, "echo.*:7000"), "");
}

TEST(SelectVirtualHostTest, NoMatchIsNull) {
  RouteConfigResource config = Config({Vhost("other", {"other.local:7000"})});
  EXPECT_EQ(SelectVirtualHost(config, "echo.local:7000"), nullptr);
  EXPECT_EQ(SelectVirtualHost(Config({}), "echo.local:7000"), nullptr);
}

TEST(BuildServiceConfigTest,
     NoVirtualHostIsUnavailableNamingConfigAndAuthority) {
  RouteConfigResource config =
      Config({Vhost("a", {"a.local:7000", "b.local"})});
  absl::StatusOr<ServiceConfig> got =
      BuildServiceConfig(ListenerResource(), config, "echo.local:7000");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(got.status().message(), HasSubstr("'outbound|7000||echo'"));
  EXPECT_THAT(got.status().message(), HasSubstr("'echo.local:7000'"));
  EXPECT_THAT(got.status().message(), HasSubstr("a.local:7000, b.local"));
}

TEST(BuildServiceConfigTest, NoVirtualHostListsAtMostTenDomains) {
  std::vector<std::string> domains;
  for (int i = 0; i < 15; ++i) domains.push_back("d" + std::to_string(i));
  absl::StatusOr<ServiceConfig> got = BuildServiceConfig(
      ListenerResource(), Config({Vhost("a", domains)}), "echo.local:7000");
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("d9"));
  EXPECT_THAT(got.status().message(), Not(HasSubstr("d10")));
  EXPECT_THAT(got.status().message(), HasSubstr("5 more"));
}

// --- routes -----------------------------------------------------------------

TEST(BuildServiceConfigTest, RoutesKeepTheirOrderAndConditions) {
  RouteResource get = RouteTo("get", "c1");
  get.route.condition = RequestMatch::PathExact("/echo.Echo/Get");
  get.route.is_retryable = true;
  get.route.retry_policy.max_attempts = 3;
  get.route.retry_policy.retry_on = {absl::StatusCode::kUnavailable};
  RouteResource rest = RouteTo("", "c2");
  rest.route.condition = RequestMatch::PathPrefix("/", false);

  ServiceConfig got = Build(ListenerResource(), OneVhost({get, rest}));
  ASSERT_EQ(got.routes.size(), 2u);
  EXPECT_EQ(got.routes[0].name, "get");
  EXPECT_EQ(got.routes[0].condition.kind, RequestMatch::Kind::kPathExact);
  EXPECT_EQ(got.routes[0].condition.path, "/echo.Echo/Get");
  EXPECT_TRUE(got.routes[0].is_retryable);
  EXPECT_EQ(got.routes[0].retry_policy.max_attempts, 3u);
  EXPECT_THAT(got.routes[0].retry_policy.retry_on,
              ElementsAre(absl::StatusCode::kUnavailable));
  // No name: left empty for the route engine to name it "#1".
  EXPECT_EQ(got.routes[1].name, "");
  EXPECT_EQ(got.routes[1].condition.kind, RequestMatch::Kind::kPathPrefix);
  EXPECT_EQ(got.routes[1].condition.path, "/");
  EXPECT_FALSE(got.routes[1].condition.case_sensitive);
  EXPECT_FALSE(got.retry_budget.has_value());
  EXPECT_THAT(got.backends, IsEmpty());
  EXPECT_EQ(got.fully_qualified_name, "echo.local");
}

TEST(BuildServiceConfigTest, RoutesComeFromTheChosenVirtualHost) {
  VirtualHostResource other = Vhost("other", {"*"});
  other.routes.push_back(RouteTo("other", "c-other"));
  VirtualHostResource echo = Vhost("echo", {"echo.local:7000"});
  echo.routes.push_back(RouteTo("echo", "c-echo"));
  ServiceConfig got = Build(ListenerResource(), Config({other, echo}));
  ASSERT_EQ(got.routes.size(), 1u);
  EXPECT_EQ(got.routes[0].name, "echo");
}

TEST(BuildServiceConfigTest, BackendsFromClusterAndWeightedClusters) {
  RouteResource single = RouteTo("single", "outbound|7000||echo");
  RouteResource split;
  split.route.name = "split";
  split.clusters = {Cluster("v1", 90), Cluster("v2", 10)};

  ServiceConfig got = Build(ListenerResource(), OneVhost({single, split}));
  ASSERT_EQ(got.routes.size(), 2u);
  ASSERT_EQ(got.routes[0].backends.size(), 1u);
  EXPECT_EQ(got.routes[0].backends[0].cluster, "outbound|7000||echo");
  EXPECT_EQ(got.routes[0].backends[0].weight, 1u);
  EXPECT_EQ(got.routes[0].backends[0].authority, "");
  ASSERT_EQ(got.routes[1].backends.size(), 2u);
  EXPECT_EQ(got.routes[1].backends[0].cluster, "v1");
  EXPECT_EQ(got.routes[1].backends[0].weight, 90u);
  EXPECT_EQ(got.routes[1].backends[0].authority, "");
  EXPECT_EQ(got.routes[1].backends[1].cluster, "v2");
  EXPECT_EQ(got.routes[1].backends[1].weight, 10u);
  EXPECT_EQ(got.routes[1].backends[1].authority, "");
}

// --- timeouts ---------------------------------------------------------------

TEST(BuildServiceConfigTest, TimeoutFromTheRouteOverTheListener) {
  ListenerResource listener;
  listener.max_stream_duration = absl::Seconds(30);
  RouteResource route = RouteTo("r", "c");
  route.max_stream_duration = absl::Milliseconds(1500);
  ServiceConfig got = Build(listener, OneVhost({route}));
  ASSERT_EQ(got.routes.size(), 1u);
  EXPECT_EQ(got.routes[0].timeout, absl::Milliseconds(1500));
}

TEST(BuildServiceConfigTest, TimeoutFromTheListenerWhenTheRouteHasNone) {
  ListenerResource listener;
  listener.max_stream_duration = absl::Seconds(30);
  ServiceConfig got = Build(listener, OneVhost({RouteTo("r", "c")}));
  ASSERT_EQ(got.routes.size(), 1u);
  EXPECT_EQ(got.routes[0].timeout, absl::Seconds(30));

  ServiceConfig unset =
      Build(ListenerResource(), OneVhost({RouteTo("r", "c")}));
  ASSERT_EQ(unset.routes.size(), 1u);
  EXPECT_EQ(unset.routes[0].timeout, absl::InfiniteDuration());
}

TEST(BuildServiceConfigTest, ZeroTimeoutIsNone) {
  ListenerResource listener;
  listener.max_stream_duration = absl::Seconds(30);
  RouteResource zero_route = RouteTo("zero-route", "c");
  zero_route.max_stream_duration = absl::ZeroDuration();
  ServiceConfig got = Build(listener, OneVhost({zero_route}));
  ASSERT_EQ(got.routes.size(), 1u);
  // A route's zero is "none", not "the listener's".
  EXPECT_EQ(got.routes[0].timeout, absl::InfiniteDuration());

  listener.max_stream_duration = absl::ZeroDuration();
  ServiceConfig zero_listener = Build(listener, OneVhost({RouteTo("r", "c")}));
  ASSERT_EQ(zero_listener.routes.size(), 1u);
  EXPECT_EQ(zero_listener.routes[0].timeout, absl::InfiniteDuration());
}

// --- faults -----------------------------------------------------------------

ListenerResource WithFaultFilter(FaultInjection config) {
  ListenerResource listener;
  listener.fault_filters.push_back({"envoy.filters.http.fault", config});
  return listener;
}

TEST(BuildServiceConfigTest, FaultFromTheListenerFilter) {
  ListenerResource listener =
      WithFaultFilter(Delay(absl::Milliseconds(100), 250'000));
  ServiceConfig got = Build(listener, OneVhost({RouteTo("r", "c")}));
  ASSERT_EQ(got.routes.size(), 1u);
  EXPECT_EQ(got.routes[0].fault.delay, absl::Milliseconds(100));
  EXPECT_EQ(got.routes[0].fault.delay_per_million, 250'000u);
  EXPECT_EQ(got.routes[0].fault.abort_per_million, 0u);
}

TEST(BuildServiceConfigTest, OnlyTheFirstFaultFilterApplies) {
  ListenerResource listener =
      WithFaultFilter(Delay(absl::Milliseconds(100), 250'000));
  listener.fault_filters.push_back(
      {"second", Delay(absl::Milliseconds(900), 1'000'000)});
  RouteResource route = RouteTo("r", "c");
  route.fault_overrides["second"] = Delay(absl::Seconds(5), 1'000'000);
  ServiceConfig got = Build(listener, OneVhost({route}));
  ASSERT_EQ(got.routes.size(), 1u);
  EXPECT_EQ(got.routes[0].fault.delay, absl::Milliseconds(100));
  EXPECT_EQ(got.routes[0].fault.delay_per_million, 250'000u);
}

TEST(BuildServiceConfigTest, FaultOverriddenByTheVirtualHostThenTheRoute) {
  ListenerResource listener =
      WithFaultFilter(Delay(absl::Milliseconds(100), 250'000));
  VirtualHostResource vhost = Vhost("all", {"*"});
  vhost.fault_overrides["envoy.filters.http.fault"] =
      Delay(absl::Milliseconds(200), 500'000);
  // Another filter's name: not the listener's filter, ignored.
  vhost.fault_overrides["other"] = Delay(absl::Seconds(9), 1'000'000);
  RouteResource by_vhost = RouteTo("by-vhost", "c");
  RouteResource by_route = RouteTo("by-route", "c");
  FaultInjection abort;
  abort.abort_per_million = 1'000;
  abort.abort_code = absl::StatusCode::kInternal;
  by_route.fault_overrides["envoy.filters.http.fault"] = abort;
  vhost.routes = {by_vhost, by_route};

  ServiceConfig got = Build(listener, Config({vhost}));
  ASSERT_EQ(got.routes.size(), 2u);
  EXPECT_EQ(got.routes[0].fault.delay, absl::Milliseconds(200));
  EXPECT_EQ(got.routes[0].fault.delay_per_million, 500'000u);
  // The route's config replaces the whole fault, its delay included.
  EXPECT_EQ(got.routes[1].fault.delay_per_million, 0u);
  EXPECT_EQ(got.routes[1].fault.abort_per_million, 1'000u);
  EXPECT_EQ(got.routes[1].fault.abort_code, absl::StatusCode::kInternal);
}

TEST(BuildServiceConfigTest, FaultOverridesIgnoredWithoutAFaultFilter) {
  VirtualHostResource vhost = Vhost("all", {"*"});
  vhost.fault_overrides["envoy.filters.http.fault"] =
      Delay(absl::Milliseconds(200), 500'000);
  RouteResource route = RouteTo("r", "c");
  route.fault_overrides["envoy.filters.http.fault"] =
      Delay(absl::Milliseconds(300), 1'000'000);
  vhost.routes = {route};
  ServiceConfig got = Build(ListenerResource(), Config({vhost}));
  ASSERT_EQ(got.routes.size(), 1u);
  EXPECT_EQ(got.routes[0].fault.delay_per_million, 0u);
  EXPECT_EQ(got.routes[0].fault.delay, absl::ZeroDuration());
  EXPECT_EQ(got.routes[0].fault.abort_per_million, 0u);
}

// --- unsupported actions ----------------------------------------------------

TEST(BuildServiceConfigTest, UnsupportedActionAbortsEveryCallUnavailable) {
  ListenerResource listener =
      WithFaultFilter(Delay(absl::Milliseconds(100), 1'000'000));
  listener.fault_filters[0].config.max_active_faults = 3;
  RouteResource unnamed;
  unnamed.unsupported_action = "redirect";
  RouteResource named;
  named.route.name = "legacy";
  named.unsupported_action = "direct_response";

  ServiceConfig got =
      Build(listener, OneVhost({RouteTo("ok", "c"), unnamed, named}));
  ASSERT_EQ(got.routes.size(), 3u);
  EXPECT_EQ(got.routes[0].fault.abort_per_million, 0u);

  const FaultInjection& f1 = got.routes[1].fault;
  EXPECT_THAT(got.routes[1].backends, IsEmpty());
  EXPECT_EQ(f1.abort_per_million, 1'000'000u);
  EXPECT_EQ(f1.abort_code, absl::StatusCode::kUnavailable);
  EXPECT_EQ(f1.delay_per_million, 0u);
  EXPECT_EQ(f1.max_active_faults, 0u);
  EXPECT_THAT(f1.abort_message, HasSubstr("redirect is not supported"));
  EXPECT_THAT(f1.abort_message, HasSubstr("'#1'"));
  EXPECT_THAT(f1.abort_message, HasSubstr("'outbound|7000||echo'"));
  EXPECT_EQ(got.routes[1].name, "");

  const FaultInjection& f2 = got.routes[2].fault;
  EXPECT_THAT(got.routes[2].backends, IsEmpty());
  EXPECT_EQ(f2.abort_per_million, 1'000'000u);
  EXPECT_EQ(f2.abort_code, absl::StatusCode::kUnavailable);
  EXPECT_THAT(f2.abort_message, HasSubstr("'legacy'"));
  EXPECT_THAT(f2.abort_message, HasSubstr("direct_response is not supported"));
}

// --- clusters ---------------------------------------------------------------

TEST(ClustersOfTest, SortedAndUnique) {
  ServiceConfig config;
  config.backends = {Cluster("m"), Cluster("a")};
  Route r1;
  r1.backends = {Cluster("z"), Cluster("a")};
  Route r2;
  r2.backends = {Cluster("m", 5), Cluster("b")};
  WeightedBackend by_authority;
  by_authority.authority = "other.local:80";
  by_authority.weight = 1;
  r2.backends.push_back(by_authority);
  config.routes = {r1, r2, Route()};
  EXPECT_THAT(ClustersOf(config), ElementsAre("a", "b", "m", "z"));
  EXPECT_THAT(ClustersOf(ServiceConfig()), IsEmpty());
}

}  // namespace
}  // namespace mesh::internal::xds

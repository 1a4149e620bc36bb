// The four xDS resources from the wire into the client's values
// (src/discovery/xds/xds_convert.h): every converted field, and every
// refusal with the field path and the problem it names.
#include "src/discovery/xds/xds_convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "envoy/extensions/filters/http/fault/v3/fault.pb.h"
#include "envoy/extensions/filters/http/router/v3/router.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "envoy/extensions/transport_sockets/tls/v3/tls.pb.h"
#include "google/protobuf/text_format.h"
#include "src/discovery/xds/xds_client.h"
#include "src/discovery/xds/xds_service_config.h"
#include "src/route/route_table.h"

namespace mesh::internal::xds {
namespace {

using envoy::config::cluster::v3::Cluster;
using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using envoy::extensions::filters::http::fault::v3::HTTPFault;
using envoy::extensions::filters::http::router::v3::Router;
using envoy::extensions::filters::network::http_connection_manager::v3::
    HttpConnectionManager;
namespace tls_v3 = ::envoy::extensions::transport_sockets::tls::v3;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

template <typename T>
T Parse(absl::string_view text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text),
                                                            &message))
      << text;
  return message;
}

google::protobuf::Any Pack(const google::protobuf::Message& message) {
  google::protobuf::Any any;
  any.PackFrom(message);
  return any;
}

// Text format's Any syntax needs the types registered: referencing them
// links their generated code in.
const std::string kHcm =
    absl::StrCat("[type.googleapis.com/",
                 HttpConnectionManager::descriptor()->full_name(), "]");
const std::string kRouter = absl::StrCat(
    "[type.googleapis.com/", Router::descriptor()->full_name(), "] {}");
const std::string kFault = absl::StrCat(
    "[type.googleapis.com/", HTTPFault::descriptor()->full_name(), "]");
constexpr absl::string_view kFilterConfig =
    "[type.googleapis.com/envoy.config.route.v3.FilterConfig]";

// A Listener whose HttpConnectionManager is `hcm` (text format).
Listener ListenerWith(absl::string_view hcm) {
  Listener listener;
  listener.set_name("echo.local:7000");
  *listener.mutable_api_listener()->mutable_api_listener() =
      Pack(Parse<HttpConnectionManager>(hcm));
  return listener;
}

// An HttpConnectionManager over RDS with `filters` (text format) in front
// of the router.
std::string Hcm(absl::string_view filters) {
  return absl::StrCat(
      "rds { config_source { ads {} } route_config_name: \"routes\" }", filters,
      "http_filters { name: \"router\" typed_config { ", kRouter, " } }");
}

// A RouteConfiguration with one virtual host for "*" holding `routes`.
RouteConfiguration OneHost(absl::string_view routes) {
  return Parse<RouteConfiguration>(absl::StrCat(
      "name: \"routes\" virtual_hosts { name: \"all\" domains: \"*\" ", routes,
      " }"));
}

// The one route of OneHost(route); fails the test if it was refused or
// left out.
RouteResource OneRoute(absl::string_view route) {
  absl::StatusOr<RouteConfigResource> config = ConvertRouteConfiguration(
      OneHost(absl::StrCat("routes { ", route, " }")));
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok() || config->virtual_hosts.size() != 1 ||
      config->virtual_hosts[0].routes.size() != 1) {
    ADD_FAILURE() << "not one route";
    return RouteResource();
  }
  return config->virtual_hosts[0].routes[0];
}

// The error converting OneHost(routes { route }).
std::string RouteError(absl::string_view route) {
  absl::StatusOr<RouteConfigResource> config = ConvertRouteConfiguration(
      OneHost(absl::StrCat("routes { ", route, " }")));
  EXPECT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

std::string Describe(const RequestMatch& m);

std::string DescribeChildren(const RequestMatch& m) {
  std::vector<std::string> parts;
  for (const RequestMatch& child : m.children) parts.push_back(Describe(child));
  return absl::StrJoin(parts, ", ");
}

std::string Describe(const HeaderMatch& h) {
  const char* kinds[] = {"exact",  "prefix",   "regex", "present",
                         "suffix", "contains", "range"};
  std::string out = absl::StrCat(h.name, " ", kinds[static_cast<int>(h.kind)]);
  if (h.kind == HeaderMatch::Kind::kRange) {
    absl::StrAppend(&out, " [", h.range_start, ", ", h.range_end, ")");
  } else if (h.kind != HeaderMatch::Kind::kPresent) {
    absl::StrAppend(&out, " '", h.value, "'");
  }
  if (h.ignore_case) absl::StrAppend(&out, " ignore_case");
  return out;
}

// A one-line picture of a condition tree.
std::string Describe(const RequestMatch& m) {
  switch (m.kind) {
    case RequestMatch::Kind::kAll:
      return absl::StrCat("all(", DescribeChildren(m), ")");
    case RequestMatch::Kind::kAny:
      return absl::StrCat("any(", DescribeChildren(m), ")");
    case RequestMatch::Kind::kNot:
      return absl::StrCat("not(", DescribeChildren(m), ")");
    case RequestMatch::Kind::kPath:
      return absl::StrCat("regex(", m.path_regex, ")");
    case RequestMatch::Kind::kMethod:
      return absl::StrCat("method(", m.method, ")");
    case RequestMatch::Kind::kHeader:
      return absl::StrCat("header(", Describe(m.header), ")");
    case RequestMatch::Kind::kPathPrefix:
      return absl::StrCat("prefix(", m.path, m.case_sensitive ? "" : " ci",
                          ")");
    case RequestMatch::Kind::kPathExact:
      return absl::StrCat("path(", m.path, m.case_sensitive ? "" : " ci", ")");
    case RequestMatch::Kind::kFraction:
      return absl::StrCat("fraction(", m.per_million, ")");
  }
  return "?";
}

std::vector<std::string> ClustersOf(const RouteResource& r) {
  std::vector<std::string> out;
  for (const WeightedBackend& b : r.clusters) {
    EXPECT_TRUE(b.authority.empty());
    out.push_back(absl::StrCat(b.cluster, "=", b.weight));
  }
  return out;
}

// --- Listener ----------------------------------------------------------------

TEST(ConvertListener, RdsOverAds) {
  absl::StatusOr<ListenerResource> l = ConvertListener(ListenerWith(Hcm("")));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->name, "echo.local:7000");
  EXPECT_EQ(l->route_config_name, "routes");
  EXPECT_FALSE(l->inline_route_config.has_value());
  EXPECT_THAT(l->fault_filters, IsEmpty());
  EXPECT_EQ(l->max_stream_duration, absl::InfiniteDuration());
}

TEST(ConvertListener, RdsOverSelf) {
  absl::StatusOr<ListenerResource> l = ConvertListener(ListenerWith(
      absl::StrCat("rds { config_source { self {} } route_config_name: \"r\" } "
                   "http_filters { name: \"router\" typed_config { ",
                   kRouter, " } }")));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->route_config_name, "r");
}

TEST(ConvertListener, InlineRouteConfig) {
  absl::StatusOr<ListenerResource> l =
      ConvertListener(ListenerWith(absl::StrCat(
          "route_config { name: \"inline\" virtual_hosts { name: \"vh\" "
          "domains: \"Echo.Local:7000\" routes { match { prefix: \"/\" } "
          "route { cluster: \"echo\" } } } } "
          "http_filters { name: \"router\" typed_config { ",
          kRouter, " } }")));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->route_config_name, "");
  ASSERT_TRUE(l->inline_route_config.has_value());
  const RouteConfigResource& config = *l->inline_route_config;
  EXPECT_EQ(config.name, "inline");
  ASSERT_EQ(config.virtual_hosts.size(), 1u);
  EXPECT_EQ(config.virtual_hosts[0].name, "vh");
  EXPECT_THAT(config.virtual_hosts[0].domains, ElementsAre("echo.local:7000"));
  ASSERT_EQ(config.virtual_hosts[0].routes.size(), 1u);
  EXPECT_THAT(ClustersOf(config.virtual_hosts[0].routes[0]),
              ElementsAre("echo=1"));
}

TEST(ConvertListener, InlineRouteConfigErrorsNameTheirPath) {
  absl::StatusOr<ListenerResource> l =
      ConvertListener(ListenerWith(absl::StrCat(
          "route_config { virtual_hosts { domains: \"*\" routes { match {} "
          "route { cluster: \"echo\" } } } } "
          "http_filters { name: \"router\" typed_config { ",
          kRouter, " } }")));
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(l.status().message(),
              HasSubstr("api_listener.api_listener.route_config.virtual_hosts["
                        "0].routes[0].match.path_specifier: missing"));
}

TEST(ConvertListener, FaultFilterWithPercentages) {
  absl::StatusOr<ListenerResource> l =
      ConvertListener(ListenerWith(Hcm(absl::StrCat(
          "http_filters { name: \"fault\" typed_config { ", kFault, " { ",
          "delay { fixed_delay { seconds: 2 nanos: 500000000 } ",
          "        percentage { numerator: 25 } } ", "abort { grpc_status: 14 ",
          "        percentage { numerator: 5 denominator: TEN_THOUSAND } } ",
          "max_active_faults { value: 7 } } } }"))));
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->fault_filters.size(), 1u);
  EXPECT_EQ(l->fault_filters[0].name, "fault");
  const FaultInjection& f = l->fault_filters[0].config;
  EXPECT_EQ(f.delay, absl::Milliseconds(2500));
  EXPECT_EQ(f.delay_per_million, 250'000u);
  EXPECT_FALSE(f.delay_from_header);
  EXPECT_EQ(f.abort_code, absl::StatusCode::kUnavailable);
  EXPECT_EQ(f.abort_per_million, 500u);
  EXPECT_EQ(f.abort_message, "fault injected by the xDS fault filter");
  EXPECT_FALSE(f.abort_from_header);
  EXPECT_EQ(f.max_active_faults, 7u);
}

TEST(ConvertHttpFault, FromHeadersWithPercentageCaps) {
  absl::StatusOr<FaultInjection> f = ConvertHttpFault(Parse<HTTPFault>(
      "delay { header_delay {} percentage { numerator: 30 } } "
      "abort { header_abort {} percentage { numerator: 7 denominator: MILLION "
      "} }"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->delay_from_header);
  EXPECT_EQ(f->delay, absl::ZeroDuration());
  EXPECT_EQ(f->delay_per_million, 300'000u);
  EXPECT_TRUE(f->abort_from_header);
  EXPECT_EQ(f->abort_code, absl::StatusCode::kOk);
  EXPECT_EQ(f->abort_per_million, 7u);
  EXPECT_EQ(f->max_active_faults, 0u);
  // The -percentage headers count in the configured denominator's units.
  EXPECT_EQ(f->delay_header_unit, 10'000u);  // HUNDRED
  EXPECT_EQ(f->abort_header_unit, 1u);       // MILLION
  f = ConvertHttpFault(Parse<HTTPFault>(
      "abort { header_abort {} percentage { numerator: 10000 denominator: "
      "TEN_THOUSAND } }"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->abort_per_million, 1'000'000u);
  EXPECT_EQ(f->abort_header_unit, 100u);
}

TEST(ConvertHttpFault, UnsetPercentagesNeverFireAndLargeOnesAreCapped) {
  absl::StatusOr<FaultInjection> f = ConvertHttpFault(Parse<HTTPFault>(
      "delay { fixed_delay { seconds: 1 } } "
      "abort { grpc_status: 3 percentage { numerator: 200 } }"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->delay, absl::Seconds(1));
  EXPECT_EQ(f->delay_per_million, 0u);
  EXPECT_EQ(f->abort_code, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f->abort_per_million, 1'000'000u);
}

TEST(ConvertHttpFault, HttpStatusMapsAsGrpcReadsIt) {
  const std::pair<int, absl::StatusCode> cases[] = {
      {400, absl::StatusCode::kInternal},
      {401, absl::StatusCode::kUnauthenticated},
      {403, absl::StatusCode::kPermissionDenied},
      {404, absl::StatusCode::kUnimplemented},
      {429, absl::StatusCode::kUnavailable},
      {502, absl::StatusCode::kUnavailable},
      {503, absl::StatusCode::kUnavailable},
      {504, absl::StatusCode::kUnavailable},
      {200, absl::StatusCode::kUnknown},
      {500, absl::StatusCode::kUnknown},
      {599, absl::StatusCode::kUnknown},
  };
  for (const auto& [http, code] : cases) {
    absl::StatusOr<FaultInjection> f = ConvertHttpFault(
        Parse<HTTPFault>(absl::StrCat("abort { http_status: ", http, " }")));
    ASSERT_TRUE(f.ok()) << http << ": " << f.status();
    EXPECT_EQ(f->abort_code, code) << http;
  }
}

TEST(ConvertHttpFault, Refusals) {
  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"abort { grpc_status: 0 }",
       "abort.grpc_status: 0 is not a gRPC failure code (1..16)"},
      {"abort { grpc_status: 17 }",
       "abort.grpc_status: 17 is not a gRPC failure code (1..16)"},
      {"abort { http_status: 600 }", "abort.http_status: 600 is outside"},
      {"abort { http_status: 199 }", "abort.http_status: 199 is outside"},
      {"abort { header_abort {} percentage { denominator: 7 } }",
       "abort.percentage.denominator: unknown value 7"},
      {"delay { fixed_delay { nanos: -1 } }",
       "delay.fixed_delay.nanos: -1 is outside [0, 999999999]"},
      {"delay { fixed_delay { seconds: -2 } }",
       "delay.fixed_delay.seconds: -2 is outside [0, 315576000000]"},
      {"headers { name: \"x\" exact_match: \"y\" }",
       "headers: fault filter header matching is not supported yet"},
      {"upstream_cluster: \"c\"", "upstream_cluster: faults for one upstream"},
      {"downstream_nodes: \"n\"", "downstream_nodes: faults for some"},
  };
  for (const auto& [text, problem] : cases) {
    absl::StatusOr<FaultInjection> f = ConvertHttpFault(Parse<HTTPFault>(text));
    ASSERT_FALSE(f.ok()) << text;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(f.status().message(), HasSubstr(problem)) << text;
  }
}

TEST(ConvertHttpFault, MaxActiveFaultsZeroMeansNoFault) {
  absl::StatusOr<FaultInjection> f = ConvertHttpFault(Parse<HTTPFault>(
      "abort { grpc_status: 14 percentage { numerator: 100 } } "
      "delay { header_delay {} percentage { numerator: 100 } } "
      "max_active_faults { value: 0 }"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->abort_code, absl::StatusCode::kOk);
  EXPECT_EQ(f->abort_per_million, 0u);
  EXPECT_FALSE(f->delay_from_header);
  EXPECT_EQ(f->delay_per_million, 0u);
}

TEST(ConvertListener, FaultFilterErrorsNameTheFilter) {
  absl::StatusOr<ListenerResource> l = ConvertListener(ListenerWith(
      Hcm(absl::StrCat("http_filters { name: \"fault\" typed_config { ", kFault,
                       " { abort { grpc_status: 99 } } } }"))));
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.status().message(),
              HasSubstr("api_listener.api_listener.http_filters[0]."
                        "typed_config.abort.grpc_status: 99 is not"));
}

// An Any of a type mesh has no filter for.
std::string UnknownFilter(absl::string_view name, bool optional) {
  return absl::StrCat(
      "http_filters { name: \"", name, "\" is_optional: ", optional,
      " typed_config { type_url: "
      "\"type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC\" } }");
}

TEST(ConvertListener, OptionalUnknownFilterIsSkipped) {
  absl::StatusOr<ListenerResource> l = ConvertListener(ListenerWith(
      Hcm(absl::StrCat(UnknownFilter("rbac", true),
                       "http_filters { name: \"ecds\" is_optional: true }"))));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_THAT(l->fault_filters, IsEmpty());
}

TEST(ConvertListener, UnknownFilterIsRefused) {
  absl::StatusOr<ListenerResource> l =
      ConvertListener(ListenerWith(Hcm(UnknownFilter("rbac", false))));
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(l.status().message(),
              HasSubstr("api_listener.api_listener.http_filters[0]."
                        "typed_config: unsupported filter type "
                        "envoy.extensions.filters.http.rbac.v3.RBAC"));
}

TEST(ConvertListener, FilterWithoutConfigIsRefusedUnlessOptional) {
  absl::StatusOr<ListenerResource> l =
      ConvertListener(ListenerWith(Hcm("http_filters { name: \"ecds\" }")));
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.status().message(),
              HasSubstr("http_filters[0].typed_config: missing"));
}

TEST(ConvertListener, RouterNotLastIsRefused) {
  absl::StatusOr<ListenerResource> l =
      ConvertListener(ListenerWith(absl::StrCat(
          "rds { config_source { ads {} } route_config_name: \"r\" } "
          "http_filters { name: \"router\" typed_config { ",
          kRouter, " } } http_filters { name: \"fault\" typed_config { ",
          kFault, " {} } }")));
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.status().message(),
              HasSubstr("api_listener.api_listener.http_filters[0]: the router "
                        "filter must be the last filter"));
}

TEST(ConvertListener, RouterFollowedOnlyBySkippedFiltersIsLast) {
  absl::StatusOr<ListenerResource> l = ConvertListener(ListenerWith(
      absl::StrCat("rds { config_source { ads {} } route_config_name: \"r\" } "
                   "http_filters { name: \"router\" typed_config { ",
                   kRouter, " } } ", UnknownFilter("rbac", true))));
  EXPECT_TRUE(l.ok()) << l.status();
}

TEST(ConvertListener, FilterChainRefusals) {
  const std::pair<std::string, absl::string_view> cases[] = {
      {"rds { config_source { ads {} } route_config_name: \"r\" }",
       "api_listener.api_listener.http_filters: empty: the router filter "
       "must be last"},
      {absl::StrCat("rds { config_source { ads {} } route_config_name: \"r\" }",
                    "http_filters { name: \"fault\" typed_config { ", kFault,
                    " {} } }"),
       "api_listener.api_listener.http_filters: the last filter must be the "
       "router"},
      {Hcm(absl::StrCat("http_filters { name: \"router\" typed_config { ",
                        kFault, " {} } }")),
       "api_listener.api_listener.http_filters[1].name: duplicate filter "
       "name 'router'"},
      {Hcm("http_filters { name: \"\" }"),
       "api_listener.api_listener.http_filters[0].name: empty"},
  };
  for (const auto& [hcm, problem] : cases) {
    absl::StatusOr<ListenerResource> l = ConvertListener(ListenerWith(hcm));
    ASSERT_FALSE(l.ok()) << hcm;
    EXPECT_EQ(l.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(l.status().message(), HasSubstr(problem)) << hcm;
  }
}

TEST(ConvertListener, RouteSourceRefusals) {
  const std::pair<std::string, absl::string_view> cases[] = {
      {absl::StrCat("rds { config_source {} route_config_name: \"r\" } "
                    "http_filters { name: \"router\" typed_config { ",
                    kRouter, " } }"),
       "api_listener.api_listener.rds.config_source: must be ads or self"},
      {absl::StrCat("rds { route_config_name: \"r\" } "
                    "http_filters { name: \"router\" typed_config { ",
                    kRouter, " } }"),
       "api_listener.api_listener.rds.config_source: missing"},
      {absl::StrCat("rds { config_source { ads {} } } "
                    "http_filters { name: \"router\" typed_config { ",
                    kRouter, " } }"),
       "api_listener.api_listener.rds.route_config_name: empty"},
      {absl::StrCat("http_filters { name: \"router\" typed_config { ", kRouter,
                    " } }"),
       "api_listener.api_listener.route_specifier: neither rds nor an inline "
       "route_config"},
  };
  for (const auto& [hcm, problem] : cases) {
    absl::StatusOr<ListenerResource> l = ConvertListener(ListenerWith(hcm));
    ASSERT_FALSE(l.ok()) << hcm;
    EXPECT_THAT(l.status().message(), HasSubstr(problem)) << hcm;
  }
}

TEST(ConvertListener, ApiListenerMustHoldAnHttpConnectionManager) {
  Listener missing;
  missing.set_name("echo.local:7000");
  absl::StatusOr<ListenerResource> l = ConvertListener(missing);
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.status().message(),
              HasSubstr("api_listener.api_listener: missing"));

  Listener router = missing;
  *router.mutable_api_listener()->mutable_api_listener() = Pack(Router());
  l = ConvertListener(router);
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.status().message(),
              HasSubstr("api_listener.api_listener: holds a "
                        "envoy.extensions.filters.http.router.v3.Router, not "
                        "an HttpConnectionManager"));
}

TEST(ConvertListener, MaxStreamDuration) {
  absl::StatusOr<ListenerResource> l = ConvertListener(
      ListenerWith(absl::StrCat("common_http_protocol_options { "
                                "max_stream_duration { seconds: 5 } } ",
                                Hcm(""))));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->max_stream_duration, absl::Seconds(5));

  l = ConvertListener(ListenerWith(absl::StrCat(
      "common_http_protocol_options { max_stream_duration {} } ", Hcm(""))));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->max_stream_duration, absl::InfiniteDuration());

  l = ConvertListener(ListenerWith(absl::StrCat(
      "common_http_protocol_options { max_stream_duration { seconds: -1 } } ",
      Hcm(""))));
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.status().message(),
              HasSubstr("api_listener.api_listener.common_http_protocol_"
                        "options.max_stream_duration.seconds: -1 is outside"));
}

// --- RouteConfiguration: matches ---------------------------------------------

TEST(ConvertRouteConfiguration, PathMatchers) {
  absl::StatusOr<RouteConfigResource> config = ConvertRouteConfiguration(
      OneHost("routes { name: \"a\" match { prefix: \"/Pkg.\" } "
              "         route { cluster: \"c\" } } "
              "routes { match { path: \"/pkg.S/M\" "
              "                 case_sensitive { value: false } } "
              "         route { cluster: \"c\" } } "
              "routes { match { safe_regex { regex: \"/pkg\\\\.S/.*\" } "
              "                 case_sensitive { value: false } } "
              "         route { cluster: \"c\" } } "));
  ASSERT_TRUE(config.ok()) << config.status();
  const std::vector<RouteResource>& routes = config->virtual_hosts[0].routes;
  ASSERT_EQ(routes.size(), 3u);
  EXPECT_EQ(routes[0].route.name, "a");
  EXPECT_EQ(Describe(routes[0].route.condition), "prefix(/Pkg.)");
  EXPECT_EQ(routes[1].route.name, "");
  EXPECT_EQ(Describe(routes[1].route.condition), "path(/pkg.S/M ci)");
  // case_sensitive does not apply to regexes.
  EXPECT_EQ(Describe(routes[2].route.condition), "regex(/pkg\\.S/.*)");
  for (const RouteResource& r : routes) {
    EXPECT_THAT(ClustersOf(r), ElementsAre("c=1"));
    EXPECT_EQ(r.unsupported_action, "");
    EXPECT_FALSE(r.max_stream_duration.has_value());
    EXPECT_FALSE(r.route.is_retryable);
    EXPECT_THAT(r.fault_overrides, IsEmpty());
    EXPECT_THAT(r.hash_policies, IsEmpty());
  }
}

TEST(ConvertRouteConfiguration, BadRegexIsRefused) {
  absl::StatusOr<RouteConfigResource> config = ConvertRouteConfiguration(
      OneHost("routes { match { prefix: \"\" } route { cluster: \"c\" } } "
              "routes { match { prefix: \"\" } route { cluster: \"c\" } } "
              "routes { match { safe_regex { regex: \"(\" } } "
              "         route { cluster: \"c\" } }"));
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            "virtual_hosts[0].routes[2].match.safe_regex.regex: invalid RE2 "
            "'(': missing )");
}

TEST(ConvertRouteConfiguration, RegexBeyondTheMemoryBoundIsRefused) {
  // Valid RE2, but its program needs more than the 1 MiB the client allows.
  EXPECT_THAT(RouteError("match { safe_regex { regex: \"\\\\pL{1000}\" } } "
                         "route { cluster: \"c\" }"),
              HasSubstr("routes[0].match.safe_regex.regex: invalid RE2 "
                        "'\\pL{1000}': pattern too large - compile failed"));
}

TEST(ConvertRouteConfiguration, PathSpecifierRefusals) {
  EXPECT_THAT(RouteError("match {} route { cluster: \"c\" }"),
              HasSubstr("virtual_hosts[0].routes[0].match.path_specifier: "
                        "missing: one of prefix, path and safe_regex"));
  EXPECT_THAT(RouteError("match { path_separated_prefix: \"/a\" } "
                         "route { cluster: \"c\" }"),
              HasSubstr("routes[0].match.path_separated_prefix: not "
                        "supported"));
  EXPECT_THAT(RouteError("route { cluster: \"c\" }"),
              HasSubstr("routes[0].match: missing"));
}

TEST(ConvertRouteConfiguration, HeaderMatchersAllMustHold) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" "
      "  headers { name: \"X-Exact\" exact_match: \"v\" } "
      "  headers { name: \"x-prefix\" prefix_match: \"p\" } "
      "  headers { name: \"x-suffix\" suffix_match: \"s\" } "
      "  headers { name: \"x-contains\" contains_match: \"c\" } "
      "  headers { name: \"x-regex\" safe_regex_match { regex: \"a+\" } } "
      "  headers { name: \"x-present\" present_match: true } "
      "  headers { name: \"x-absent\" present_match: false } "
      "  headers { name: \"x-range\" range_match { start: -5 end: 10 } } "
      "  headers { name: \"x-not\" exact_match: \"v\" invert_match: true } "
      "  headers { name: \"x-s1\" string_match { exact: \"E\" ignore_case: "
      "true } } "
      "  headers { name: \"x-s2\" string_match { prefix: \"P\" } } "
      "  headers { name: \"x-s3\" string_match { suffix: \"S\" ignore_case: "
      "true } } "
      "  headers { name: \"x-s4\" string_match { contains: \"C\" } } "
      "  headers { name: \"x-s5\" string_match { safe_regex { regex: \"b\" } "
      "ignore_case: true } } "
      "} route { cluster: \"c\" }");
  EXPECT_EQ(Describe(r.route.condition),
            "all(prefix(/), header(x-exact exact 'v'), "
            "header(x-prefix prefix 'p'), header(x-suffix suffix 's'), "
            "header(x-contains contains 'c'), header(x-regex regex 'a+'), "
            "header(x-present present), not(header(x-absent present)), "
            "header(x-range range [-5, 10)), not(header(x-not exact 'v')), "
            "header(x-s1 exact 'E' ignore_case), header(x-s2 prefix 'P'), "
            "header(x-s3 suffix 'S' ignore_case), header(x-s4 contains 'C'), "
            "header(x-s5 regex 'b'))");
}

TEST(ConvertRouteConfiguration, InvertedAbsenceIsPresence) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" headers { name: \"x\" present_match: false "
      "invert_match: true } } route { cluster: \"c\" }");
  EXPECT_EQ(Describe(r.route.condition), "all(prefix(/), header(x present))");
}

TEST(ConvertRouteConfiguration, BinaryHeadersMatchAsAbsent) {
  // gRFC A28: a header ending in -bin is never seen: only negated matchers
  // (and "not present") hold.
  RouteResource r = OneRoute(
      "match { prefix: \"/\" "
      "  headers { name: \"a-bin\" exact_match: \"v\" } "
      "  headers { name: \"b-bin\" exact_match: \"v\" invert_match: true } "
      "  headers { name: \"c-bin\" present_match: true } "
      "  headers { name: \"d-bin\" present_match: false } "
      "} route { cluster: \"c\" }");
  EXPECT_EQ(Describe(r.route.condition),
            "all(prefix(/), any(), all(), any(), all())");
}

TEST(ConvertRouteConfiguration, EmptyRangeNeverMatches) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" headers { name: \"x\" range_match { start: 3 "
      "end: 3 } } headers { name: \"y\" range_match { start: 3 end: 3 } "
      "invert_match: true } } route { cluster: \"c\" }");
  EXPECT_EQ(Describe(r.route.condition), "all(prefix(/), any(), all())");
}

TEST(ConvertRouteConfiguration, HeaderMatcherRefusals) {
  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"headers { name: \"x\" range_match { start: 5 end: 4 } }",
       "routes[0].match.headers[0].range_match: end 4 is below start 5"},
      {"headers { name: \"x\" safe_regex_match { regex: \"[\" } }",
       "routes[0].match.headers[0].safe_regex_match.regex: invalid RE2 '['"},
      {"headers { name: \"x\" string_match { safe_regex { regex: \"(\" } } }",
       "routes[0].match.headers[0].string_match.safe_regex.regex: invalid "
       "RE2 '(': missing )"},
      {"headers { name: \"x\" string_match {} }",
       "routes[0].match.headers[0].string_match.match_pattern: missing"},
      {"headers { name: \"x\" }",
       "routes[0].match.headers[0].header_match_specifier: missing"},
      {"headers { exact_match: \"v\" }",
       "routes[0].match.headers[0].name: empty"},
  };
  for (const auto& [headers, problem] : cases) {
    EXPECT_THAT(RouteError(absl::StrCat("match { prefix: \"/\" ", headers,
                                        " } route { cluster: \"c\" }")),
                HasSubstr(problem))
        << headers;
  }
}

TEST(ConvertRouteConfiguration, AtMost100HeaderMatchers) {
  std::string headers;
  for (int i = 0; i < 101; ++i) {
    absl::StrAppend(&headers, "headers { name: \"h", i,
                    "\" present_match: true } ");
  }
  EXPECT_THAT(
      RouteError(absl::StrCat("match { prefix: \"/\" ", headers,
                              " } route { cluster: \"c\" }")),
      HasSubstr("routes[0].match.headers: 101 matchers, more than 100"));
}

TEST(ConvertRouteConfiguration, RuntimeFractionIsPerMillion) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" runtime_fraction { default_value { numerator: "
      "12 denominator: TEN_THOUSAND } runtime_key: \"ignored\" } } "
      "route { cluster: \"c\" }");
  EXPECT_EQ(Describe(r.route.condition), "all(prefix(/), fraction(1200))");
  EXPECT_THAT(RouteError("match { prefix: \"/\" runtime_fraction { "
                         "default_value { denominator: 9 } } } "
                         "route { cluster: \"c\" }"),
              HasSubstr("routes[0].match.runtime_fraction.default_value."
                        "denominator: unknown value 9"));
}

TEST(ConvertRouteConfiguration, RouteWithQueryParametersIsLeftOut) {
  absl::StatusOr<RouteConfigResource> config = ConvertRouteConfiguration(
      OneHost("routes { name: \"q\" match { prefix: \"/\" query_parameters "
              "{} } route { cluster: \"q\" } } "
              "routes { name: \"kept\" match { prefix: \"/\" } "
              "route { cluster: \"c\" } }"));
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->virtual_hosts[0].routes.size(), 1u);
  EXPECT_EQ(config->virtual_hosts[0].routes[0].route.name, "kept");
}

// --- RouteConfiguration: actions ---------------------------------------------

TEST(ConvertRouteConfiguration, UnsupportedActionsKeepTheRoute) {
  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"redirect {}", "redirect"},
      {"direct_response {}", "direct_response"},
      {"filter_action {}", "filter_action"},
      {"non_forwarding_action {}", "non_forwarding_action"},
      {"", "an unknown action"},
  };
  for (const auto& [action, name] : cases) {
    RouteResource r = OneRoute(
        absl::StrCat("name: \"r\" match { prefix: \"/\" } ", action,
                     " typed_per_filter_config { key: \"fault\" value { ",
                     kFault, " { abort { grpc_status: 2 } } } }"));
    EXPECT_EQ(r.route.name, "r");
    EXPECT_EQ(r.unsupported_action, name);
    EXPECT_THAT(r.clusters, IsEmpty());
    EXPECT_EQ(r.fault_overrides.count("fault"), 1u) << action;
  }
}

TEST(ConvertRouteConfiguration, UnsupportedClusterSpecifierLeavesRouteOut) {
  // gRFC A28: such a route is ignored, as if it were not there.
  absl::StatusOr<RouteConfigResource> config = ConvertRouteConfiguration(
      OneHost("routes { match { prefix: \"/a\" } route { cluster_header: "
              "\"x-cluster\" } } "
              "routes { match { prefix: \"/b\" } route { "
              "cluster_specifier_plugin: \"rls\" } } "
              "routes { match { prefix: \"/c\" } route { } } "
              "routes { name: \"kept\" match { prefix: \"/\" } "
              "route { cluster: \"c\" } }"));
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->virtual_hosts[0].routes.size(), 1u);
  EXPECT_EQ(config->virtual_hosts[0].routes[0].route.name, "kept");
}

TEST(ConvertRouteConfiguration, VirtualHostWithNoRouteLeftIsRefused) {
  absl::StatusOr<RouteConfigResource> config = ConvertRouteConfiguration(
      OneHost("routes { match { prefix: \"/\" query_parameters {} } "
              "route { cluster: \"c\" } }"));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("virtual_hosts[0].routes: none left"));
  config = ConvertRouteConfiguration(OneHost(""));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("virtual_hosts[0].routes: empty"));
}

TEST(ConvertRouteConfiguration, ClusterNameMustNotBeEmpty) {
  EXPECT_THAT(RouteError("match { prefix: \"/\" } route { cluster: \"\" }"),
              HasSubstr("routes[0].route.cluster: empty"));
}

TEST(ConvertRouteConfiguration, WeightedClusters) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" } route { weighted_clusters { "
      "  clusters { name: \"a\" weight { value: 70 } } "
      "  clusters { name: \"zero\" weight { value: 0 } } "
      "  clusters { name: \"b\" weight { value: 30 } } "
      "  total_weight { value: 100 } } }");
  EXPECT_THAT(ClustersOf(r), ElementsAre("a=70", "b=30"));
  // No total_weight (deprecated): the weights' sum is the total.
  r = OneRoute(
      "match { prefix: \"/\" } route { weighted_clusters { "
      "  clusters { name: \"a\" weight { value: 1 } } "
      "  clusters { name: \"b\" weight { value: 2 } } } }");
  EXPECT_THAT(ClustersOf(r), ElementsAre("a=1", "b=2"));
}

TEST(ConvertRouteConfiguration, WeightedClusterRefusals) {
  std::string many;
  for (int i = 0; i < 65; ++i) {
    absl::StrAppend(&many, "clusters { name: \"c", i,
                    "\" weight { value: 1 } } ");
  }
  const std::pair<std::string, absl::string_view> cases[] = {
      {"clusters { name: \"a\" weight { value: 60 } } "
       "clusters { name: \"b\" weight { value: 30 } } "
       "total_weight { value: 100 }",
       "routes[0].route.weighted_clusters.total_weight: 100 but the weights "
       "add up to 90"},
      {"clusters { name: \"a\" weight { value: 0 } }",
       "routes[0].route.weighted_clusters.clusters: no cluster weighs above 0"},
      {"clusters { name: \"\" weight { value: 1 } }",
       "routes[0].route.weighted_clusters.clusters[0].name: empty"},
      {"clusters { name: \"a\" }",
       "routes[0].route.weighted_clusters.clusters[0].weight: missing"},
      {"clusters { name: \"a\" weight { value: 4294967295 } } "
       "clusters { name: \"b\" weight { value: 1 } }",
       "routes[0].route.weighted_clusters.clusters: the weights add up to "
       "4294967296"},
      {many,
       "routes[0].route.weighted_clusters.clusters: 65 clusters, more "
       "than 64"},
      {absl::StrCat("clusters { name: \"a\" weight { value: 1 } "
                    "typed_per_filter_config { key: \"fault\" value { ",
                    kFault, " {} } } }"),
       "routes[0].route.weighted_clusters.clusters[0].typed_per_filter_config["
       "\"fault\"]: per-cluster fault config is not supported"},
  };
  for (const auto& [split, problem] : cases) {
    EXPECT_THAT(RouteError(absl::StrCat("match { prefix: \"/\" } route { "
                                        "weighted_clusters { ",
                                        split, " } }")),
                HasSubstr(problem))
        << split;
  }
}

TEST(ConvertRouteConfiguration,
     WeightedClusterOptionalUnknownOverrideIsSkipped) {
  RouteResource r = OneRoute(absl::StrCat(
      "match { prefix: \"/\" } route { weighted_clusters { clusters { name: "
      "\"a\" weight { value: 1 } typed_per_filter_config { key: \"x\" value { ",
      kFilterConfig,
      " { is_optional: true config { type_url: "
      "\"type.googleapis.com/some.Unknown\" } } } } } } }"));
  EXPECT_THAT(ClustersOf(r), ElementsAre("a=1"));
}

// --- RouteConfiguration: timeouts, retries, hashes ---------------------------

TEST(ConvertRouteConfiguration, MaxStreamDuration) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" timeout { seconds: 9 } "
      "max_stream_duration { max_stream_duration { seconds: 3 } "
      "grpc_timeout_header_max { nanos: 500000000 } } }");
  EXPECT_EQ(r.max_stream_duration, absl::Milliseconds(500));
  r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" "
      "max_stream_duration { max_stream_duration { seconds: 3 } } }");
  EXPECT_EQ(r.max_stream_duration, absl::Seconds(3));
  r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" "
      "max_stream_duration { max_stream_duration {} } }");
  EXPECT_EQ(r.max_stream_duration, absl::ZeroDuration());
  // RouteAction.timeout is not gRPC's (gRFC A31).
  r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" timeout { seconds: 9 } "
      "max_stream_duration {} }");
  EXPECT_FALSE(r.max_stream_duration.has_value());
  EXPECT_EQ(r.route.timeout, absl::InfiniteDuration());
  EXPECT_THAT(RouteError("match { prefix: \"/\" } route { cluster: \"c\" "
                         "max_stream_duration { grpc_timeout_header_max { "
                         "nanos: 1000000000 } } }"),
              HasSubstr("routes[0].route.max_stream_duration.grpc_timeout_"
                        "header_max.nanos: 1000000000 is outside"));
  EXPECT_THAT(RouteError("match { prefix: \"/\" } route { cluster: \"c\" "
                         "max_stream_duration { max_stream_duration { "
                         "seconds: 315576000001 } } }"),
              HasSubstr("routes[0].route.max_stream_duration.max_stream_"
                        "duration.seconds: 315576000001 is outside"));
}

TEST(ConvertRouteConfiguration, RetryPolicyCodesAndDefaults) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" retry_policy { "
      "retry_on: \"cancelled,deadline-exceeded, internal,5xx,"
      "resource-exhausted,unavailable,reset,unavailable\" } }");
  EXPECT_TRUE(r.route.is_retryable);
  const RetryPolicy& p = r.route.retry_policy;
  EXPECT_THAT(p.retry_on, ElementsAre(absl::StatusCode::kCancelled,
                                      absl::StatusCode::kDeadlineExceeded,
                                      absl::StatusCode::kInternal,
                                      absl::StatusCode::kResourceExhausted,
                                      absl::StatusCode::kUnavailable));
  EXPECT_EQ(p.max_attempts, 2u);  // num_retries 1
  EXPECT_EQ(p.backoff_base, absl::Milliseconds(25));
  EXPECT_EQ(p.backoff_max, absl::Milliseconds(250));
}

TEST(ConvertRouteConfiguration, RetryPolicyAttemptsAndBackoff) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" retry_policy { "
      "retry_on: \"unavailable\" num_retries { value: 3 } "
      "retry_back_off { base_interval { nanos: 100000000 } } } }");
  EXPECT_EQ(r.route.retry_policy.max_attempts, 4u);
  EXPECT_EQ(r.route.retry_policy.backoff_base, absl::Milliseconds(100));
  EXPECT_EQ(r.route.retry_policy.backoff_max, absl::Seconds(1));  // 10 × base
  // gRFC A44: at most 5 attempts; backoffs below 1 ms count as 1 ms.
  r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" retry_policy { "
      "retry_on: \"unavailable\" num_retries { value: 4294967295 } "
      "retry_back_off { base_interval { nanos: 1000 } "
      "max_interval { nanos: 2000 } } } }");
  EXPECT_EQ(r.route.retry_policy.max_attempts, 5u);
  EXPECT_EQ(r.route.retry_policy.backoff_base, absl::Milliseconds(1));
  EXPECT_EQ(r.route.retry_policy.backoff_max, absl::Milliseconds(1));
}

TEST(ConvertRouteConfiguration, RetryOnWithoutGrpcCodesDoesNotRetry) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" retry_policy { "
      "retry_on: \"5xx,gateway-error\" num_retries { value: 3 } } }");
  EXPECT_FALSE(r.route.is_retryable);
  EXPECT_THAT(r.route.retry_policy.retry_on, IsEmpty());
  EXPECT_EQ(r.route.retry_policy.max_attempts, 0u);
}

TEST(ConvertRouteConfiguration, VirtualHostRetryPolicyIsTheDefault) {
  absl::StatusOr<RouteConfigResource> config =
      ConvertRouteConfiguration(Parse<RouteConfiguration>(
          "virtual_hosts { domains: \"*\" "
          "  retry_policy { retry_on: \"internal\" num_retries { value: 2 } } "
          "  routes { match { prefix: \"/a\" } route { cluster: \"c\" } } "
          "  routes { match { prefix: \"/b\" } route { cluster: \"c\" "
          "    retry_policy { retry_on: \"unavailable\" } } } "
          "  routes { match { prefix: \"/c\" } route { cluster: \"c\" "
          "    retry_policy { retry_on: \"5xx\" } } } }"));
  ASSERT_TRUE(config.ok()) << config.status();
  const std::vector<RouteResource>& routes = config->virtual_hosts[0].routes;
  ASSERT_EQ(routes.size(), 3u);
  EXPECT_TRUE(routes[0].route.is_retryable);
  EXPECT_THAT(routes[0].route.retry_policy.retry_on,
              ElementsAre(absl::StatusCode::kInternal));
  EXPECT_EQ(routes[0].route.retry_policy.max_attempts, 3u);
  EXPECT_TRUE(routes[1].route.is_retryable);
  EXPECT_THAT(routes[1].route.retry_policy.retry_on,
              ElementsAre(absl::StatusCode::kUnavailable));
  EXPECT_EQ(routes[1].route.retry_policy.max_attempts, 2u);
  // The route's own policy wins even when it retries on nothing.
  EXPECT_FALSE(routes[2].route.is_retryable);
}

TEST(ConvertRouteConfiguration, RetryPolicyRefusals) {
  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"num_retries { value: 0 }",
       "routes[0].route.retry_policy.num_retries: must be at least 1"},
      {"retry_back_off { max_interval { seconds: 1 } }",
       "routes[0].route.retry_policy.retry_back_off.base_interval: missing"},
      {"retry_back_off { base_interval {} }",
       "routes[0].route.retry_policy.retry_back_off.base_interval: must be "
       "above 0"},
      {"retry_back_off { base_interval { seconds: 2 } max_interval { seconds: "
       "1 } }",
       "routes[0].route.retry_policy.retry_back_off.max_interval: 1s is below "
       "base_interval 2s"},
      {"retry_back_off { base_interval { nanos: -5 } }",
       "routes[0].route.retry_policy.retry_back_off.base_interval.nanos: -5 "
       "is outside"},
  };
  for (const auto& [policy, problem] : cases) {
    EXPECT_THAT(RouteError(absl::StrCat("match { prefix: \"/\" } route { "
                                        "cluster: \"c\" retry_policy { "
                                        "retry_on: \"unavailable\" ",
                                        policy, " } }")),
                HasSubstr(problem))
        << policy;
  }
  absl::StatusOr<RouteConfigResource> config =
      ConvertRouteConfiguration(Parse<RouteConfiguration>(
          "virtual_hosts { domains: \"*\" retry_policy { num_retries {} } "
          "routes { match { prefix: \"/\" } route { cluster: \"c\" } } }"));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("virtual_hosts[0].retry_policy.num_retries: must be "
                        "at least 1"));
}

TEST(ConvertRouteConfiguration, HashPolicies) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" "
      "hash_policy { header { header_name: \"X-User\" } } "
      "hash_policy { header { header_name: \"x-session\" regex_rewrite { "
      "  pattern { regex: \"^s-(.*)$\" } substitution: \"\\\\1\" } } "
      "  terminal: true } "
      "hash_policy { header { header_name: \"x-bad\" regex_rewrite { "
      "  pattern { regex: \"(\" } } } } "
      "hash_policy { filter_state { key: \"io.grpc.channel_id\" } } "
      "hash_policy { filter_state { key: \"other\" } } "
      "hash_policy { terminal: true } }");
  ASSERT_EQ(r.hash_policies.size(), 3u);
  EXPECT_EQ(r.hash_policies[0].kind, HashPolicy::Kind::kHeader);
  EXPECT_EQ(r.hash_policies[0].header_name, "x-user");
  EXPECT_EQ(r.hash_policies[0].regex, "");
  EXPECT_FALSE(r.hash_policies[0].terminal);
  EXPECT_EQ(r.hash_policies[1].kind, HashPolicy::Kind::kHeader);
  EXPECT_EQ(r.hash_policies[1].header_name, "x-session");
  EXPECT_EQ(r.hash_policies[1].regex, "^s-(.*)$");
  EXPECT_EQ(r.hash_policies[1].regex_substitution, "\\1");
  EXPECT_TRUE(r.hash_policies[1].terminal);
  EXPECT_EQ(r.hash_policies[2].kind, HashPolicy::Kind::kChannelId);
}

// --- RouteConfiguration: fault overrides, virtual hosts
// -------------------------

TEST(ConvertRouteConfiguration, FaultOverrides) {
  absl::StatusOr<RouteConfigResource> config =
      ConvertRouteConfiguration(Parse<RouteConfiguration>(absl::StrCat(
          "virtual_hosts { domains: \"*\" "
          "  typed_per_filter_config { key: \"fault\" value { ",
          kFault,
          " { abort { http_status: 503 percentage { numerator: 1 } } } } } "
          "  typed_per_filter_config { key: \"optional\" value { ",
          kFilterConfig,
          " { is_optional: true config { type_url: "
          "\"type.googleapis.com/some.Unknown\" } } } } "
          "  typed_per_filter_config { key: \"empty\" value { ",
          kFilterConfig,
          " { is_optional: true } } } "
          "  routes { match { prefix: \"/\" } route { cluster: \"c\" } "
          "    typed_per_filter_config { key: \"fault\" value { ",
          kFilterConfig, " { config { ", kFault,
          " { delay { fixed_delay { seconds: 1 } percentage { numerator: 100 "
          "} } } } } } } } }")));
  ASSERT_TRUE(config.ok()) << config.status();
  const VirtualHostResource& vhost = config->virtual_hosts[0];
  ASSERT_EQ(vhost.fault_overrides.size(), 1u);
  const FaultInjection& host_fault = vhost.fault_overrides.at("fault");
  EXPECT_EQ(host_fault.abort_code, absl::StatusCode::kUnavailable);
  EXPECT_EQ(host_fault.abort_per_million, 10'000u);
  ASSERT_EQ(vhost.routes[0].fault_overrides.size(), 1u);
  const FaultInjection& route_fault =
      vhost.routes[0].fault_overrides.at("fault");
  EXPECT_EQ(route_fault.delay, absl::Seconds(1));
  EXPECT_EQ(route_fault.delay_per_million, 1'000'000u);
  EXPECT_EQ(route_fault.abort_code, absl::StatusCode::kOk);
}

TEST(ConvertRouteConfiguration, FaultOverrideRefusals) {
  const std::pair<std::string, absl::string_view> cases[] = {
      {"key: \"x\" value { type_url: \"type.googleapis.com/some.Unknown\" }",
       "routes[0].typed_per_filter_config[\"x\"]: unsupported filter type "
       "some.Unknown"},
      {absl::StrCat(
           "key: \"x\" value { ", kFilterConfig,
           " { config { type_url: \"type.googleapis.com/some.Unknown\" "
           "} } }"),
       "routes[0].typed_per_filter_config[\"x\"].config: unsupported filter "
       "type some.Unknown"},
      {absl::StrCat("key: \"x\" value { ", kFilterConfig, " {} }"),
       "routes[0].typed_per_filter_config[\"x\"].config: missing"},
      {absl::StrCat("key: \"router\" value { ", kRouter, " }"),
       "routes[0].typed_per_filter_config[\"router\"]: the router filter "
       "takes no per-route config"},
      {absl::StrCat("key: \"x\" value { ", kFault,
                    " { abort { grpc_status: 0 } } }"),
       "routes[0].typed_per_filter_config[\"x\"].abort.grpc_status: 0 is not"},
      {absl::StrCat("key: \"\" value { ", kFault, " {} }"),
       "routes[0].typed_per_filter_config[\"\"]: empty filter name"},
  };
  for (const auto& [entry, problem] : cases) {
    EXPECT_THAT(RouteError(absl::StrCat("match { prefix: \"/\" } route { "
                                        "cluster: \"c\" } "
                                        "typed_per_filter_config { ",
                                        entry, " }")),
                HasSubstr(problem))
        << entry;
  }
}

TEST(ConvertRouteConfiguration, Domains) {
  absl::StatusOr<RouteConfigResource> config =
      ConvertRouteConfiguration(Parse<RouteConfiguration>(
          "virtual_hosts { name: \"a\" domains: \"Echo.Local\" domains: "
          "\"*.Example.COM\" domains: \"api.*\" domains: \"*\" "
          "routes { match { prefix: \"/\" } route { cluster: \"c\" } } } "
          "virtual_hosts { name: \"b\" domains: \"b\" "
          "routes { match { prefix: \"/\" } route { cluster: \"d\" } } }"));
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->virtual_hosts.size(), 2u);
  EXPECT_EQ(config->virtual_hosts[0].name, "a");
  EXPECT_THAT(config->virtual_hosts[0].domains,
              ElementsAre("echo.local", "*.example.com", "api.*", "*"));
  EXPECT_EQ(config->virtual_hosts[1].name, "b");
  EXPECT_THAT(ClustersOf(config->virtual_hosts[1].routes[0]),
              ElementsAre("d=1"));

  config = ConvertRouteConfiguration(Parse<RouteConfiguration>(
      "virtual_hosts { domains: \"a\" domains: \"a*b\" "
      "routes { match { prefix: \"/\" } route { cluster: \"c\" } } }"));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("virtual_hosts[0].domains[1]: 'a*b' is not a domain "
                        "pattern"));
  config = ConvertRouteConfiguration(Parse<RouteConfiguration>(
      "virtual_hosts { routes { match { prefix: \"/\" } route { cluster: "
      "\"c\" } } }"));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("virtual_hosts[0].domains: empty"));
}

TEST(ConvertRouteConfiguration, Limits) {
  RouteConfiguration hosts;
  for (int i = 0; i < 1001; ++i) hosts.add_virtual_hosts();
  absl::StatusOr<RouteConfigResource> config = ConvertRouteConfiguration(hosts);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("virtual_hosts: 1001 virtual hosts, more than 1000"));

  RouteConfiguration routes;
  auto* vhost = routes.add_virtual_hosts();
  vhost->add_domains("*");
  for (int i = 0; i < 1'001; ++i) vhost->add_routes();
  config = ConvertRouteConfiguration(routes);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("virtual_hosts[0].routes: 1001 routes, more than "
                        "1000 (RouteLimits::max_routes)"));
}

// A virtual host with `n` routes, each matching "/svc<i>/" then `tail`.
RouteConfiguration RegexRoutes(int n, const std::string& tail) {
  RouteConfiguration config;
  auto* vhost = config.add_virtual_hosts();
  vhost->add_domains("*");
  for (int i = 0; i < n; ++i) {
    auto* route = vhost->add_routes();
    route->mutable_match()->mutable_safe_regex()->set_regex(
        absl::StrCat("/svc", i, "/", tail));
    route->mutable_route()->set_cluster("c");
  }
  return config;
}

TEST(ConvertRouteConfiguration, WhatTheRouteTableWouldDropIsRefusedNotAcked) {
  // 1000 routes are what a route table keeps: accepted whole.
  absl::StatusOr<RouteConfigResource> kept =
      ConvertRouteConfiguration(RegexRoutes(1000, "(a|b)"));
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_EQ(kept->virtual_hosts[0].routes.size(), 1000u);
  std::vector<std::string> dropped;
  ServiceConfig table_config;
  for (const auto& r : kept->virtual_hosts[0].routes) {
    table_config.routes.push_back(r.route);
  }
  EXPECT_EQ(RouteTable::Build(table_config, &dropped)->size(), 1000u);
  EXPECT_TRUE(dropped.empty());
  // Regexes whose programs together pass the table's budget (100,000; each
  // of these is about 2,000) were once ACKed and the later routes dropped:
  // now refused naming the limit.
  absl::StatusOr<RouteConfigResource> big =
      ConvertRouteConfiguration(RegexRoutes(60, "[a-z0-9]{1000}"));
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(),
              HasSubstr("virtual_hosts[0].routes: route "));
  EXPECT_THAT(big.status().message(),
              HasSubstr("RouteLimits::max_regex_program_size"));
}

// --- RouteConfiguration converted by what a call reaches (RDS) -------------

// Three virtual hosts: "a" and "b" good, "bad" with a regex RE2 refuses.
RouteConfiguration ThreeHosts() {
  return Parse<RouteConfiguration>(R"pb(
    name: "routes"
    virtual_hosts {
      name: "a"
      domains: "a.test:80"
      routes {
        match { safe_regex { regex: "/a/.*" } }
        route { cluster: "ca" }
      }
    }
    virtual_hosts {
      name: "b"
      domains: "B.test:80"
      domains: "*.b.test"
      routes {
        match { prefix: "/" }
        route { cluster: "cb" }
      }
    }
    virtual_hosts {
      name: "bad"
      domains: "bad.test:80"
      routes {
        match { safe_regex { regex: "(" } }
        route { cluster: "cx" }
      }
    }
  )pb");
}

absl::StatusOr<RouteConfigResource> Lazily(const RouteConfiguration& config,
                                           std::vector<size_t> now,
                                           std::string* bytes) {
  *bytes = config.SerializeAsString();
  absl::StatusOr<RouteConfigurationSlices> slices =
      SliceRouteConfiguration(*bytes);
  if (!slices.ok()) return slices.status();
  return ConvertRouteConfiguration(
      *slices, [&now](const RouteConfigResource&) { return now; });
}

TEST(ConvertRouteConfigurationLazily, OnlyTheChosenHostsAreConverted) {
  std::string bytes;
  absl::StatusOr<RouteConfigResource> config =
      Lazily(ThreeHosts(), {1}, &bytes);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name, "routes");
  ASSERT_EQ(config->virtual_hosts.size(), 3u);
  // Every host's name and domains are read (lower-cased), so each can be
  // chosen; only "b" has its routes.
  EXPECT_THAT(config->virtual_hosts[1].domains,
              ElementsAre("b.test:80", "*.b.test"));
  EXPECT_TRUE(config->virtual_hosts[1].wire.empty());
  ASSERT_EQ(config->virtual_hosts[1].routes.size(), 1u);
  EXPECT_EQ(config->virtual_hosts[2].name, "bad");
  EXPECT_FALSE(config->virtual_hosts[0].wire.empty());
  EXPECT_TRUE(config->virtual_hosts[0].routes.empty());
  // A lazy host converts to what converting it eagerly gives.
  absl::StatusOr<VirtualHostResource> a =
      ConvertLazyVirtualHost(config->virtual_hosts[0]);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->name, "a");
  ASSERT_EQ(a->routes.size(), 1u);
  EXPECT_THAT(ClustersOf(a->routes[0]), ElementsAre("ca=1"));
  // The bad host: refused when converted, naming the field.
  absl::StatusOr<VirtualHostResource> bad =
      ConvertLazyVirtualHost(config->virtual_hosts[2]);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("routes[0].match.safe_regex.regex: invalid RE2 '('"));
}

TEST(ConvertRouteConfigurationLazily, ATargetReachingALazyHostConvertsIt) {
  std::string bytes;
  absl::StatusOr<RouteConfigResource> config = Lazily(ThreeHosts(), {}, &bytes);
  ASSERT_TRUE(config.ok()) << config.status();
  const ListenerResource listener;
  absl::StatusOr<ServiceConfig> b =
      BuildServiceConfig(listener, *config, "x.b.test");
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->routes.size(), 1u);
  ASSERT_EQ(b->routes[0].backends.size(), 1u);
  EXPECT_EQ(b->routes[0].backends[0].cluster, "cb");
  // A host found bad only now fails its target, naming host and field.
  absl::StatusOr<ServiceConfig> bad =
      BuildServiceConfig(listener, *config, "bad.test:80");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("virtual host 'bad' (converted when first reached): "
                        "routes[0].match.safe_regex.regex: invalid RE2"));
}

TEST(ConvertRouteConfigurationLazily, AChosenBadHostRefusesTheResource) {
  std::string bytes;
  absl::StatusOr<RouteConfigResource> config =
      Lazily(ThreeHosts(), {2}, &bytes);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr("virtual_hosts[2].routes[0].match.safe_regex"));
}

TEST(ConvertRouteConfigurationLazily, ChoosingAllGivesTheEagerConversion) {
  RouteConfiguration wire = ThreeHosts();
  wire.mutable_virtual_hosts()->RemoveLast();
  std::string bytes;
  absl::StatusOr<RouteConfigResource> lazy = Lazily(wire, {0, 1, 1, 7}, &bytes);
  absl::StatusOr<RouteConfigResource> eager = ConvertRouteConfiguration(wire);
  ASSERT_TRUE(lazy.ok()) << lazy.status();
  ASSERT_TRUE(eager.ok()) << eager.status();
  ASSERT_EQ(lazy->virtual_hosts.size(), eager->virtual_hosts.size());
  for (size_t i = 0; i < eager->virtual_hosts.size(); ++i) {
    const VirtualHostResource& l = lazy->virtual_hosts[i];
    const VirtualHostResource& e = eager->virtual_hosts[i];
    EXPECT_TRUE(l.wire.empty());
    EXPECT_EQ(l.name, e.name);
    EXPECT_EQ(l.domains, e.domains);
    ASSERT_EQ(l.routes.size(), e.routes.size());
    for (size_t r = 0; r < e.routes.size(); ++r) {
      EXPECT_EQ(ClustersOf(l.routes[r]), ClustersOf(e.routes[r]));
      EXPECT_EQ(l.routes[r].max_stream_duration,
                e.routes[r].max_stream_duration);
    }
  }
}

TEST(ConvertRouteConfigurationLazily, WhatEveryHostIsCheckedForAtOnce) {
  // Domains, the number of routes and of hosts are read for every host.
  RouteConfiguration wire = ThreeHosts();
  wire.mutable_virtual_hosts(0)->add_domains("a*b");
  std::string bytes;
  EXPECT_THAT(Lazily(wire, {}, &bytes).status().message(),
              HasSubstr("virtual_hosts[0].domains[1]: 'a*b' is not a domain"));
  wire = ThreeHosts();
  for (int i = 0; i < 1000; ++i) {
    *wire.mutable_virtual_hosts(0)->add_routes() =
        wire.virtual_hosts(0).routes(0);
  }
  EXPECT_THAT(
      Lazily(wire, {}, &bytes).status().message(),
      HasSubstr("virtual_hosts[0].routes: 1001 routes, more than 1000"));
  wire = ThreeHosts();
  wire.mutable_virtual_hosts(1)->clear_routes();
  EXPECT_THAT(Lazily(wire, {}, &bytes).status().message(),
              HasSubstr("virtual_hosts[1].routes: empty"));
  RouteConfiguration many;
  for (int i = 0; i < 1001; ++i) {
    *many.add_virtual_hosts() = ThreeHosts().virtual_hosts(0);
  }
  EXPECT_THAT(Lazily(many, {}, &bytes).status().message(),
              HasSubstr("virtual_hosts: 1001 virtual hosts, more than 1000"));
}

TEST(ConvertRouteConfigurationLazily, UnknownFieldsAreSkippedAsProtobufDoes) {
  // Field 6 as fixed64, virtual_hosts (2) as a varint (a known number with
  // another wire type is an unknown field to protobuf), a group 9 holding
  // a varint, then the name: protobuf parses it, and so must the slicer.
  const std::string bytes(
      "\x31"
      "12345678"
      "\x10\x01"
      "\x4b\x08\x07\x4c"
      "\x0a\x01"
      "r",
      18);
  RouteConfiguration parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  absl::StatusOr<RouteConfigurationSlices> slices =
      SliceRouteConfiguration(bytes);
  ASSERT_TRUE(slices.ok()) << slices.status();
  EXPECT_EQ(slices->name, parsed.name());
  EXPECT_EQ(slices->name, "r");
  EXPECT_TRUE(slices->virtual_hosts.empty());
  // A group that never ends does not parse, for either.
  const std::string open_group("\x4b\x08\x07", 3);
  EXPECT_FALSE(parsed.ParseFromString(open_group));
  EXPECT_FALSE(SliceRouteConfiguration(open_group).ok());
}

TEST(ConvertRouteConfigurationLazily,
     BytesThatAreNotARouteConfigurationAreRefused) {
  for (const std::string& junk :
       {std::string("\xff\xff\xff"),
        std::string("\x0a\x05"
                    "ab"),
        std::string("\x12\x02\x0a\xff"), std::string("\x0a\x01\xff")}) {
    absl::StatusOr<RouteConfigurationSlices> slices =
        SliceRouteConfiguration(junk);
    if (!slices.ok()) {
      EXPECT_THAT(slices.status().message(),
                  HasSubstr("cannot parse a envoy.config.route.v3."
                            "RouteConfiguration"));
      continue;
    }
    // Sliced, but a virtual host does not parse.
    EXPECT_FALSE(ConvertRouteConfiguration(*slices, nullptr).ok());
  }
}

// --- Cluster -----------------------------------------------------------------

Cluster EdsCluster(absl::string_view more) {
  return Parse<Cluster>(
      absl::StrCat("name: \"outbound|7000||echo\" type: EDS "
                   "eds_cluster_config { eds_config { ads {} } } ",
                   more));
}

std::string ClusterError(const Cluster& cluster) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(cluster);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(c.status().message());
}

TEST(ConvertCluster, EdsDefaults) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(EdsCluster(""));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->name, "outbound|7000||echo");
  EXPECT_EQ(c->eds_service_name, "outbound|7000||echo");
  EXPECT_EQ(c->lb_policy, ClusterResource::LbPolicy::kRoundRobin);
  EXPECT_EQ(c->max_requests, 1024u);
  EXPECT_FALSE(c->outlier_detection.has_value());

  c = ConvertCluster(Parse<Cluster>(
      "name: \"c\" type: EDS eds_cluster_config { eds_config { self {} } "
      "service_name: \"echo-eds\" }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->eds_service_name, "echo-eds");
}

TEST(ConvertCluster, RingHashSizes) {
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(EdsCluster("lb_policy: RING_HASH"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lb_policy, ClusterResource::LbPolicy::kRingHash);
  EXPECT_EQ(c->min_ring_size, 1024u);
  EXPECT_EQ(c->max_ring_size, 8'388'608u);

  c = ConvertCluster(EdsCluster(
      "lb_policy: RING_HASH ring_hash_lb_config { minimum_ring_size { value: "
      "10 } maximum_ring_size { value: 4096 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->min_ring_size, 10u);
  EXPECT_EQ(c->max_ring_size, 4096u);

  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"minimum_ring_size { value: 0 }",
       "ring_hash_lb_config.minimum_ring_size: 0 is outside [1, 8388608]"},
      {"maximum_ring_size { value: 8388609 }",
       "ring_hash_lb_config.maximum_ring_size: 8388609 is outside [1, "
       "8388608]"},
      {"minimum_ring_size { value: 100 } maximum_ring_size { value: 99 }",
       "ring_hash_lb_config.minimum_ring_size: 100 is above the maximum ring "
       "size 99"},
      {"maximum_ring_size { value: 512 }",
       "ring_hash_lb_config.minimum_ring_size: 1024 is above the maximum ring "
       "size 512"},
      {"hash_function: MURMUR_HASH_2",
       "ring_hash_lb_config.hash_function: MURMUR_HASH_2 is not supported"},
  };
  for (const auto& [config, problem] : cases) {
    EXPECT_THAT(
        ClusterError(EdsCluster(absl::StrCat(
            "lb_policy: RING_HASH ring_hash_lb_config { ", config, " }"))),
        HasSubstr(problem))
        << config;
  }
}

TEST(ConvertCluster, LeastRequest) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(EdsCluster(
      "lb_policy: LEAST_REQUEST least_request_lb_config { choice_count { "
      "value: 2 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lb_policy, ClusterResource::LbPolicy::kLeastRequest);
  EXPECT_THAT(ClusterError(EdsCluster(
                  "lb_policy: LEAST_REQUEST least_request_lb_config { "
                  "choice_count { value: 1 } }")),
              HasSubstr("least_request_lb_config.choice_count: must be at "
                        "least 2"));
}

TEST(ConvertCluster, OtherLbPoliciesAreRefused) {
  for (absl::string_view policy : {"RANDOM", "MAGLEV", "CLUSTER_PROVIDED",
                                   "LOAD_BALANCING_POLICY_CONFIG"}) {
    EXPECT_THAT(
        ClusterError(EdsCluster(absl::StrCat("lb_policy: ", policy))),
        HasSubstr(absl::StrCat("lb_policy: ", policy, " is not supported")));
  }
}

TEST(ConvertCluster, LoadBalancingPolicyGivesWayToLbPolicy) {
  // Envoy: load_balancing_policy supersedes lb_policy for a client that
  // supports it; mesh does not.
  absl::StatusOr<ClusterResource> c = ConvertCluster(
      EdsCluster("lb_policy: RING_HASH load_balancing_policy {}"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lb_policy, ClusterResource::LbPolicy::kRingHash);
}

TEST(ConvertCluster, DiscoveryTypeRefusals) {
  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"type: STATIC", "type: STATIC clusters are not supported"},
      {"type: ORIGINAL_DST", "type: ORIGINAL_DST clusters are not supported"},
      {"", "type: unset (STATIC) clusters are not supported"},
      {"cluster_type { name: \"envoy.clusters.aggregate\" typed_config { "
       "type_url: "
       "\"type.googleapis.com/envoy.extensions.clusters.aggregate.v3."
       "ClusterConfig\" } }",
       "cluster_type: custom cluster type 'envoy.clusters.aggregate' "
       "(envoy.extensions.clusters.aggregate.v3.ClusterConfig) is not "
       "supported"},
  };
  for (const auto& [type, problem] : cases) {
    EXPECT_THAT(ClusterError(Parse<Cluster>(absl::StrCat(
                    "name: \"c\" ", type,
                    " eds_cluster_config { eds_config { ads {} } }"))),
                HasSubstr(problem))
        << type;
  }
}

TEST(ConvertCluster, EdsConfigRefusals) {
  EXPECT_THAT(ClusterError(Parse<Cluster>("name: \"c\" type: EDS")),
              HasSubstr("eds_cluster_config: missing"));
  EXPECT_THAT(ClusterError(Parse<Cluster>(
                  "name: \"c\" type: EDS eds_cluster_config {}")),
              HasSubstr("eds_cluster_config.eds_config: missing"));
  EXPECT_THAT(
      ClusterError(Parse<Cluster>(
          "name: \"c\" type: EDS eds_cluster_config { eds_config {} }")),
      HasSubstr("eds_cluster_config.eds_config: must be ads or self"));
}

// A DNS cluster of `type` whose load_assignment is `assignment` (text),
// with `more` fields.
Cluster DnsCluster(absl::string_view type, absl::string_view assignment,
                   absl::string_view more = "") {
  return Parse<Cluster>(absl::StrCat("name: \"dns\" type: ", type,
                                     " load_assignment { ", assignment, " } ",
                                     more));
}

// One lb_endpoint (text) at `address`:`port`, with `more` fields.
std::string Host(absl::string_view address, int port,
                 absl::string_view more = "") {
  return absl::StrCat(
      "lb_endpoints { endpoint { address { socket_address { address: \"",
      address, "\" port_value: ", port, " } } } ", more, " }");
}

// One locality (text) holding `lb_endpoints` (text).
std::string Locality(absl::string_view lb_endpoints,
                     absl::string_view more = "") {
  return absl::StrCat("endpoints { ", more, " ", lb_endpoints, " }");
}

TEST(ConvertCluster, LogicalDnsResolvesItsOneHost) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(
      DnsCluster("LOGICAL_DNS", Locality(Host("echo.mesh.test", 7001))));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->discovery, ClusterResource::Discovery::kLogicalDns);
  ASSERT_EQ(c->dns_hosts.size(), 1u);
  EXPECT_EQ(c->dns_hosts[0].host, "echo.mesh.test");
  EXPECT_EQ(c->dns_hosts[0].port, 7001);
  EXPECT_EQ(c->dns_hosts[0].weight, 1u);
  EXPECT_EQ(c->dns_hosts[0].Target(), "echo.mesh.test:7001");
  // No EDS for it: no eds_cluster_config needed, and one given is not read.
  EXPECT_EQ(c->eds_service_name, "");
  c = ConvertCluster(DnsCluster(
      "LOGICAL_DNS", Locality(Host("::1", 80)),
      "eds_cluster_config { eds_config { ads {} } service_name: \"x\" }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->eds_service_name, "");
  EXPECT_EQ(c->dns_hosts[0].Target(), "[::1]:80");
}

TEST(ConvertCluster, LogicalDnsRefusalsNameTheirField) {
  const std::string one = Locality(Host("echo.mesh.test", 7001));
  const std::string lb0 = "load_assignment.endpoints[0].lb_endpoints[0]";
  const std::string socket = lb0 + ".endpoint.address.socket_address";
  struct Case {
    std::string assignment;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"",
       "load_assignment.endpoints: 0 localities: a LOGICAL_DNS cluster "
       "has exactly one"},
      {one + one,
       "load_assignment.endpoints: 2 localities: a LOGICAL_DNS cluster has "
       "exactly one"},
      {Locality(Host("a.mesh.test", 1) + Host("b.mesh.test", 1)),
       "load_assignment.endpoints[0].lb_endpoints: 2 lb_endpoints: a "
       "LOGICAL_DNS cluster has exactly one"},
      {Locality(""),
       "load_assignment.endpoints: no lb_endpoints: a LOGICAL_DNS cluster "
       "needs a host to resolve"},
      {Locality(Host("echo.mesh.test", 7001), "priority: 1"),
       "load_assignment.endpoints[0].priority: 1: priorities are not "
       "supported for DNS clusters"},
      {Locality("lb_endpoints {}"), lb0 + ".endpoint: missing"},
      {Locality("lb_endpoints { endpoint { address {} } }"),
       socket + ": missing: a DNS cluster resolves a name and a port"},
      {Locality(Host("", 7001)), socket + ".address: empty"},
      {Locality(Host("bad name.test", 7001)),
       socket + ".address: 'bad name.test' is neither a DNS name nor an IP "
                "address"},
      {Locality(Host("a..b", 7001)), socket + ".address: 'a..b' is neither"},
      {Locality(Host("echo.mesh.test", 0)),
       socket + ".port_value: 0 is outside 1..65535"},
      {Locality(Host("echo.mesh.test", 70000)),
       socket + ".port_value: 70000 is outside 1..65535"},
      {Locality("lb_endpoints { endpoint { address { socket_address { "
                "address: \"echo.mesh.test\" named_port: \"http\" } } } }"),
       socket + ".named_port: not supported: give a port_value"},
      {Locality("lb_endpoints { endpoint { address { socket_address { "
                "address: \"echo.mesh.test\" port_value: 80 resolver_name: "
                "\"consul\" } } } }"),
       socket + ".resolver_name: 'consul': a DNS cluster resolves through "
                "DNS only"},
      {Locality(
           Host("echo.mesh.test", 80, "load_balancing_weight { value: 0 }")),
       lb0 + ".load_balancing_weight: must be at least 1"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(ClusterError(DnsCluster("LOGICAL_DNS", c.assignment)),
                HasSubstr(c.error))
        << c.assignment;
  }
  EXPECT_THAT(ClusterError(Parse<Cluster>("name: \"c\" type: LOGICAL_DNS")),
              HasSubstr("load_assignment: missing: a LOGICAL_DNS cluster "
                        "resolves the hosts it names"));
}

TEST(ConvertCluster, DnsLookupFamilyIsRead) {
  using Family = ClusterResource::DnsFamily;
  const std::string one = Locality(Host("echo.mesh.test", 7001));
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(DnsCluster("STRICT_DNS", one));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dns_family, Family::kAuto);  // the field's default
  const std::vector<std::pair<std::string, Family>> cases = {
      {"AUTO", Family::kAuto},
      {"V4_ONLY", Family::kV4Only},
      {"V6_ONLY", Family::kV6Only},
      {"V4_PREFERRED", Family::kV4Preferred},
      {"ALL", Family::kAll}};
  for (const auto& [name, family] : cases) {
    c = ConvertCluster(
        DnsCluster("LOGICAL_DNS", one, "dns_lookup_family: " + name));
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    EXPECT_EQ(c->dns_family, family) << name;
  }
  // A value this API does not know (an open enum keeps it) is refused.
  EXPECT_THAT(
      ClusterError(DnsCluster("STRICT_DNS", one, "dns_lookup_family: 9")),
      HasSubstr("dns_lookup_family: 9 is not a known "
                "DnsLookupFamily"));
}

TEST(ConvertCluster, StrictDnsResolvesEveryHostWithItsWeight) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(DnsCluster(
      "STRICT_DNS",
      Locality(Host("a.mesh.test", 7001, "load_balancing_weight { value: 3 }") +
               Host("b.mesh.test", 7002)) +
          Locality(Host("10.0.0.9", 7001, "load_balancing_weight { value: 2 }"),
                   "locality { zone: \"z2\" }") +
          // Left out for its health, as in EDS.
          Locality(Host("c.mesh.test", 7001, "health_status: UNHEALTHY"))));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->discovery, ClusterResource::Discovery::kStrictDns);
  std::vector<std::string> hosts;
  for (const DnsHost& h : c->dns_hosts) {
    hosts.push_back(absl::StrCat(h.Target(), " w", h.weight));
  }
  EXPECT_THAT(hosts, ElementsAre("a.mesh.test:7001 w3", "b.mesh.test:7002 w1",
                                 "10.0.0.9:7001 w2"));
}

TEST(ConvertCluster, StrictDnsRefusals) {
  // 101 hosts over two localities.
  std::string many;
  for (int i = 0; i < 60; ++i) {
    absl::StrAppend(&many, Host(absl::StrCat("h", i, ".mesh.test"), 80));
  }
  std::string more;
  for (int i = 60; i < 101; ++i) {
    absl::StrAppend(&more, Host(absl::StrCat("h", i, ".mesh.test"), 80));
  }
  EXPECT_THAT(
      ClusterError(DnsCluster("STRICT_DNS", Locality(many) + Locality(more))),
      HasSubstr("load_assignment.endpoints: 101 hosts, more than 100"));
  // 100 are fine.
  more.clear();
  for (int i = 60; i < 100; ++i) {
    absl::StrAppend(&more, Host(absl::StrCat("h", i, ".mesh.test"), 80));
  }
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(DnsCluster("STRICT_DNS", Locality(many) + Locality(more)));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dns_hosts.size(), 100u);

  const std::pair<std::string, std::string> cases[] = {
      {Locality(Host("a.mesh.test", 80)) +
           Locality(Host("b.mesh.test", 80), "priority: 1"),
       "load_assignment.endpoints[1].priority: 1: priorities are not "
       "supported for DNS clusters"},
      {Locality(Host("a.mesh.test", 80) + Host("a.mesh.test", 80)),
       "load_assignment.endpoints[0].lb_endpoints[1].endpoint.address: "
       "duplicate host a.mesh.test:80"},
      {Locality(Host("a.mesh.test", 80) + Host("b.mesh.test", 0)),
       "load_assignment.endpoints[0].lb_endpoints[1].endpoint.address."
       "socket_address.port_value: 0 is outside 1..65535"},
      {Locality(Host("a.mesh.test", 80) +
                "lb_endpoints { endpoint { address { socket_address { "
                "address: \"b.mesh.test\" named_port: \"http\" } } } }"),
       "lb_endpoints[1].endpoint.address.socket_address.named_port: not "
       "supported"},
      {"",
       "load_assignment.endpoints: no lb_endpoints: a STRICT_DNS cluster "
       "needs a host to resolve"},
  };
  for (const auto& [assignment, error] : cases) {
    EXPECT_THAT(ClusterError(DnsCluster("STRICT_DNS", assignment)),
                HasSubstr(error))
        << assignment;
  }
}

TEST(ConvertCluster, DnsClustersConvertTheRestAsEdsClustersDo) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(
      DnsCluster("STRICT_DNS", Locality(Host("a.mesh.test", 80)),
                 "lb_policy: RING_HASH ring_hash_lb_config { "
                 "maximum_ring_size { value: 2048 } } circuit_breakers { "
                 "thresholds { max_requests { value: 7 } } } "
                 "outlier_detection { consecutive_5xx { value: 3 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lb_policy, ClusterResource::LbPolicy::kRingHash);
  EXPECT_EQ(c->max_ring_size, 2048u);
  EXPECT_EQ(c->max_requests, 7u);
  ASSERT_TRUE(c->outlier_detection.has_value());
  EXPECT_EQ(c->outlier_detection->consecutive_5xx, 3u);
  EXPECT_THAT(
      ClusterError(DnsCluster("LOGICAL_DNS", Locality(Host("a.mesh.test", 80)),
                              "lb_policy: MAGLEV")),
      HasSubstr("lb_policy: MAGLEV is not supported"));
}

// The bootstrap's providers as Istio's agent writes them: "default" with
// all three files, "roots" with the CA only, "vault" another plugin.
CertificateProviders TestProviders() {
  CertificateProviders p;
  FileWatcherConfig all;
  all.certificate_file = "/certs/cert.pem";
  all.private_key_file = "/certs/key.pem";
  all.ca_certificate_file = "/certs/ca.pem";
  all.refresh_interval = absl::Seconds(30);
  p["default"] = CertificateProvider{"file_watcher", "{}", all};
  FileWatcherConfig roots;
  roots.ca_certificate_file = "/roots/ca.pem";
  roots.refresh_interval = absl::Seconds(5);
  p["roots"] = CertificateProvider{"file_watcher", "{}", roots};
  p["vault"] = CertificateProvider{"vault", "{}", std::nullopt};
  return p;
}

// An EDS cluster whose transport_socket holds `context` (UpstreamTlsContext
// in text form).
Cluster TlsCluster(const std::string& context) {
  tls_v3::UpstreamTlsContext upstream =
      Parse<tls_v3::UpstreamTlsContext>(context);
  Cluster cluster = EdsCluster("");
  cluster.mutable_transport_socket()->set_name("envoy.transport_sockets.tls");
  cluster.mutable_transport_socket()->mutable_typed_config()->PackFrom(
      upstream);
  return cluster;
}

std::string TlsClusterError(const std::string& context) {
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(TlsCluster(context), TestProviders());
  EXPECT_FALSE(c.ok()) << context;
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(c.status().message());
}

// What istiod sends a proxyless client.
constexpr char kIstioContext[] = R"pb(
  common_tls_context {
    tls_certificate_provider_instance {
      instance_name: "default"
      certificate_name: "default"
    }
    combined_validation_context {
      default_validation_context {
        ca_certificate_provider_instance {
          instance_name: "default"
          certificate_name: "ROOTCA"
        }
        match_subject_alt_names { exact: "spiffe://cluster.local/ns/a/sa/b" }
        match_subject_alt_names { prefix: "spiffe://cluster.local/ns/c/" }
      }
    }
  }
  sni: "outbound_.7000_._.echo.a.svc.cluster.local"
)pb";

TEST(ConvertCluster, UpstreamTlsContextFromProviderInstances) {
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(TlsCluster(kIstioContext), TestProviders());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_NE(c->tls, nullptr);
  const EndpointTls& tls = *c->tls;
  EXPECT_EQ(tls.certificates.cert_chain_file, "/certs/cert.pem");
  EXPECT_EQ(tls.certificates.private_key_file, "/certs/key.pem");
  EXPECT_EQ(tls.certificates.trust_roots_file, "/certs/ca.pem");
  EXPECT_EQ(tls.certificates.refresh_interval, absl::Seconds(30));
  ASSERT_EQ(tls.server_names.size(), 2u);
  EXPECT_EQ(tls.server_names[0].kind, ServerNameMatcher::Kind::kExact);
  EXPECT_EQ(tls.server_names[0].value, "spiffe://cluster.local/ns/a/sa/b");
  EXPECT_EQ(tls.server_names[1].kind, ServerNameMatcher::Kind::kPrefix);
  EXPECT_EQ(tls.server_names[1].value, "spiffe://cluster.local/ns/c/");
  EXPECT_EQ(tls.sni, "outbound_.7000_._.echo.a.svc.cluster.local");
  // The first exact matcher is the server_id label.
  EXPECT_EQ(c->tls_identity, "spiffe://cluster.local/ns/a/sa/b");
}

TEST(ConvertCluster, DnsClusterWithAnUpstreamTlsContext) {
  Cluster cluster =
      DnsCluster("LOGICAL_DNS", Locality(Host("echo.mesh.test", 7000)));
  *cluster.mutable_transport_socket() =
      TlsCluster(kIstioContext).transport_socket();
  absl::StatusOr<ClusterResource> c = ConvertCluster(cluster, TestProviders());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->discovery, ClusterResource::Discovery::kLogicalDns);
  ASSERT_NE(c->tls, nullptr);
  EXPECT_EQ(c->tls->certificates.trust_roots_file, "/certs/ca.pem");
  EXPECT_EQ(c->tls->sni, "outbound_.7000_._.echo.a.svc.cluster.local");
  EXPECT_EQ(c->tls_identity, "spiffe://cluster.local/ns/a/sa/b");
  // Its refusals as an EDS cluster's.
  cluster = DnsCluster("STRICT_DNS", Locality(Host("echo.mesh.test", 7000)));
  *cluster.mutable_transport_socket() =
      TlsCluster("common_tls_context {}").transport_socket();
  c = ConvertCluster(cluster, TestProviders());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(),
              HasSubstr("transport_socket.typed_config.common_tls_context."
                        "validation_context: missing"));
}

TEST(ConvertCluster, TlsWithoutAClientCertificateAndWithTypedMatchers) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(
      TlsCluster(R"pb(
        common_tls_context {
          validation_context {
            ca_certificate_provider_instance { instance_name: "roots" }
            match_typed_subject_alt_names {
              san_type: DNS
              matcher { suffix: ".echo.svc" ignore_case: true }
            }
            match_typed_subject_alt_names {
              san_type: IP_ADDRESS
              matcher { exact: "10.0.0.1" }
            }
          }
        }
      )pb"),
      TestProviders());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_NE(c->tls, nullptr);
  EXPECT_TRUE(c->tls->certificates.cert_chain_file.empty());
  EXPECT_TRUE(c->tls->certificates.private_key_file.empty());
  EXPECT_EQ(c->tls->certificates.trust_roots_file, "/roots/ca.pem");
  EXPECT_EQ(c->tls->certificates.refresh_interval, absl::Seconds(5));
  ASSERT_EQ(c->tls->server_names.size(), 2u);
  EXPECT_EQ(c->tls->server_names[0].san_type, ServerNameMatcher::SanType::kDns);
  EXPECT_TRUE(c->tls->server_names[0].ignore_case);
  EXPECT_EQ(c->tls->server_names[1].san_type, ServerNameMatcher::SanType::kIp);
  EXPECT_EQ(c->tls_identity, "10.0.0.1");
}

TEST(ConvertCluster, TlsContextRefusals) {
  const std::string ca =
      "ca_certificate_provider_instance { instance_name: \"default\" }";
  struct Case {
    std::string context;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"common_tls_context {}",
       "transport_socket.typed_config.common_tls_context.validation_context: "
       "missing"},
      {"common_tls_context { validation_context {} }",
       "validation_context.ca_certificate_provider_instance: missing"},
      {"common_tls_context { validation_context { "
       "ca_certificate_provider_instance { instance_name: \"nope\" } } }",
       "ca_certificate_provider_instance.instance_name: 'nope' is not a "
       "certificate provider of the bootstrap"},
      {"common_tls_context { validation_context { "
       "ca_certificate_provider_instance { instance_name: \"vault\" } } }",
       "'vault' is a 'vault' provider; mesh supports file_watcher"},
      {"common_tls_context { tls_certificate_provider_instance { "
       "instance_name: \"roots\" } validation_context { " +
           ca + " } }",
       "tls_certificate_provider_instance.instance_name: 'roots' has no "
       "certificate_file"},
      {"common_tls_context { tls_params {} validation_context { " + ca + " } }",
       "common_tls_context.tls_params: not supported"},
      {"common_tls_context { custom_handshaker {} validation_context { " + ca +
           " } }",
       "common_tls_context.custom_handshaker: not supported"},
      {"common_tls_context { tls_certificates {} validation_context { " + ca +
           " } }",
       "common_tls_context.tls_certificates: not supported"},
      {"common_tls_context { tls_certificate_sds_secret_configs { name: "
       "\"x\" } validation_context { " +
           ca + " } }",
       "tls_certificate_sds_secret_configs: not supported"},
      {"common_tls_context { tls_certificate_provider_instance { "
       "instance_name: \"default\" } "
       "tls_certificate_certificate_provider_instance { instance_name: "
       "\"roots\" } validation_context { " +
           ca + " } }",
       "tls_certificate_certificate_provider_instance: names instance 'roots' "
       "but tls_certificate_provider_instance names 'default'"},
      {"common_tls_context { combined_validation_context { "
       "validation_context_certificate_provider_instance { instance_name: "
       "\"roots\" } default_validation_context { " +
           ca + " } } }",
       "combined_validation_context.validation_context_certificate_provider_"
       "instance: names instance 'roots' but combined_validation_context."
       "default_validation_context.ca_certificate_provider_instance names "
       "'default'"},
      {"common_tls_context { validation_context_sds_secret_config {} }",
       "validation_context_sds_secret_config: not supported"},
      {"common_tls_context { combined_validation_context {} }",
       "combined_validation_context.default_validation_context."
       "ca_certificate_provider_instance: missing"},
      {"common_tls_context { validation_context { " + ca +
           " } } auto_sni_san_validation: true",
       "transport_socket.typed_config.auto_sni_san_validation: not supported"},
      {"common_tls_context { validation_context { " + ca +
           " verify_certificate_spki: \"x\" } }",
       "validation_context.verify_certificate_spki: not supported"},
      {"common_tls_context { validation_context { " + ca +
           " verify_certificate_hash: \"x\" } }",
       "verify_certificate_hash: not supported"},
      {"common_tls_context { validation_context { " + ca +
           " require_signed_certificate_timestamp {} } }",
       "require_signed_certificate_timestamp: not supported"},
      {"common_tls_context { validation_context { " + ca + " crl {} } }",
       "validation_context.crl: not supported"},
      {"common_tls_context { validation_context { " + ca +
           " custom_validator_config {} } }",
       "custom_validator_config: not supported"},
      {"common_tls_context { validation_context { " + ca +
           " match_subject_alt_names { safe_regex { regex: \"(\" } } } }",
       "match_subject_alt_names[0].safe_regex.regex: invalid RE2 '('"},
      {"common_tls_context { validation_context { " + ca +
           " match_subject_alt_names { exact: \"\" } } }",
       "match_subject_alt_names[0].match_pattern: exact matcher with an "
       "empty value"},
      {"common_tls_context { validation_context { " + ca +
           " match_subject_alt_names {} } }",
       "match_subject_alt_names[0].match_pattern: missing"},
      {"common_tls_context { validation_context { " + ca +
           " match_typed_subject_alt_names { san_type: OTHER_NAME matcher { "
           "exact: \"x\" } } } }",
       "match_typed_subject_alt_names[0].san_type: OTHER_NAME is not "
       "supported"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(TlsClusterError(c.context), HasSubstr(c.error)) << c.context;
  }
  // Another kind of transport socket.
  Cluster raw = EdsCluster("");
  raw.mutable_transport_socket()->set_name("envoy.transport_sockets.raw");
  raw.mutable_transport_socket()->mutable_typed_config()->set_type_url(
      "type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3."
      "RawBuffer");
  EXPECT_THAT(ClusterError(raw),
              HasSubstr("transport_socket.typed_config: envoy.extensions."
                        "transport_sockets.raw_buffer.v3.RawBuffer is not "
                        "supported"));
  // A name without a config.
  EXPECT_THAT(
      ClusterError(EdsCluster(
          "transport_socket { name: \"envoy.transport_sockets.tls\" }")),
      HasSubstr("transport_socket.typed_config: missing"));
  // An empty transport socket is plaintext.
  absl::StatusOr<ClusterResource> plain =
      ConvertCluster(EdsCluster("transport_socket {}"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->tls, nullptr);
  // Without the bootstrap's providers, Istio's context is refused.
  EXPECT_THAT(ClusterError(TlsCluster(kIstioContext)),
              HasSubstr("'default' is not a certificate provider"));
}

// What older istiod versions send: the deprecated provider-instance fields
// alone, or beside the current ones for older clients.
TEST(ConvertCluster, DeprecatedProviderInstanceFieldsAreRead) {
  absl::StatusOr<ClusterResource> alone = ConvertCluster(
      TlsCluster(R"pb(
        common_tls_context {
          tls_certificate_certificate_provider_instance {
            instance_name: "default"
            certificate_name: "default"
          }
          combined_validation_context {
            default_validation_context {
              match_subject_alt_names { exact: "spiffe://td/ns/a/sa/b" }
            }
            validation_context_certificate_provider_instance {
              instance_name: "roots"
              certificate_name: "ROOTCA"
            }
          }
        }
      )pb"),
      TestProviders());
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(alone->tls->certificates.cert_chain_file, "/certs/cert.pem");
  EXPECT_EQ(alone->tls->certificates.trust_roots_file, "/roots/ca.pem");
  ASSERT_EQ(alone->tls->server_names.size(), 1u);
  EXPECT_EQ(alone->tls->server_names[0].value, "spiffe://td/ns/a/sa/b");

  absl::StatusOr<ClusterResource> both = ConvertCluster(
      TlsCluster(R"pb(
        common_tls_context {
          tls_certificate_provider_instance { instance_name: "default" }
          tls_certificate_certificate_provider_instance {
            instance_name: "default"
          }
          combined_validation_context {
            default_validation_context {
              ca_certificate_provider_instance { instance_name: "default" }
            }
            validation_context_certificate_provider_instance {
              instance_name: "default"
            }
          }
        }
      )pb"),
      TestProviders());
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->tls->certificates.trust_roots_file, "/certs/ca.pem");

  // The oneof's deprecated member: roots only, no SAN check.
  absl::StatusOr<ClusterResource> roots =
      ConvertCluster(TlsCluster(R"pb(
                       common_tls_context {
                         validation_context_certificate_provider_instance {
                           instance_name: "roots"
                         }
                       }
                     )pb"),
                     TestProviders());
  ASSERT_TRUE(roots.ok()) << roots.status();
  EXPECT_EQ(roots->tls->certificates.trust_roots_file, "/roots/ca.pem");
  EXPECT_TRUE(roots->tls->server_names.empty());
}

// Envoy: with typed SAN matchers, the untyped ones are ignored (they would
// accept more).
TEST(ConvertCluster, TypedSanMatchersReplaceTheUntypedOnes) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(
      TlsCluster(R"pb(
        common_tls_context {
          validation_context {
            ca_certificate_provider_instance { instance_name: "default" }
            match_subject_alt_names { prefix: "spiffe://" }
            match_typed_subject_alt_names {
              san_type: URI
              matcher { exact: "spiffe://td/ns/a/sa/b" }
            }
          }
        }
      )pb"),
      TestProviders());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->tls->server_names.size(), 1u);
  EXPECT_EQ(c->tls->server_names[0].kind, ServerNameMatcher::Kind::kExact);
  EXPECT_EQ(c->tls->server_names[0].san_type, ServerNameMatcher::SanType::kUri);
}

TEST(ConvertCluster, TooManySanMatchersAreRefused) {
  std::string context =
      "common_tls_context { validation_context { "
      "ca_certificate_provider_instance { instance_name: \"default\" } ";
  for (int i = 0; i < 1001; ++i) {
    absl::StrAppend(&context, "match_subject_alt_names { exact: \"n", i,
                    "\" } ");
  }
  absl::StrAppend(&context, "} }");
  EXPECT_THAT(TlsClusterError(context),
              HasSubstr("match_subject_alt_names: more than 1000 matchers"));
}

TEST(ConvertCluster, CircuitBreakerTakesTheFirstDefaultThreshold) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(EdsCluster(
      "circuit_breakers { thresholds { priority: HIGH max_requests { value: 5 "
      "} } thresholds { max_requests { value: 7 } } thresholds { priority: "
      "DEFAULT max_requests { value: 9 } } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_requests, 7u);
  c = ConvertCluster(EdsCluster(
      "circuit_breakers { thresholds { priority: DEFAULT } thresholds { "
      "priority: DEFAULT max_requests { value: 9 } } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_requests, 1024u);
}

TEST(ConvertCluster, OutlierDetectionDefaults) {
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(EdsCluster("outlier_detection {}"));
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->outlier_detection.has_value());
  const OutlierDetection& od = *c->outlier_detection;
  EXPECT_EQ(od.interval, absl::Seconds(10));
  EXPECT_EQ(od.base_ejection_time, absl::Seconds(30));
  EXPECT_EQ(od.max_ejection_time, absl::Seconds(300));
  EXPECT_EQ(od.max_ejection_percent, 10u);
  EXPECT_EQ(od.consecutive_5xx, 5u);
  EXPECT_EQ(od.enforcing_consecutive_5xx, 100u);
  // gRFC A50: enforcing_success_rate defaults to 100, so success-rate
  // ejection is on; enforcing_failure_percentage defaults to 0: off.
  ASSERT_TRUE(od.success_rate.has_value());
  EXPECT_EQ(od.success_rate->stdev_factor, 1900u);
  EXPECT_EQ(od.success_rate->enforcement_percentage, 100u);
  EXPECT_EQ(od.success_rate->minimum_hosts, 5u);
  EXPECT_EQ(od.success_rate->request_volume, 100u);
  EXPECT_FALSE(od.failure_percentage.has_value());
}

TEST(ConvertCluster, OutlierDetectionFields) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(EdsCluster(
      "outlier_detection { interval { seconds: 1 } base_ejection_time { "
      "seconds: 2 } max_ejection_time { seconds: 3 } max_ejection_percent { "
      "value: 50 } enforcing_success_rate { value: 0 } "
      "success_rate_stdev_factor { value: 1000 } "
      "enforcing_failure_percentage { value: 80 } "
      "failure_percentage_threshold { value: 60 } "
      "failure_percentage_minimum_hosts { value: 3 } "
      "failure_percentage_request_volume { value: 20 } "
      "consecutive_5xx { value: 7 } enforcing_consecutive_5xx { value: 0 } "
      "}"));
  ASSERT_TRUE(c.ok()) << c.status();
  const OutlierDetection& od = *c->outlier_detection;
  EXPECT_EQ(od.consecutive_5xx, 7u);
  EXPECT_EQ(od.enforcing_consecutive_5xx, 0u);
  EXPECT_EQ(od.interval, absl::Seconds(1));
  EXPECT_EQ(od.base_ejection_time, absl::Seconds(2));
  EXPECT_EQ(od.max_ejection_time, absl::Seconds(3));
  EXPECT_EQ(od.max_ejection_percent, 50u);
  EXPECT_FALSE(od.success_rate.has_value());
  ASSERT_TRUE(od.failure_percentage.has_value());
  EXPECT_EQ(od.failure_percentage->threshold, 60u);
  EXPECT_EQ(od.failure_percentage->enforcement_percentage, 80u);
  EXPECT_EQ(od.failure_percentage->minimum_hosts, 3u);
  EXPECT_EQ(od.failure_percentage->request_volume, 20u);

  c = ConvertCluster(EdsCluster(
      "outlier_detection { enforcing_success_rate { value: 40 } "
      "success_rate_stdev_factor { value: 1000 } success_rate_minimum_hosts { "
      "value: 2 } success_rate_request_volume { value: 10 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->outlier_detection->success_rate.has_value());
  EXPECT_EQ(c->outlier_detection->success_rate->enforcement_percentage, 40u);
  EXPECT_EQ(c->outlier_detection->success_rate->stdev_factor, 1000u);
  EXPECT_EQ(c->outlier_detection->success_rate->minimum_hosts, 2u);
  EXPECT_EQ(c->outlier_detection->success_rate->request_volume, 10u);
}

TEST(ConvertCluster, OutlierDetectionRefusals) {
  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"max_ejection_percent { value: 101 }",
       "outlier_detection.max_ejection_percent: 101 is above 100"},
      {"enforcing_success_rate { value: 101 }",
       "outlier_detection.enforcing_success_rate: 101 is above 100"},
      {"enforcing_failure_percentage { value: 200 }",
       "outlier_detection.enforcing_failure_percentage: 200 is above 100"},
      {"enforcing_failure_percentage { value: 1 } "
       "failure_percentage_threshold { value: 101 }",
       "outlier_detection.failure_percentage_threshold: 101 is above 100"},
      {"interval { seconds: -1 }",
       "outlier_detection.interval.seconds: -1 is outside"},
      {"base_ejection_time { nanos: -1 }",
       "outlier_detection.base_ejection_time.nanos: -1 is outside"},
      {"max_ejection_time { seconds: 315576000001 }",
       "outlier_detection.max_ejection_time.seconds: 315576000001 is outside"},
      {"enforcing_consecutive_5xx { value: 101 }",
       "outlier_detection.enforcing_consecutive_5xx: 101 is above 100"},
      {"interval {}", "outlier_detection.interval: must be > 0"},
      {"base_ejection_time { seconds: 0 }",
       "outlier_detection.base_ejection_time: must be > 0"},
      {"max_ejection_time { nanos: 0 }",
       "outlier_detection.max_ejection_time: must be > 0"},
  };
  for (const auto& [od, problem] : cases) {
    EXPECT_THAT(ClusterError(
                    EdsCluster(absl::StrCat("outlier_detection { ", od, " }"))),
                HasSubstr(problem))
        << od;
  }
}

// What the balancers get of an outlier_detection (BackendPolicy::Ejection).
TEST(EjectionOf, EnvoysFieldsBecomeTheBalancersEjection) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(EdsCluster(
      "outlier_detection { interval { seconds: 4 } base_ejection_time { "
      "seconds: 60 } max_ejection_time { seconds: 20 } max_ejection_percent "
      "{ value: 30 } consecutive_5xx { value: 3 } "
      "enforcing_failure_percentage { value: 90 } "
      "failure_percentage_threshold { value: 70 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  BackendPolicy::Ejection e = EjectionOf(*c->outlier_detection);
  EXPECT_EQ(e.consecutive_failures, 3u);
  EXPECT_EQ(e.base, absl::Seconds(60));
  EXPECT_EQ(e.max, absl::Seconds(60));  // max below base: base
  EXPECT_DOUBLE_EQ(e.max_share, 0.3);
  EXPECT_EQ(e.interval.interval, absl::Seconds(4));
  ASSERT_TRUE(e.interval.success_rate.has_value());  // on by default
  EXPECT_EQ(e.interval.success_rate->stdev_factor, 1900u);
  ASSERT_TRUE(e.interval.failure_percentage.has_value());
  EXPECT_EQ(e.interval.failure_percentage->threshold, 70u);
  EXPECT_EQ(e.interval.failure_percentage->enforcement_percentage, 90u);
  EXPECT_EQ(e.interval.failure_percentage->minimum_hosts, 5u);
  EXPECT_EQ(e.interval.failure_percentage->request_volume, 50u);

  // enforcing_consecutive_5xx 0 turns consecutive failures off; Istio sends
  // it so for consecutive5xxErrors: 0.
  c = ConvertCluster(
      EdsCluster("outlier_detection { enforcing_consecutive_5xx { value: 0 } "
                 "enforcing_success_rate { value: 0 } }"));
  ASSERT_TRUE(c.ok()) << c.status();
  e = EjectionOf(*c->outlier_detection);
  EXPECT_EQ(e.consecutive_failures, 0u);
  EXPECT_EQ(e.max, absl::Seconds(300));
  EXPECT_FALSE(e.interval.success_rate.has_value());
  EXPECT_FALSE(e.interval.failure_percentage.has_value());
}

// --- ClusterLoadAssignment ---------------------------------------------------

std::string EndpointsError(absl::string_view text) {
  absl::StatusOr<EndpointsResource> e =
      ConvertClusterLoadAssignment(Parse<ClusterLoadAssignment>(text));
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(e.status().message());
}

// An lb_endpoints entry for `ip`:`port`.
std::string At(absl::string_view ip, int port, absl::string_view more = "") {
  return absl::StrCat(
      "lb_endpoints { endpoint { address { socket_address { "
      "address: \"",
      ip, "\" port_value: ", port, " } } } ", more, " }");
}

Endpoint Labelled(std::string address, uint32_t weight,
                  std::map<std::string, std::string> labels) {
  Endpoint e(std::move(address), weight);
  e.labels = std::move(labels);
  return e;
}

TEST(ConvertClusterLoadAssignment, PrioritiesLocalitiesAndHealth) {
  absl::StatusOr<EndpointsResource> e =
      ConvertClusterLoadAssignment(Parse<ClusterLoadAssignment>(absl::StrCat(
          "cluster_name: \"echo\" "
          "endpoints { locality { region: \"eu\" zone: \"eu-b\" } priority: 1 "
          "  load_balancing_weight { value: 3 } ",
          At("10.0.0.3", 7000), " } ",
          "endpoints { locality { region: \"eu\" zone: \"eu-a\" sub_zone: "
          "\"r1\" } load_balancing_weight { value: 2 } ",
          At("10.0.0.1", 7000, "load_balancing_weight { value: 5 }"),
          At("10.0.0.2", 7000, "health_status: HEALTHY"),
          At("10.0.0.9", 7000, "health_status: UNHEALTHY"),
          At("10.0.0.8", 7000, "health_status: DRAINING"),
          At("not-an-ip", 0, "health_status: TIMEOUT"), " } ",
          "endpoints { priority: 1 load_balancing_weight { value: 1 } ",
          At("fd00::7", 8443, "health_status: UNKNOWN"), " }")));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->cluster_name, "echo");
  ASSERT_EQ(e->localities.size(), 3u);
  const LocalityEndpoints& a = e->localities[0];
  EXPECT_EQ(a.region, "eu");
  EXPECT_EQ(a.zone, "eu-a");
  EXPECT_EQ(a.sub_zone, "r1");
  EXPECT_EQ(a.weight, 2u);
  EXPECT_EQ(a.priority, 0u);
  EXPECT_EQ(a.unhealthy, 3u);
  EXPECT_THAT(a.endpoints, ElementsAre(Endpoint("10.0.0.1:7000", 5),
                                       Endpoint("10.0.0.2:7000", 1)));
  // Served, they carry their locality's names as labels.
  const std::map<std::string, std::string> a_labels = {
      {"region", "eu"}, {"zone", "eu-a"}, {"sub_zone", "r1"}};
  EXPECT_THAT(EndpointsToServe(*e),
              ElementsAre(Labelled("10.0.0.1:7000", 5, a_labels),
                          Labelled("10.0.0.2:7000", 1, a_labels)));
  const LocalityEndpoints& b = e->localities[1];
  EXPECT_EQ(b.zone, "eu-b");
  EXPECT_EQ(b.sub_zone, "");
  EXPECT_EQ(b.weight, 3u);
  EXPECT_EQ(b.priority, 1u);
  EXPECT_EQ(b.unhealthy, 0u);
  EXPECT_THAT(b.endpoints, ElementsAre(Endpoint("10.0.0.3:7000", 1)));
  const LocalityEndpoints& c = e->localities[2];
  EXPECT_EQ(c.region, "");
  EXPECT_EQ(c.priority, 1u);
  EXPECT_THAT(c.endpoints, ElementsAre(Endpoint("[fd00::7]:8443", 1)));
  EXPECT_THAT(e->drop_overloads, IsEmpty());
}

TEST(ConvertClusterLoadAssignment, LocalityWithoutWeightIsLeftOutUnread) {
  absl::StatusOr<EndpointsResource> e =
      ConvertClusterLoadAssignment(Parse<ClusterLoadAssignment>(absl::StrCat(
          "endpoints { locality { zone: \"none\" } ", At("10.0.0.1", 0), " } ",
          "endpoints { locality { zone: \"zero\" } load_balancing_weight {} ",
          At("10.0.0.1", 1), " } ",
          "endpoints { locality { zone: \"kept\" } load_balancing_weight { "
          "value: 1 } ",
          At("10.0.0.1", 1), " } ",
          "endpoints { priority: 1 load_balancing_weight { value: 0 } ",
          At("10.0.0.5", 5), " }")));
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->localities.size(), 1u);
  EXPECT_EQ(e->localities[0].zone, "kept");
}

TEST(ConvertClusterLoadAssignment, PriorityGapIsRefused) {
  EXPECT_THAT(
      EndpointsError(absl::StrCat(
          "endpoints { load_balancing_weight { value: 1 } ", At("10.0.0.1", 1),
          " } endpoints { priority: 1 ", At("10.0.0.2", 1),
          " } endpoints { priority: 2 load_balancing_weight { value: 1 } ",
          At("10.0.0.3", 1), " }")),
      HasSubstr("endpoints[2].priority: 2 leaves a gap: priority 1 has no "
                "locality with a weight"));
  EXPECT_THAT(EndpointsError(absl::StrCat(
                  "endpoints { priority: 1 load_balancing_weight { value: 1 } ",
                  At("10.0.0.1", 1), " }")),
              HasSubstr("endpoints[0].priority: 1 leaves a gap: priority 0"));
}

TEST(ConvertClusterLoadAssignment, EndpointRefusals) {
  const std::pair<std::string, absl::string_view> cases[] = {
      {At("10.0.0.1", 0),
       "endpoints[0].lb_endpoints[0].endpoint.address.socket_address."
       "port_value: 0 is outside 1..65535"},
      {At("10.0.0.1", 65536),
       "endpoints[0].lb_endpoints[0].endpoint.address.socket_address."
       "port_value: 65536 is outside"},
      {At("echo.local", 7000),
       "endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address: "
       "'echo.local' is not an IP address"},
      {"lb_endpoints { endpoint { address {} } }",
       "endpoints[0].lb_endpoints[0].endpoint.address.socket_address: "
       "missing"},
      {"lb_endpoints {}", "endpoints[0].lb_endpoints[0].endpoint: missing"},
      {At("10.0.0.1", 1, "load_balancing_weight { value: 0 }"),
       "endpoints[0].lb_endpoints[0].load_balancing_weight: must be at least "
       "1"},
      {absl::StrCat(At("10.0.0.1", 1), At("10.0.0.2", 1), At("10.0.0.1", 1)),
       "endpoints[0].lb_endpoints[2].endpoint.address: duplicate endpoint "
       "address 10.0.0.1:1"},
      {absl::StrCat(At("10.0.0.1", 1,
                       "load_balancing_weight { value: "
                       "4294967295 }"),
                    At("10.0.0.2", 1)),
       "endpoints[0].lb_endpoints: the endpoint weights add up to more than "
       "2^32 - 1"},
  };
  for (const auto& [endpoints, problem] : cases) {
    EXPECT_THAT(EndpointsError(absl::StrCat(
                    "endpoints { load_balancing_weight { value: 1 } ",
                    endpoints, " }")),
                HasSubstr(problem))
        << endpoints;
  }
}

TEST(ConvertClusterLoadAssignment, SameAddressInTwoPrioritiesIsRefused) {
  EXPECT_THAT(
      EndpointsError(absl::StrCat(
          "endpoints { load_balancing_weight { value: 1 } ", At("fd00::1", 80),
          " } endpoints { priority: 1 ", "load_balancing_weight { value: 1 } ",
          At("FD00:0::1", 80), " }")),
      HasSubstr("endpoints[1].lb_endpoints[0].endpoint.address: duplicate "
                "endpoint address [fd00::1]:80"));
}

TEST(ConvertClusterLoadAssignment, LocalityRefusals) {
  EXPECT_THAT(
      EndpointsError(absl::StrCat(
          "endpoints { locality { zone: \"a\" } load_balancing_weight { value: "
          "1 } ",
          At("10.0.0.1", 1), " } endpoints { locality { zone: \"a\" } ",
          "load_balancing_weight { value: 1 } ", At("10.0.0.2", 1), " }")),
      HasSubstr("endpoints[1].locality: duplicate locality {region '', zone "
                "'a', sub_zone ''} in priority 0"));
  EXPECT_THAT(
      EndpointsError(absl::StrCat(
          "endpoints { locality { zone: \"a\" } load_balancing_weight { value: "
          "4294967295 } ",
          At("10.0.0.1", 1), " } endpoints { locality { zone: \"b\" } ",
          "load_balancing_weight { value: 1 } ", At("10.0.0.2", 1), " }")),
      HasSubstr("endpoints[1].load_balancing_weight: the locality weights of "
                "priority 0 add up to more than 2^32 - 1"));
}

TEST(ConvertClusterLoadAssignment, DropOverloads) {
  absl::StatusOr<EndpointsResource> e =
      ConvertClusterLoadAssignment(Parse<ClusterLoadAssignment>(
          "policy { drop_overloads { category: \"lb\" drop_percentage { "
          "numerator: 5 } } drop_overloads { category: \"throttle\" "
          "drop_percentage { numerator: 25 denominator: TEN_THOUSAND } } "
          "drop_overloads { category: \"all\" drop_percentage { numerator: "
          "2000000 denominator: MILLION } } }"));
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->drop_overloads.size(), 3u);
  EXPECT_EQ(e->drop_overloads[0].category, "lb");
  EXPECT_EQ(e->drop_overloads[0].per_million, 50'000u);
  EXPECT_EQ(e->drop_overloads[1].category, "throttle");
  EXPECT_EQ(e->drop_overloads[1].per_million, 2'500u);
  EXPECT_EQ(e->drop_overloads[2].per_million, 1'000'000u);
  EXPECT_THAT(e->localities, IsEmpty());

  EXPECT_THAT(
      EndpointsError("policy { drop_overloads { drop_percentage {} } }"),
      HasSubstr("policy.drop_overloads[0].category: empty"));
  EXPECT_THAT(EndpointsError("policy { drop_overloads { category: \"x\" } }"),
              HasSubstr("policy.drop_overloads[0].drop_percentage: missing"));
  EXPECT_THAT(EndpointsError("policy { drop_overloads { category: \"x\" "
                             "drop_percentage { denominator: 3 } } }"),
              HasSubstr("policy.drop_overloads[0].drop_percentage.denominator: "
                        "unknown value 3"));
}

TEST(ConvertClusterLoadAssignment, AtMost100000Endpoints) {
  ClusterLoadAssignment cla;
  auto* locality = cla.add_endpoints();
  locality->mutable_load_balancing_weight()->set_value(1);
  for (int i = 0; i < 100'001; ++i) locality->add_lb_endpoints();
  absl::StatusOr<EndpointsResource> e = ConvertClusterLoadAssignment(cla);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(),
              HasSubstr("endpoints: 100001 endpoints, more than 100000"));
}

}  // namespace
}  // namespace mesh::internal::xds

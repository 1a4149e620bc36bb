// Listeners from the wire (src/discovery/xds/xds_convert.h): the
// HttpConnectionManager, its route source and HTTP filters (fault, router,
// unknown ones), stream durations; every refusal with the field path and
// the problem it names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "src/discovery/xds/xds_convert.h"
#include "tests/support/xds_convert_fixtures.h"

namespace mesh::internal::xds {
namespace {

using namespace fixtures;  // NOLINT: the shared helpers, types, matchers

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

}  // namespace
}  // namespace mesh::internal::xds

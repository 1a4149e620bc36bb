// RouteConfigurations from the wire (src/discovery/xds/xds_convert.h):
// matches, actions, timeouts, retries, hashes, fault overrides, virtual
// hosts and limits; every refusal with the field path and the problem it
// names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/discovery/xds/xds_service_config.h"
#include "src/route/route_table.h"
#include "tests/support/xds_convert_fixtures.h"

namespace mesh::internal::xds {
namespace {

using namespace fixtures;  // NOLINT: the shared helpers, types, matchers

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

TEST(ConvertRouteConfiguration, PerTryTimeoutIsEachAttemptsLimit) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" retry_policy { "
      "retry_on: \"unavailable\" per_try_timeout { nanos: 50000000 } } }");
  EXPECT_EQ(r.route.retry_policy.per_try_timeout, absl::Milliseconds(50));
  // Zero: none.
  r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" retry_policy { "
      "retry_on: \"unavailable\" per_try_timeout {} } }");
  EXPECT_EQ(r.route.retry_policy.per_try_timeout, absl::InfiniteDuration());
  EXPECT_THAT(RouteError("match { prefix: \"/\" } route { cluster: \"c\" "
                         "retry_policy { retry_on: \"unavailable\" "
                         "per_try_timeout { seconds: -1 } } }"),
              HasSubstr("routes[0].route.retry_policy.per_try_timeout."
                        "seconds: -1 is outside"));
}

TEST(ConvertRouteConfiguration, HedgeOnPerTryTimeoutHedgesInPlaceOfRetrying) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" retry_policy { "
      "retry_on: \"unavailable,internal\" num_retries { value: 2 } "
      "per_try_timeout { nanos: 80000000 } } "
      "hedge_policy { hedge_on_per_try_timeout: true } }");
  ASSERT_TRUE(r.route.hedge_policy.has_value());
  EXPECT_FALSE(r.route.is_retryable);
  EXPECT_EQ(r.route.hedge_policy->max_attempts, 3u);
  EXPECT_EQ(r.route.hedge_policy->delay, absl::Milliseconds(80));
  EXPECT_THAT(
      r.route.hedge_policy->non_fatal_codes,
      ElementsAre(absl::StatusCode::kUnavailable, absl::StatusCode::kInternal));
}

TEST(ConvertRouteConfiguration, InitialRequestsAreSentAtOnce) {
  RouteResource r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" "
      "hedge_policy { initial_requests { value: 3 } } }");
  ASSERT_TRUE(r.route.hedge_policy.has_value());
  EXPECT_EQ(r.route.hedge_policy->max_attempts, 3u);
  EXPECT_EQ(r.route.hedge_policy->delay, absl::ZeroDuration());
  // One initial request and no per-try hedging: no hedging.
  r = OneRoute(
      "match { prefix: \"/\" } route { cluster: \"c\" "
      "hedge_policy { initial_requests { value: 1 } } }");
  EXPECT_FALSE(r.route.hedge_policy.has_value());
}

TEST(ConvertRouteConfiguration, VirtualHostHedgePolicyIsTheDefault) {
  absl::StatusOr<RouteConfigResource> config =
      ConvertRouteConfiguration(Parse<RouteConfiguration>(
          "virtual_hosts { domains: \"*\" "
          "  hedge_policy { initial_requests { value: 2 } } "
          "  routes { match { prefix: \"/a\" } route { cluster: \"c\" } } "
          "  routes { match { prefix: \"/b\" } route { cluster: \"c\" "
          "    hedge_policy { initial_requests { value: 4 } } } } }"));
  ASSERT_TRUE(config.ok()) << config.status();
  const std::vector<RouteResource>& routes = config->virtual_hosts[0].routes;
  ASSERT_EQ(routes.size(), 2u);
  ASSERT_TRUE(routes[0].route.hedge_policy.has_value());
  EXPECT_EQ(routes[0].route.hedge_policy->max_attempts, 2u);
  ASSERT_TRUE(routes[1].route.hedge_policy.has_value());
  EXPECT_EQ(routes[1].route.hedge_policy->max_attempts, 4u);
}

TEST(ConvertRouteConfiguration, HedgePolicyRefusals) {
  const std::pair<absl::string_view, absl::string_view> cases[] = {
      {"hedge_policy { initial_requests { value: 6 } }",
       "routes[0].route.hedge_policy.initial_requests: 6 is not within 1..5"},
      {"hedge_policy { initial_requests { value: 0 } }",
       "routes[0].route.hedge_policy.initial_requests: 0 is not within 1..5"},
      {"hedge_policy { hedge_on_per_try_timeout: true }",
       "routes[0].route.hedge_policy.hedge_on_per_try_timeout: needs the "
       "retry policy's per_try_timeout"},
      {"hedge_policy { additional_request_chance { numerator: 10 } }",
       "routes[0].route.hedge_policy.additional_request_chance: not "
       "supported"},
      {"retry_policy { retry_on: \"unavailable\" per_try_timeout { seconds: "
       "1 } } hedge_policy { initial_requests { value: 2 } "
       "hedge_on_per_try_timeout: true }",
       "routes[0].route.hedge_policy.hedge_on_per_try_timeout: not supported "
       "with initial_requests above 1"},
  };
  for (const auto& [policy, message] : cases) {
    EXPECT_THAT(RouteError(absl::StrCat("match { prefix: \"/\" } route { "
                                        "cluster: \"c\" ",
                                        policy, " }")),
                HasSubstr(message))
        << policy;
  }
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

}  // namespace
}  // namespace mesh::internal::xds

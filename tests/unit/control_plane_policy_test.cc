// The local control plane's outbound policies: the config file's "policy"
// part, what is refused naming the field, and what PolicyFor serves — read
// back through the client's own ConvertPolicy, so a policy written in the
// file arrives as the routes it says, with nothing dropped.
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/discovery/linkerd/convert_policy.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/policy_resources.h"

namespace mesh::controlplane {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

namespace out = ::io::linkerd::proxy::outbound;

// The config with `policy` as the policy of books.local:7001.
std::string WithPolicy(const std::string& policy) {
  return R"({"targets": {"books.local:7001": {"endpoints": [],
      "policy": )" +
         policy + R"(}, "books-v2.local:7001": {}}})";
}

internal::linkerd::PolicyConversion Served(const std::string& policy) {
  absl::StatusOr<Config> c = ParseConfig(WithPolicy(policy));
  EXPECT_TRUE(c.ok()) << c.status();
  if (!c.ok()) return {};
  absl::StatusOr<out::OutboundPolicy> wire = PolicyFor(*c, "books.local:7001");
  EXPECT_TRUE(wire.ok()) << wire.status();
  absl::StatusOr<internal::linkerd::PolicyConversion> converted =
      internal::linkerd::ConvertPolicy(*wire, "books.local:7001");
  EXPECT_TRUE(converted.ok()) << converted.status();
  return converted.ok() ? *converted : internal::linkerd::PolicyConversion{};
}

std::string ErrorOf(const std::string& policy) {
  absl::StatusOr<Config> c = ParseConfig(WithPolicy(policy));
  EXPECT_FALSE(c.ok());
  return std::string(c.status().message());
}

TEST(ControlPlanePolicyTest, AGrpcPolicyArrivesAsTheRoutesItSays) {
  internal::linkerd::PolicyConversion c = Served(R"({
    "protocol": "grpc",
    "failure_accrual": {"max_failures": 3, "min_backoff_ms": 500,
                        "max_backoff_ms": 4000},
    "routes": [{
      "name": "echo-split", "hosts": ["books.local"],
      "rules": [
        {"matches": [{"service": "mesh.echo.Echo", "method": "Echo",
                      "headers": [{"name": "x-canary", "exact": "1"}]}],
         "backends": [{"authority": "books.local:7001", "weight": 9},
                      {"authority": "books-v2.local:7001", "weight": 1}],
         "timeout_ms": 1500, "response_timeout_ms": 400,
         "idle_timeout_ms": 250,
         "retry": {"max_retries": 3, "codes": ["UNAVAILABLE", "INTERNAL"],
                   "min_backoff_ms": 10, "max_backoff_ms": 100},
         "request_headers": {"add": {"x-added": "yes"}, "remove": ["x-drop"]}},
        {"matches": [{"service": "mesh.echo.Echo"}],
         "failure_injector": {"code": 14, "message": "injected", "ratio": 0.25}}
      ]}]
  })");
  EXPECT_EQ(c.protocol, "grpc");
  EXPECT_EQ(c.parent, "Service local/books");
  ASSERT_EQ(c.config.routes.size(), 2u);
  // Service and method rank over service alone.
  const Route& split = c.config.routes[0];
  EXPECT_EQ(split.name, "echo-split");
  EXPECT_EQ(split.metrics_labels.at("route_kind"), "GRPCRoute");
  EXPECT_EQ(split.timeout, absl::Milliseconds(1500));
  EXPECT_EQ(split.response_timeout, absl::Milliseconds(400));
  EXPECT_EQ(split.idle_timeout, absl::Milliseconds(250));
  ASSERT_EQ(split.backends.size(), 2u);
  EXPECT_EQ(split.backends[0].authority, "books.local:7001");
  EXPECT_EQ(split.backends[0].weight, 9u);
  EXPECT_EQ(split.backends[1].authority, "books-v2.local:7001");
  EXPECT_TRUE(split.is_retryable);
  EXPECT_EQ(split.retry_policy.max_attempts, 4u);
  EXPECT_THAT(
      split.retry_policy.retry_on,
      ElementsAre(absl::StatusCode::kInternal, absl::StatusCode::kUnavailable));
  EXPECT_EQ(split.request_headers.add.size(), 1u);
  EXPECT_THAT(split.request_headers.remove, ElementsAre("x-drop"));
  const Route& injected = c.config.routes[1];
  EXPECT_EQ(injected.fault.abort_code, absl::StatusCode::kUnavailable);
  EXPECT_EQ(injected.fault.abort_per_million, 250000u);
  EXPECT_THAT(injected.fault.abort_message, HasSubstr("injected"));
  // Everything the file says is applied, failure accrual too.
  EXPECT_THAT(c.dropped, IsEmpty());
  ASSERT_TRUE(c.failure_accrual.has_value());
  EXPECT_EQ(c.failure_accrual->consecutive_failures, 3u);
  EXPECT_EQ(c.failure_accrual->base, absl::Milliseconds(500));
  EXPECT_EQ(c.failure_accrual->max, absl::Seconds(4));
}

TEST(ControlPlanePolicyTest, AnHttpPolicyArrivesAsTheRoutesItSays) {
  internal::linkerd::PolicyConversion c = Served(R"({
    "protocol": "http2",
    "routes": [{
      "name": "books-api", "hosts": ["*.local"],
      "rules": [
        {"matches": [{"path": {"prefix": "/books"}, "method": "GET",
                      "query": [{"name": "v", "regex": "[0-9]+"}]}],
         "backends": [{"authority": "books-v2.local:7001"},
                      {"authority": "books.local:7001"}],
         "first_available": true,
         "retry": {"max_retries": 1, "statuses": [[500, 599]]},
         "response_headers": {"set": {"x-served-by": "mesh"}}},
        {"matches": [{"path": {"exact": "/books/1"}}],
         "failure_injector": {"status": 503}}
      ]}]
  })");
  EXPECT_EQ(c.protocol, "http2");
  EXPECT_THAT(c.dropped, IsEmpty());
  ASSERT_EQ(c.config.routes.size(), 2u);
  // The exact path ranks over the prefix, whatever the order in the file.
  EXPECT_EQ(c.config.routes[0].fault.abort_per_million, 1000000u);
  const Route& api = c.config.routes[1];
  EXPECT_TRUE(api.backends_first_available);
  EXPECT_EQ(api.backends[0].authority, "books-v2.local:7001");
  ASSERT_EQ(api.retry_policy.retry_on_http_status.size(), 1u);
  EXPECT_EQ(api.retry_policy.retry_on_http_status[0].min, 500u);
  EXPECT_EQ(api.response_headers.set.size(), 1u);
}

TEST(ControlPlanePolicyTest, ATargetWithoutAPolicyGetsLinkerdsDefault) {
  absl::StatusOr<Config> c = ParseConfig(WithPolicy(R"({"protocol": "grpc"})"));
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<out::OutboundPolicy> wire =
      PolicyFor(*c, "books-v2.local:7001");
  ASSERT_TRUE(wire.ok()) << wire.status();
  ASSERT_TRUE(wire->protocol().has_detect());
  ASSERT_EQ(wire->protocol().detect().http2().routes_size(), 1);
  EXPECT_EQ(wire->protocol().detect().http2().routes(0).metadata().default_(),
            "http");
  absl::StatusOr<internal::linkerd::PolicyConversion> converted =
      internal::linkerd::ConvertPolicy(*wire, "books-v2.local:7001");
  ASSERT_TRUE(converted.ok()) << converted.status();
  EXPECT_THAT(converted->dropped, IsEmpty());
  ASSERT_EQ(converted->config.routes.size(), 1u);
  EXPECT_EQ(converted->config.routes[0].backends[0].authority,
            "books-v2.local:7001");
  // A target the file does not name is not found, as Linkerd answers.
  absl::StatusOr<out::OutboundPolicy> unknown = PolicyFor(*c, "nope.local:1");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(), HasSubstr("nope.local:1"));
}

TEST(ControlPlanePolicyTest, MistakesAreRefusedNamingTheField) {
  EXPECT_THAT(ErrorOf(R"({"protocol": "http3"})"),
              HasSubstr(".policy.protocol: 'http3': expected grpc"));
  EXPECT_THAT(ErrorOf(R"({"routes": [{"name": "r", "rules": []}]})"),
              HasSubstr(".policy.routes[0].rules: a route needs at least "
                        "one rule"));
  EXPECT_THAT(
      ErrorOf(R"({"protocol": "grpc", "routes": [{"name": "r", "rules": [
                {"matches": [{"path": {"exact": "/x"}}]}]}]})"),
      HasSubstr(".policy.routes[0].rules[0].matches[0].path: unknown field"));
  EXPECT_THAT(
      ErrorOf(R"({"protocol": "grpc", "routes": [{"name": "r", "rules": [
                {"retry": {"codes": ["NOT_FOUND"]}}]}]})"),
      HasSubstr("retry.codes[0]: 'NOT_FOUND': a GRPCRoute retries only on"));
  EXPECT_THAT(ErrorOf(R"({"routes": [{"name": "r", "rules": [
                {"matches": [{"headers": [{"name": "X-Up", "exact": "1"}]}]}]}]})"),
              HasSubstr("must be lower case"));
  EXPECT_THAT(ErrorOf(R"({"routes": [{"name": "r", "rules": [
                {"failure_injector": {"status": 500, "ratio": 2}}]}]})"),
              HasSubstr("failure_injector.ratio: expected a number in 0..1"));
  EXPECT_THAT(ErrorOf(R"({"protocol": "opaque", "routes": []})"),
              HasSubstr("an opaque policy has no routes"));
  EXPECT_THAT(ErrorOf(R"({"routes": [{"rules": [{}]}]})"),
              HasSubstr("name is required"));
}

TEST(ControlPlanePolicyTest,
     TheShippedSampleServesPoliciesTheClientTakesWhole) {
  std::ifstream in(std::string(MESH_SOURCE_DIR) +
                   "/tools/mesh-control-plane/sample-policy.json");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Config> c = ParseConfig(text.str());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->targets.size(), 4u);
  for (const auto& [target, spec] : c->targets) {
    absl::StatusOr<out::OutboundPolicy> wire = PolicyFor(*c, target);
    ASSERT_TRUE(wire.ok()) << wire.status();
    absl::StatusOr<internal::linkerd::PolicyConversion> converted =
        internal::linkerd::ConvertPolicy(*wire, target);
    ASSERT_TRUE(converted.ok()) << target << ": " << converted.status();
    EXPECT_THAT(converted->dropped, IsEmpty()) << target;
    EXPECT_FALSE(converted->config.routes.empty()) << target;
  }
}

TEST(ControlPlanePolicyTest, RegexesAreLeftForTheClientToJudge) {
  // The file can carry a hostile regex; the client drops its rule, naming
  // it, and keeps the others.
  internal::linkerd::PolicyConversion c = Served(R"({
    "routes": [{"name": "r", "rules": [
      {"matches": [{"path": {"regex": "(unclosed"}}]},
      {"matches": [{"path": {"prefix": "/"}}]}]}]
  })");
  ASSERT_EQ(c.config.routes.size(), 1u);
  EXPECT_THAT(c.dropped, ElementsAre(HasSubstr("r rule #0")));
}

}  // namespace
}  // namespace mesh::controlplane

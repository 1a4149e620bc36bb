// OutboundPolicies policies → ServiceConfig (src/discovery/linkerd/
// convert_policy): which route a request takes once the converted routes
// are compiled by the real route table (the proxy's ranking as first
// match), each match kind, backends, timeouts, retries, filters, labels,
// and what is refused or dropped. Policies are written by hand in
// protobuf text from upstream's field names.
#include <google/protobuf/text_format.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "linkerd/outbound.pb.h"
#include "src/discovery/linkerd/convert_policy.h"
#include "src/route/route_table.h"

namespace mesh::internal::linkerd {
namespace {

namespace out = ::io::linkerd::proxy::outbound;

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Headers = std::vector<std::pair<std::string, std::string>>;

out::OutboundPolicy Parse(const std::string& text) {
  out::OutboundPolicy p;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &p)) << text;
  return p;
}

// A backend that balances the endpoints of `path`, with its weight.
std::string Weighted(const std::string& path, uint32_t weight) {
  return absl::StrCat("backends { weight: ", weight,
                      " backend { backend { metadata { default: ",
                      "'svc' } balancer { discovery { dst { path: '", path,
                      "' } } peak_ewma {} } queue {} } } }");
}

// An HTTPRoute named `name` (hosts, then rules) in an http2 policy's text.
std::string HttpRoute(const std::string& name, const std::string& body) {
  return absl::StrCat(
      "routes { metadata { resource { group: 'gateway.networking.k8s.io' "
      "kind: 'HTTPRoute' namespace: 'ns' name: '",
      name, "' } } ", body, " }");
}

// A rule with these matches, to the default backend.
std::string Rule(const std::string& matches) {
  return absl::StrCat("rules { ", matches, " backends { random_available { ",
                      Weighted("books.ns.svc.cluster.local:8080", 1), " } } }");
}

out::OutboundPolicy Http2(const std::vector<std::string>& routes) {
  std::string text =
      "metadata { resource { group: 'core' kind: 'Service' namespace: 'ns' "
      "name: 'books' port: 8080 } } protocol { http2 { ";
  for (const std::string& r : routes) text += r;
  return Parse(text + " } }");
}

PolicyConversion Convert(const out::OutboundPolicy& p,
                         const std::string& authority = "books:8080") {
  absl::StatusOr<PolicyConversion> c = ConvertPolicy(p, authority);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : PolicyConversion();
}

// The route (its name) a request takes once the config is compiled.
class Routed {
 public:
  explicit Routed(const ServiceConfig& config) {
    std::vector<std::string> dropped;
    table_ = RouteTable::Build(config, &dropped);
    EXPECT_THAT(dropped, IsEmpty());
  }
  std::string For(absl::string_view path, absl::string_view method = "POST",
                  Headers headers = {}) const {
    const CompiledRoute& r = table_->Match({method, path, &headers});
    return r.is_default ? "(none)" : r.name;
  }
  const RouteTable& table() const { return *table_; }

 private:
  std::shared_ptr<const RouteTable> table_;
};

TEST(ConvertPolicyTest, EachHttpMatchKind) {
  PolicyConversion c = Convert(Http2({
      HttpRoute("exact", Rule("matches { path { exact: '/a/b' } }")),
      HttpRoute("prefix", Rule("matches { path { prefix: '/books/' } }")),
      HttpRoute("regex", Rule("matches { path { regex: '/r/[0-9]+' } }")),
      HttpRoute("header", Rule("matches { path { prefix: '/h' } headers { "
                               "name: 'X-Tier' exact: 'gold' } }")),
      HttpRoute("header-re", Rule("matches { path { prefix: '/h' } headers { "
                                  "name: 'x-tier' regex: 's.*' } }")),
      HttpRoute("query", Rule("matches { path { prefix: '/q' } query_params { "
                              "name: 'page' regex: '[0-9]+' } }")),
      HttpRoute("method", Rule("matches { path { prefix: '/m' } method { "
                               "registered: DELETE } }")),
  }));
  EXPECT_THAT(c.dropped, IsEmpty());
  Routed r(c.config);
  EXPECT_EQ(r.For("/a/b"), "exact");
  EXPECT_EQ(r.For("/a/b/c"), "(none)");
  // A prefix is whole segments, with or without the trailing '/'.
  EXPECT_EQ(r.For("/books"), "prefix");
  EXPECT_EQ(r.For("/books/1"), "prefix");
  EXPECT_EQ(r.For("/bookshelf"), "(none)");
  EXPECT_EQ(r.For("/r/12"), "regex");
  EXPECT_EQ(r.For("/r/12x"), "(none)");  // the whole path
  EXPECT_EQ(r.For("/h", "GET", {{"x-tier", "gold"}}), "header");
  EXPECT_EQ(r.For("/h", "GET", {{"x-tier", "silver"}}), "header-re");
  EXPECT_EQ(r.For("/h", "GET", {{"x-tier", "bronze"}}), "(none)");
  EXPECT_EQ(r.For("/q?page=3"), "query");
  EXPECT_EQ(r.For("/q?page=x"), "(none)");
  EXPECT_EQ(r.For("/m", "DELETE"), "method");
  EXPECT_EQ(r.For("/m", "GET"), "(none)");
  // No route: NOT_FOUND, as the proxy answers a gRPC call.
  EXPECT_TRUE(c.config.require_route_match);
  EXPECT_EQ(c.config.unmatched_route_code, absl::StatusCode::kNotFound);
  EXPECT_EQ(c.protocol, "http2");
  EXPECT_EQ(c.parent, "Service ns/books");
}

TEST(ConvertPolicyTest, TheMostSpecificMatchWinsNotTheFirstListed) {
  PolicyConversion c = Convert(Http2({
      HttpRoute("everything", Rule("")),
      HttpRoute("short", Rule("matches { path { prefix: '/a' } }")),
      HttpRoute("long", Rule("matches { path { prefix: '/a/b' } }")),
      HttpRoute("exact", Rule("matches { path { exact: '/a/b' } }")),
      HttpRoute("1-header", Rule("matches { path { prefix: '/a/b/c' } "
                                 "headers { name: 'x' regex: '.*' } }")),
      HttpRoute("2-headers", Rule("matches { path { prefix: '/a/b/c' } "
                                  "headers { name: 'x' regex: '.*' } "
                                  "headers { name: 'y' regex: '.*' } }")),
      HttpRoute("query", Rule("matches { path { prefix: '/a/b/c' } "
                              "headers { name: 'x' regex: '.*' } "
                              "query_params { name: 'q' regex: '.*' } }")),
      HttpRoute("method", Rule("matches { path { prefix: '/a/b/c' } "
                               "headers { name: 'x' regex: '.*' } "
                               "method { registered: GET } }")),
      HttpRoute("tie-first", Rule("matches { path { prefix: '/t' } }")),
      HttpRoute("tie-second", Rule("matches { path { prefix: '/t' } }")),
  }));
  Routed r(c.config);
  EXPECT_EQ(r.For("/z"), "everything");
  EXPECT_EQ(r.For("/a/x"), "short");
  EXPECT_EQ(r.For("/a/b/x"), "long");
  EXPECT_EQ(r.For("/a/b"), "exact");  // the whole path over an equal prefix
  Headers x{{"x", "1"}};
  Headers xy{{"x", "1"}, {"y", "1"}};
  EXPECT_EQ(r.For("/a/b/c", "POST", x), "1-header");
  EXPECT_EQ(r.For("/a/b/c", "POST", xy), "2-headers");
  EXPECT_EQ(r.For("/a/b/c?q=1", "POST", x), "query");      // a query, then
  EXPECT_EQ(r.For("/a/b/c", "GET", x), "method");          // a method
  EXPECT_EQ(r.For("/a/b/c?q=1", "GET", x), "query");       // query over method
  EXPECT_EQ(r.For("/a/b/c?q=1", "GET", xy), "2-headers");  // headers first
  EXPECT_EQ(r.For("/t"), "tie-first");
}

TEST(ConvertPolicyTest, OneRuleOfManyMatchesRanksEachMatch) {
  PolicyConversion c = Convert(Http2({
      HttpRoute("narrow", Rule("matches { path { prefix: '/y' } }")),
      HttpRoute("broad", Rule("matches { path { prefix: '/x' } } "
                              "matches { path { exact: '/y/z' } }")),
  }));
  Routed r(c.config);
  EXPECT_EQ(r.For("/x/1"), "broad");
  EXPECT_EQ(r.For("/y/z"), "broad");  // its exact match outranks "/y"
  EXPECT_EQ(r.For("/y/w"), "narrow");
}

TEST(ConvertPolicyTest, HostsMatchTheTargetExactOverSuffixOverNone) {
  auto policy = Http2({
      HttpRoute("any-host", Rule("")),
      HttpRoute("suffix",
                "hosts { suffix { reverse_labels: 'com' "
                "reverse_labels: 'example' } } " +
                    Rule("")),
      HttpRoute("exact", "hosts { exact: 'api.example.com' } " + Rule("")),
      HttpRoute("other", "hosts { exact: 'other.example.com' } " + Rule("")),
  });
  EXPECT_EQ(Routed(Convert(policy, "api.example.com:80").config).For("/"),
            "exact");
  EXPECT_EQ(Routed(Convert(policy, "API.Example.com.:80").config).For("/"),
            "exact");
  EXPECT_EQ(Routed(Convert(policy, "web.example.com:80").config).For("/"),
            "suffix");
  // A wildcard needs one more label.
  EXPECT_EQ(Routed(Convert(policy, "example.com:80").config).For("/"),
            "any-host");
  PolicyConversion c = Convert(policy, "books:8080");
  EXPECT_EQ(c.config.routes.size(), 1u);  // the others are for other hosts
  EXPECT_EQ(PolicyHostOf("[::1]:80"), "::1");
  EXPECT_EQ(PolicyHostOf("Books.NS."), "books.ns");
}

out::OutboundPolicy Grpc(const std::string& routes) {
  return Parse(absl::StrCat("metadata { default: 'grpc' } protocol { grpc { ",
                            routes, " } }"));
}

std::string GrpcRoute(const std::string& name, const std::string& matches,
                      const std::string& extra = "") {
  return absl::StrCat(
      "routes { metadata { resource { group: 'gateway.networking.k8s.io' "
      "kind: 'GRPCRoute' namespace: 'ns' name: '",
      name, "' } } rules { ", matches, " backends { random_available { ",
      Weighted("books.ns.svc.cluster.local:8080", 1), " } } ", extra, " } }");
}

TEST(ConvertPolicyTest, GrpcMatchesServiceAndMethodOverServiceAlone) {
  PolicyConversion c = Convert(Grpc(
      GrpcRoute("service", "matches { rpc { service: 'books.Library' } }") +
      GrpcRoute("method-only", "matches { rpc { method: 'Ping' } }") +
      GrpcRoute("both",
                "matches { rpc { service: 'books.Library' "
                "method: 'GetBook' } }") +
      GrpcRoute("header",
                "matches { rpc { service: 'books.Library' "
                "method: 'GetBook' } headers { name: 'x-canary' "
                "exact: '1' } }")));
  EXPECT_THAT(c.dropped, IsEmpty());
  Routed r(c.config);
  EXPECT_EQ(r.For("/books.Library/GetBook"), "both");
  EXPECT_EQ(r.For("/books.Library/GetBook", "POST", {{"x-canary", "1"}}),
            "header");
  EXPECT_EQ(r.For("/books.Library/ListBooks"), "service");
  EXPECT_EQ(r.For("/books.Library/Ping"), "service");  // service first
  EXPECT_EQ(r.For("/health.Check/Ping"), "method-only");
  EXPECT_EQ(r.For("/other.Svc/Get"), "(none)");
  EXPECT_EQ(c.protocol, "grpc");
  EXPECT_EQ(c.parent, "default grpc");
}

TEST(ConvertPolicyTest, BackendsWeightedFirstAvailableAndEmpty) {
  PolicyConversion c =
      Convert(Grpc("routes { metadata { default: 'split' } rules { backends { "
                   "random_available { " +
                   Weighted("a.ns.svc.cluster.local:80", 90) +
                   Weighted("b.ns.svc.cluster.local:80", 10) + " } } } }"));
  ASSERT_EQ(c.config.routes.size(), 1u);
  const Route& split = c.config.routes[0];
  ASSERT_EQ(split.backends.size(), 2u);
  EXPECT_EQ(split.backends[0].authority, "a.ns.svc.cluster.local:80");
  EXPECT_EQ(split.backends[0].weight, 90u);
  EXPECT_EQ(split.backends[1].weight, 10u);
  EXPECT_FALSE(split.backends_first_available);
  EXPECT_EQ(split.fault.abort_per_million, 0u);

  c = Convert(
      Grpc("routes { metadata { default: 'failover' } rules { backends { "
           "first_available { backends { backend { metadata { default: 'a' } "
           "balancer { discovery { dst { path: 'a:80' } } } } } backends { "
           "backend { metadata { default: 'b' } balancer { discovery { dst { "
           "path: 'b:80' } } } } } } } } }"));
  ASSERT_EQ(c.config.routes.size(), 1u);
  EXPECT_TRUE(c.config.routes[0].backends_first_available);
  ASSERT_EQ(c.config.routes[0].backends.size(), 2u);
  EXPECT_EQ(c.config.routes[0].backends[1].authority, "b:80");

  // Nothing to send to: every call fails, naming the route.
  c =
      Convert(Grpc("routes { metadata { default: 'nowhere' } rules { "
                   "backends { empty {} } } }"));
  ASSERT_EQ(c.config.routes.size(), 1u);
  const FaultInjection& f = c.config.routes[0].fault;
  EXPECT_EQ(f.abort_per_million, 1'000'000u);
  EXPECT_EQ(f.abort_code, absl::StatusCode::kUnavailable);
  EXPECT_THAT(f.abort_message, AllOf(HasSubstr("default nowhere rule #0"),
                                     HasSubstr("an empty distribution")));
}

TEST(ConvertPolicyTest, BadBackendsAreDroppedNamingThem) {
  PolicyConversion c = Convert(Grpc(
      "routes { metadata { default: 'r' } rules { backends { "
      "random_available { " +
      Weighted("good:80", 1) + Weighted("no-port", 1) + Weighted("zero:80", 0) +
      "backends { weight: 1 backend { backend { metadata { default: 'f' } "
      "forward { weight: 1 } } } } } } } }"));
  ASSERT_EQ(c.config.routes.size(), 1u);
  ASSERT_EQ(c.config.routes[0].backends.size(), 1u);
  EXPECT_EQ(c.config.routes[0].backends[0].authority, "good:80");
  EXPECT_THAT(c.dropped,
              ElementsAre(HasSubstr("backend #1 ('no-port') dropped"),
                          HasSubstr("backend #2 dropped: weight 0"),
                          HasSubstr("backend #3 (forward) dropped")));
  EXPECT_THAT(c.forward_backends, IsEmpty());
  // Weights past 2^32 - 1 in all drop the rule.
  c = Convert(
      Grpc("routes { metadata { default: 'r' } rules { backends { "
           "random_available { " +
           Weighted("a:80", 4294967295u) + Weighted("b:80", 1) + " } } } }"));
  EXPECT_THAT(c.config.routes, IsEmpty());
  EXPECT_THAT(c.dropped, ElementsAre(HasSubstr("past 2^32 - 1")));
}

TEST(ConvertPolicyTest, BackendFiltersGoWithTheirBackend) {
  auto backend = [](const std::string& path, const std::string& filters) {
    return absl::StrCat(
        "backends { weight: 1 backend { backend { metadata { default: 'b' } "
        "balancer { discovery { dst { path: '",
        path, "' } } peak_ewma {} } } ", filters, " } }");
  };
  PolicyConversion c = Convert(Grpc(absl::StrCat(
      "routes { metadata { default: 'r' } rules { backends { "
      "random_available { ",
      backend("a:80",
              "filters { request_header_modifier { add { headers { name: "
              "'X-A' value: '1' } } } }"),
      backend("b:80",
              "filters { failure_injector { code: 14 message: 'b down' "
              "ratio { numerator: 1 denominator: 4 } } }"),
      backend("c:80",
              "filters { request_header_modifier { set { headers { name: "
              "'grpc-timeout' value: '1S' } } } }"),
      " } } } }")));
  ASSERT_EQ(c.config.routes.size(), 1u);
  const std::vector<WeightedBackend>& b = c.config.routes[0].backends;
  ASSERT_EQ(b.size(), 2u);  // c's invalid filter drops c, not the rule
  EXPECT_EQ(b[0].authority, "a:80");
  EXPECT_THAT(b[0].request_headers.add,
              ElementsAre(std::make_pair("x-a", "1")));
  EXPECT_EQ(b[0].abort_per_million, 0u);
  EXPECT_EQ(b[1].authority, "b:80");
  EXPECT_EQ(b[1].abort_per_million, 250'000u);
  EXPECT_EQ(b[1].abort_code, absl::StatusCode::kUnavailable);
  EXPECT_THAT(b[1].abort_message, HasSubstr("b down"));
  EXPECT_TRUE(c.config.routes[0].request_headers.empty());  // not the rule's
  EXPECT_THAT(c.dropped,
              ElementsAre(HasSubstr("backend #2: filter #0 dropped the "
                                    "backend: (request_header_modifier)")));
}

TEST(ConvertPolicyTest, AForwardBackendIsOneEndpointOfItsOwn) {
  // 127.0.0.1:8080 with an identity and HTTP/2, beside a balanced backend.
  PolicyConversion c = Convert(
      Grpc("routes { metadata { default: 'r' } rules { backends { "
           "random_available { " +
           Weighted("good:80", 3) +
           "backends { weight: 1 backend { backend { metadata { default: 'f' } "
           "forward { addr { ip { ipv4: 2130706433 } port: 8080 } weight: 1 "
           "tls_identity { dns_like_identity { name: "
           "'web.ns.serviceaccount.identity.linkerd.cluster.local' } } "
           "protocol_hint { h2 {} } } } } } } } } }"));
  ASSERT_EQ(c.config.routes.size(), 1u);
  const std::vector<WeightedBackend>& backends = c.config.routes[0].backends;
  ASSERT_EQ(backends.size(), 2u);
  EXPECT_EQ(backends[0].authority, "good:80");
  EXPECT_EQ(backends[0].weight, 3u);
  EXPECT_EQ(backends[1].cluster, "linkerd-forward 127.0.0.1:8080");
  EXPECT_EQ(backends[1].authority, "");  // the channel's own
  EXPECT_EQ(backends[1].weight, 1u);
  ASSERT_EQ(c.forward_backends.size(), 1u);
  const Endpoint& e = c.forward_backends.at("linkerd-forward 127.0.0.1:8080");
  EXPECT_EQ(e.address, "127.0.0.1:8080");
  EXPECT_EQ(e.tls_identity,
            "web.ns.serviceaccount.identity.linkerd.cluster.local");
  EXPECT_EQ(e.protocol_hint, ProtocolHint::kHttp2);
  EXPECT_THAT(c.dropped, IsEmpty());
  // Forward backends have no balancer: nothing to set for them.
  EXPECT_EQ(c.backend_policies.count("linkerd-forward 127.0.0.1:8080"), 0u);
}

TEST(ConvertPolicyTest, TimeoutsAndRetries) {
  PolicyConversion c = Convert(Grpc(
      GrpcRoute("r", "",
                "timeouts { request { seconds: 2 } } retry { max_retries: 3 "
                "conditions { unavailable: true internal: true } backoff { "
                "min_backoff { nanos: 25000000 } max_backoff { seconds: 1 } "
                "} }")));
  ASSERT_EQ(c.config.routes.size(), 1u);
  const Route& r = c.config.routes[0];
  EXPECT_EQ(r.timeout, absl::Seconds(2));
  EXPECT_TRUE(r.is_retryable);
  EXPECT_EQ(r.retry_policy.max_attempts, 4u);
  EXPECT_THAT(
      r.retry_policy.retry_on,
      ElementsAre(absl::StatusCode::kInternal, absl::StatusCode::kUnavailable));
  EXPECT_EQ(r.retry_policy.backoff_base, absl::Milliseconds(25));
  EXPECT_EQ(r.retry_policy.backoff_max, absl::Seconds(1));
  EXPECT_TRUE(c.config.retry_budget.has_value());  // retries under a budget
  EXPECT_THAT(c.dropped, IsEmpty());

  // The deprecated field stands in for a missing request timeout.
  c = Convert(Grpc(GrpcRoute("r", "", "requestTimeout { seconds: 5 }")));
  EXPECT_EQ(c.config.routes[0].timeout, absl::Seconds(5));
  // No condition: nothing to retry.
  c = Convert(Grpc(GrpcRoute("r", "", "retry { max_retries: 3 }")));
  EXPECT_FALSE(c.config.routes[0].is_retryable);

  c = Convert(Http2({HttpRoute(
      "h", "rules { backends { random_available { " + Weighted("a:80", 1) +
               " } } retry { max_retries: 1 max_request_bytes: 4096 "
               "conditions { status_ranges { start: 500 end: 504 } } timeout "
               "{ seconds: 1 } } timeouts { response { seconds: 1 } } }")}));
  ASSERT_EQ(c.config.routes.size(), 1u);
  const RetryPolicy& p = c.config.routes[0].retry_policy;
  EXPECT_TRUE(c.config.routes[0].is_retryable);
  ASSERT_EQ(p.retry_on_http_status.size(), 1u);
  EXPECT_EQ(p.retry_on_http_status[0].min, 500u);
  EXPECT_EQ(p.retry_on_http_status[0].max, 504u);
  EXPECT_EQ(p.max_attempts, 2u);
  EXPECT_EQ(p.per_try_timeout, absl::Seconds(1));
  EXPECT_EQ(p.max_request_bytes, 4096u);
  EXPECT_EQ(c.config.routes[0].response_timeout, absl::Seconds(1));
  EXPECT_EQ(c.config.routes[0].idle_timeout, absl::InfiniteDuration());
  EXPECT_THAT(c.dropped, IsEmpty());
  // The idle timeout; a zero one is none, a negative one said so.
  c = Convert(Grpc(GrpcRoute(
      "r", "", "timeouts { idle { nanos: 250000000 } response {} }")));
  EXPECT_EQ(c.config.routes[0].idle_timeout, absl::Milliseconds(250));
  EXPECT_EQ(c.config.routes[0].response_timeout, absl::InfiniteDuration());
  EXPECT_THAT(c.dropped, IsEmpty());
  c = Convert(Grpc(GrpcRoute("r", "", "timeouts { idle { seconds: -1 } }")));
  ASSERT_EQ(c.config.routes.size(), 1u);
  EXPECT_EQ(c.config.routes[0].idle_timeout, absl::InfiniteDuration());
  EXPECT_THAT(
      c.dropped,
      ElementsAre(HasSubstr("idle timeout not applied: -1s is negative")));
  // A zero per-try timeout is none.
  c = Convert(Grpc(GrpcRoute("r", "",
                             "retry { max_retries: 1 conditions { unavailable: "
                             "true } timeout {} }")));
  EXPECT_EQ(c.config.routes[0].retry_policy.per_try_timeout,
            absl::InfiniteDuration());
}

TEST(ConvertPolicyTest, BadTimeoutsAndRetriesAreDroppedNamingThem) {
  PolicyConversion c = Convert(
      Grpc(GrpcRoute("neg", "", "timeouts { request { seconds: -1 } }") +
           GrpcRoute("many", "",
                     "retry { max_retries: 70000 conditions { "
                     "unavailable: true } }") +
           GrpcRoute("backoff", "",
                     "retry { max_retries: 1 conditions { "
                     "unavailable: true } backoff { min_backoff { "
                     "seconds: 2 } max_backoff { seconds: 1 } } }") +
           GrpcRoute("per-try", "",
                     "retry { max_retries: 1 conditions { "
                     "unavailable: true } timeout { seconds: -3 } }")));
  ASSERT_EQ(c.config.routes.size(), 3u);  // "neg" is dropped
  EXPECT_FALSE(c.config.routes[0].is_retryable);
  EXPECT_FALSE(c.config.routes[1].is_retryable);
  EXPECT_FALSE(c.config.routes[2].is_retryable);
  EXPECT_THAT(
      c.dropped,
      ElementsAre(
          AllOf(HasSubstr("GRPCRoute ns/neg rule #0"), HasSubstr("negative")),
          AllOf(HasSubstr("GRPCRoute ns/many"), HasSubstr("above 65535")),
          AllOf(HasSubstr("GRPCRoute ns/backoff"), HasSubstr("2s to 1s")),
          AllOf(HasSubstr("GRPCRoute ns/per-try"),
                HasSubstr("retry dropped: timeout -3s is negative"))));
  c = Convert(Http2({HttpRoute(
      "h", "rules { backends { random_available { " + Weighted("a:80", 1) +
               " } } retry { conditions { status_ranges { start: 500 end: "
               "700 } } } }")}));
  EXPECT_FALSE(c.config.routes[0].is_retryable);
  EXPECT_THAT(c.dropped, ElementsAre(HasSubstr("status range #0 (500-700)")));
}

TEST(ConvertPolicyTest, FailureInjectorsAndRedirects) {
  PolicyConversion c = Convert(
      Grpc(GrpcRoute("fi", "",
                     "filters { failure_injector { code: 14 message: 'chaos' "
                     "ratio { numerator: 1 denominator: 4 } } }")));
  ASSERT_EQ(c.config.routes.size(), 1u);
  const FaultInjection& g = c.config.routes[0].fault;
  EXPECT_EQ(g.abort_per_million, 250'000u);
  EXPECT_EQ(g.abort_code, absl::StatusCode::kUnavailable);
  EXPECT_THAT(g.abort_message, HasSubstr("chaos"));

  c = Convert(Http2({HttpRoute(
      "h", "rules { backends { random_available { " + Weighted("a:80", 1) +
               " } } filters { failure_injector { status: 404 } } }")}));
  const FaultInjection& h = c.config.routes[0].fault;
  EXPECT_EQ(h.abort_per_million, 1'000'000u);  // no ratio: every call
  EXPECT_EQ(h.abort_code, absl::StatusCode::kUnimplemented);  // gRPC's reading
  EXPECT_THAT(h.abort_message, HasSubstr("HTTP 404"));

  c = Convert(Http2({HttpRoute(
      "h", "rules { backends { random_available { " + Weighted("a:80", 1) +
               " } } filters { redirect { host: 'new.example.com' status: "
               "302 } } }")}));
  const FaultInjection& r = c.config.routes[0].fault;
  EXPECT_EQ(r.abort_per_million, 1'000'000u);
  EXPECT_EQ(r.abort_code, absl::StatusCode::kUnknown);
  EXPECT_THAT(r.abort_message,
              AllOf(HasSubstr("HTTP 302"), HasSubstr("new.example.com")));

  // A redirect needs no backend: it still answers, with its own words; an
  // injector's share over an empty distribution fails as the rest does.
  c = Convert(Http2({HttpRoute(
      "h",
      "rules { backends { empty {} } filters { redirect { host: 'x' } } "
      "}")}));
  EXPECT_EQ(c.config.routes[0].fault.abort_code, absl::StatusCode::kUnknown);
  c = Convert(
      Grpc("routes { metadata { default: 'g' } rules { backends { empty {} } "
           "filters { failure_injector { code: 13 ratio { numerator: 1 "
           "denominator: 2 } } } } }"));
  EXPECT_EQ(c.config.routes[0].fault.abort_per_million, 1'000'000u);
  EXPECT_EQ(c.config.routes[0].fault.abort_code,
            absl::StatusCode::kUnavailable);

  // Out of range: the rule goes.
  c = Convert(
      Grpc(GrpcRoute("bad", "", "filters { failure_injector { code: 0 } }") +
           GrpcRoute("zero", "",
                     "filters { failure_injector { code: 2 ratio { "
                     "numerator: 1 } } }")));
  EXPECT_THAT(c.config.routes, IsEmpty());
  EXPECT_THAT(c.dropped, ElementsAre(HasSubstr("code 0 is not within 1..16"),
                                     HasSubstr("denominator is 0")));
}

TEST(ConvertPolicyTest, HeaderModifiers) {
  PolicyConversion c = Convert(Http2({HttpRoute(
      "h", "rules { backends { random_available { " + Weighted("a:80", 1) +
               " } } filters { request_header_modifier { add { headers { "
               "name: 'X-Added' value: '1' } } set { headers { name: "
               "'x-set' value: '2' } } remove: 'X-Gone' } } filters { "
               "response_header_modifier { add { headers { name: 'x-r' "
               "value: '3' } } } } }")}));
  ASSERT_EQ(c.config.routes.size(), 1u);
  const Route& r = c.config.routes[0];
  EXPECT_THAT(r.request_headers.add,
              ElementsAre(std::make_pair("x-added", "1")));
  EXPECT_THAT(r.request_headers.set, ElementsAre(std::make_pair("x-set", "2")));
  EXPECT_THAT(r.request_headers.remove, ElementsAre("x-gone"));
  EXPECT_THAT(r.response_headers.add, ElementsAre(std::make_pair("x-r", "3")));
  EXPECT_THAT(c.dropped, IsEmpty());
  // A name gRPC reserves drops the rule.
  c = Convert(Grpc(GrpcRoute("g", "",
                             "filters { request_header_modifier { set { "
                             "headers { name: 'grpc-timeout' value: '1S' } } "
                             "} }")));
  EXPECT_THAT(c.config.routes, IsEmpty());
  EXPECT_THAT(c.dropped,
              ElementsAre(HasSubstr(
                  "filter #0 dropped the rule: (request_header_modifier)")));
}

TEST(ConvertPolicyTest, AnInvalidMatchDropsItsRuleNamingIt) {
  PolicyConversion c = Convert(Http2({
      HttpRoute("good", Rule("matches { path { exact: '/ok' } }")),
      HttpRoute("regex", Rule("matches { path { regex: '((' } }")),
      HttpRoute("slash", Rule("matches { path { prefix: 'no-slash' } }")),
      HttpRoute("header", Rule("matches { headers { name: 'x' } }")),
      HttpRoute("query", Rule("matches { query_params { exact: '1' } }")),
      HttpRoute("method", Rule("matches { method { unregistered: 'B A D' "
                               "} }")),
  }));
  Routed r(c.config);
  EXPECT_EQ(r.For("/ok"), "good");
  EXPECT_EQ(c.config.routes.size(), 1u);
  EXPECT_THAT(c.dropped,
              ElementsAre(HasSubstr("HTTPRoute ns/regex rule #0: dropped: "
                                    "match #0: path regex '(('"),
                          HasSubstr("prefix 'no-slash' does not start"),
                          HasSubstr("headers #0 ('x') has no value"),
                          HasSubstr("query_params #0 has no name"),
                          HasSubstr("method: ")));
}

TEST(ConvertPolicyTest, AHugePolicyStopsAtTheRouteTablesLimit) {
  // 1,500 rules: the first 1,000 are converted, one line says the rest
  // went (not 500 lines, nor 500 more regexes compiled).
  std::string rules;
  for (int i = 0; i < 1500; ++i) {
    absl::StrAppend(&rules, "rules { matches { path { regex: '/r", i,
                    "/.*' } } backends { empty {} } } ");
  }
  PolicyConversion c = Convert(Http2({HttpRoute("many", rules)}));
  EXPECT_EQ(c.config.routes.size(), 1000u);
  EXPECT_THAT(c.dropped, ElementsAre(HasSubstr("RouteLimits::max_routes")));
  // One rule of 1,500 matches.
  std::string matches;
  for (int i = 0; i < 1500; ++i) {
    absl::StrAppend(&matches, "matches { path { exact: '/m", i, "' } } ");
  }
  c = Convert(Http2({HttpRoute("wide", Rule(matches))}));
  EXPECT_EQ(c.config.routes.size(), 1000u);
  EXPECT_THAT(c.dropped, ElementsAre(HasSubstr("matches past #999 dropped")));
}

TEST(ConvertPolicyTest, RoutesCarryTheProxysLabels) {
  PolicyConversion c = Convert(Http2({HttpRoute("get-books", Rule(""))}));
  ASSERT_EQ(c.config.routes.size(), 1u);
  const Route& r = c.config.routes[0];
  EXPECT_EQ(r.name, "get-books");
  EXPECT_EQ(r.metrics_labels.at("parent_kind"), "Service");
  EXPECT_EQ(r.metrics_labels.at("parent_name"), "books");
  EXPECT_EQ(r.metrics_labels.at("parent_namespace"), "ns");
  EXPECT_EQ(r.metrics_labels.at("route_group"), "gateway.networking.k8s.io");
  EXPECT_EQ(r.metrics_labels.at("route_kind"), "HTTPRoute");
  EXPECT_EQ(r.metrics_labels.at("route_name"), "get-books");
  EXPECT_EQ(r.metrics_labels.at("route_namespace"), "ns");
}

TEST(ConvertPolicyTest, ProtocolsWithoutRoutesAndRefusedPolicies) {
  PolicyConversion c = Convert(Parse("protocol { opaque { } }"));
  EXPECT_EQ(c.protocol, "opaque");
  EXPECT_THAT(c.config.routes, IsEmpty());
  EXPECT_FALSE(c.config.require_route_match);  // the default route applies
  c = Convert(Parse("protocol { tls { } }"));
  EXPECT_EQ(c.protocol, "tls");
  EXPECT_FALSE(c.config.require_route_match);
  // detect: the HTTP/2 routes.
  c = Convert(
      Parse(absl::StrCat("protocol { detect { http1 {} opaque {} http2 { ",
                         HttpRoute("h2", Rule("")), " } } }")));
  EXPECT_EQ(c.protocol, "detect");
  ASSERT_EQ(c.config.routes.size(), 1u);
  EXPECT_EQ(c.config.routes[0].name, "h2");

  absl::StatusOr<PolicyConversion> refused =
      ConvertPolicy(Parse("metadata { default: 'x' }"), "a:80");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("no protocol"));
  refused = ConvertPolicy(Parse("protocol { detect { http1 {} } }"), "a:80");
  EXPECT_THAT(refused.status().message(), HasSubstr("no http2"));
}

TEST(ConvertPolicyTest, BackendsTakeTheirPeakEwmaTuningAndTheAccrual) {
  auto backend = [](const std::string& path, const std::string& load) {
    return absl::StrCat(
        "backends { weight: 1 backend { backend { metadata { default: 'b' } "
        "balancer { discovery { dst { path: '",
        path, "' } } ", load, " } } } }");
  };
  out::OutboundPolicy p = Parse(absl::StrCat(
      "metadata { default: 'p' } protocol { grpc { routes { metadata { "
      "default: 'r' } rules { backends { random_available { ",
      backend("a:80",
              "peak_ewma { default_rtt { nanos: 50000000 } decay { "
              "seconds: 5 } }"),
      backend("b:80", "penalty_peak_ewma { default_rtt { seconds: 1 } }"),
      backend("c:80", "peak_ewma { default_rtt { seconds: -1 } }"),
      " } } } } failure_accrual { consecutive_failures { max_failures: 4 "
      "backoff { min_backoff { seconds: 1 } max_backoff { seconds: 2 } } } } "
      "} }"));
  PolicyConversion c = Convert(p);
  ASSERT_EQ(c.backend_policies.size(), 3u);
  const BackendPolicy& a = c.backend_policies.at("a:80");
  EXPECT_EQ(a.default_rtt, absl::Milliseconds(50));
  EXPECT_EQ(a.decay, absl::Seconds(5));
  ASSERT_TRUE(a.ejection.has_value());
  EXPECT_EQ(a.ejection->consecutive_failures, 4u);
  EXPECT_EQ(c.backend_policies.at("b:80").default_rtt, absl::Seconds(1));
  EXPECT_FALSE(c.backend_policies.at("b:80").decay.has_value());
  // c's bad default_rtt is left out, named; the accrual still applies.
  EXPECT_FALSE(c.backend_policies.at("c:80").default_rtt.has_value());
  EXPECT_TRUE(c.backend_policies.at("c:80").ejection.has_value());
  EXPECT_THAT(
      c.dropped,
      ElementsAre(AllOf(HasSubstr("backend #2: balancer default_rtt not "
                                  "applied: -1s is not above zero"))));
  // Without accrual, tuning or queue, no backend has anything to set.
  c = Convert(Parse(absl::StrCat(
      "metadata { default: 'p' } protocol { grpc { routes { metadata { "
      "default: 'r' } rules { backends { random_available { ",
      backend("a:80", "peak_ewma {}"), " } } } } } }")));
  EXPECT_TRUE(c.backend_policies.empty());
}

TEST(ConvertPolicyTest, ABackendsQueueBoundsItsWaitingCalls) {
  auto backend = [](const std::string& path, const std::string& queue) {
    return absl::StrCat(
        "backends { weight: 1 backend { backend { metadata { default: 'b' } "
        "balancer { discovery { dst { path: '",
        path, "' } } peak_ewma {} } ", queue, " } } }");
  };
  PolicyConversion c = Convert(Parse(absl::StrCat(
      "metadata { default: 'p' } protocol { grpc { routes { metadata { "
      "default: 'r' } rules { backends { random_available { ",
      backend("a:80",
              "queue { capacity: 100 failfast_timeout { seconds: 3 } }"),
      backend("b:80", "queue { capacity: 7 failfast_timeout {} }"),
      backend("c:80", "queue { failfast_timeout { seconds: -2 } }"),
      " } } } } } }")));
  ASSERT_EQ(c.backend_policies.size(), 2u);
  const BackendPolicy& a = c.backend_policies.at("a:80");
  EXPECT_EQ(a.queue_capacity, 100u);
  EXPECT_EQ(a.fail_fast_timeout, absl::Seconds(3));
  // A zero fail-fast timeout is the channel's.
  const BackendPolicy& b = c.backend_policies.at("b:80");
  EXPECT_EQ(b.queue_capacity, 7u);
  EXPECT_FALSE(b.fail_fast_timeout.has_value());
  // c's negative one is left out, named; nothing else is left to set.
  EXPECT_EQ(c.backend_policies.count("c:80"), 0u);
  EXPECT_THAT(c.dropped,
              ElementsAre(HasSubstr("backend #2: queue failfast_timeout not "
                                    "applied: -2s is negative")));
}

TEST(ConvertPolicyTest, FailureAccrualBecomesTheBackendsEjection) {
  auto with_accrual = [](const std::string& accrual) {
    return Parse(absl::StrCat(
        "metadata { default: 'p' } protocol { grpc { failure_accrual { ",
        accrual, " } } }"));
  };
  PolicyConversion c = Convert(with_accrual(
      "consecutive_failures { max_failures: 3 backoff { min_backoff { "
      "nanos: 250000000 } max_backoff { seconds: 4 } jitter_ratio: 0.5 } } "
      "ejection { min_ready_endpoints: 2 }"));
  EXPECT_THAT(c.dropped, IsEmpty());
  ASSERT_TRUE(c.failure_accrual.has_value());
  EXPECT_EQ(c.failure_accrual->consecutive_failures, 3u);
  EXPECT_EQ(c.failure_accrual->base, absl::Milliseconds(250));
  EXPECT_EQ(c.failure_accrual->max, absl::Seconds(4));
  EXPECT_EQ(c.failure_accrual->max_share, 1.0);
  EXPECT_FALSE(c.failure_accrual->interval_rules);
  EXPECT_EQ(c.failure_accrual->min_ready_endpoints, 2u);
  EXPECT_TRUE(c.failure_accrual->exponential);  // as the proxy's backoff
  EXPECT_EQ(c.failure_accrual->jitter, 0.5);

  // Unified: its streak applies, its success-rate trip is named.
  c = Convert(with_accrual(
      "unified { success_rate_threshold: 0.8 max_consecutive_failures: 5 "
      "backoff { min_backoff { seconds: 1 } max_backoff { seconds: 60 } } }"));
  ASSERT_TRUE(c.failure_accrual.has_value());
  EXPECT_EQ(c.failure_accrual->consecutive_failures, 5u);
  EXPECT_THAT(c.dropped, ElementsAre(HasSubstr("success-rate trip")));

  // A jitter out of range is left out, named; the accrual stays.
  c = Convert(with_accrual(
      "consecutive_failures { max_failures: 2 backoff { min_backoff { "
      "seconds: 1 } max_backoff { seconds: 2 } jitter_ratio: 101 } }"));
  ASSERT_TRUE(c.failure_accrual.has_value());
  EXPECT_EQ(c.failure_accrual->jitter, 0);
  EXPECT_THAT(c.dropped, ElementsAre(HasSubstr("jitter_ratio 101 is not "
                                               "within [0, 100]")));

  // Off, and a backoff that cannot be an ejection's.
  c = Convert(with_accrual("consecutive_failures { max_failures: 0 }"));
  EXPECT_FALSE(c.failure_accrual.has_value());
  EXPECT_THAT(c.dropped, IsEmpty());
  c = Convert(with_accrual(
      "consecutive_failures { max_failures: 2 backoff { max_backoff { "
      "seconds: 1 } } }"));
  EXPECT_FALSE(c.failure_accrual.has_value());
  EXPECT_THAT(c.dropped,
              ElementsAre(HasSubstr("failure_accrual dropped: backoff 0 to 1s "
                                    "is not a range above zero")));
  c = Convert(with_accrual(
      "consecutive_failures { max_failures: 2 backoff { min_backoff { "
      "seconds: 2 } max_backoff { seconds: 1 } } }"));
  EXPECT_FALSE(c.failure_accrual.has_value());
}

}  // namespace
}  // namespace mesh::internal::linkerd

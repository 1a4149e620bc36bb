// The local control plane's config file: what parses, and errors that name
// the line and the field.
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/json.h"
#include "tools/mesh-control-plane/linkerd_resources.h"

namespace mesh::controlplane {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<Config> c = ParseConfig(text);
  EXPECT_FALSE(c.ok()) << text;
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(c.status().message());
}

TEST(ControlPlaneConfigTest, ParsesTargetsEndpointsAndProfiles) {
  absl::StatusOr<Config> c = ParseConfig(R"({
    "targets": {
      "books.local:7001": {
        "endpoints": [
          {"address": "127.0.0.1:7001", "weight": 2, "labels": {"pod": "books-0"}},
          {"address": "[::1]:7002", "tls_identity": "books.default.serviceaccount"}
        ],
        "profile": {
          "routes": [{"name": "GetBook", "path_regex": "^/books.Library/GetBook$",
                      "method": "POST", "timeout_ms": 300, "retryable": true,
                      "failure_statuses": [[500, 599]]}],
          "retry_budget": {"retry_ratio": 0.5, "min_retries_per_second": 3, "ttl_ms": 2000},
          "dst_overrides": [{"authority": "books-v2.local:7001", "weight": 9000}]
        }
      },
      "empty.local:80": {}
    },
    "not_mesh": ["external.example.com:443"],
    "silent": ["quiet.local:80"]
  })");
  ASSERT_TRUE(c.ok()) << c.status();
  const TargetSpec& books = c->targets.at("books.local:7001");
  ASSERT_EQ(books.endpoints.size(), 2u);
  EXPECT_EQ(books.endpoints[0].weight, 2u);
  EXPECT_EQ(books.endpoints[0].labels.at("pod"), "books-0");
  EXPECT_EQ(books.endpoints[1].address, "[::1]:7002");
  ASSERT_TRUE(books.profile.has_value());
  EXPECT_EQ(books.profile->routes[0].timeout_ms, 300);
  EXPECT_EQ(books.profile->routes[0].failure_statuses[0].second, 599u);
  EXPECT_NEAR(books.profile->retry_budget->retry_ratio, 0.5, 1e-9);
  EXPECT_EQ(books.profile->dst_overrides[0].second, 9000u);
  EXPECT_TRUE(c->targets.at("empty.local:80").endpoints.empty());
  EXPECT_EQ(c->not_mesh.count("external.example.com:443"), 1u);
  EXPECT_EQ(c->silent.count("quiet.local:80"), 1u);
}

TEST(ControlPlaneConfigTest, SyntaxErrorsNameTheLine) {
  EXPECT_THAT(ErrorOf("{\n  \"targets\": {\n    \"a:1\": {}\n  \n"),
              HasSubstr("line 5"));
  EXPECT_THAT(ErrorOf("{\n  \"targets\" {}\n}"),
              HasSubstr("line 2: expected ':'"));
  EXPECT_THAT(ErrorOf("{\n\n  \"targets\": {},\n  \"targets\": {}\n}"),
              HasSubstr("line 4: key \"targets\" appears twice"));
  EXPECT_THAT(ErrorOf("{\"a\": tru}"), HasSubstr("line 1"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("expected a value"));
}

TEST(ControlPlaneConfigTest, SemanticErrorsNameTheFieldAndLine) {
  EXPECT_THAT(ErrorOf("{\"targets\": {\"books\": {}}}"),
              HasSubstr("name:port"));
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\n\"endpoints\": "
                      "[\n{\"address\": \"127.0.0.1:70000\"}]}}}"),
              HasSubstr("line 3: targets[\"b:1\"].endpoints[0].address: port"));
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\"endpoints\": [{\"address\": "
                      "\"books:80\"}]}}}"),
              HasSubstr("not an IP address"));
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\"endpoints\": "
                      "[{\"address\": \"127.0.0.1:1\", \"weight\": 0}]}}}"),
              HasSubstr(".weight: expected a whole number in 1.."));
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\"endpoints\": "
                      "[{\"address\": \"127.0.0.1:1\"}, {\"address\": "
                      "\"127.0.0.1:1\"}]}}}"),
              HasSubstr("listed twice"));
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\"endpoint\": []}}}"),
              HasSubstr("targets[\"b:1\"].endpoint: unknown field"));
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\"profile\": {\"routes\": "
                      "[{\"timeout_ms\": \"fast\"}]}}}}"),
              HasSubstr("routes[0].timeout_ms: expected a number"));
}

// The fields only the xDS server serves: zones, health, header conditions,
// retry policies and per-route backends.
TEST(ControlPlaneConfigTest, ParsesTheXdsFields) {
  absl::StatusOr<Config> c = ParseConfig(R"({
    "targets": {
      "books.local:7001": {
        "endpoints": [
          {"address": "127.0.0.1:7001", "zone": "eu-west-1a",
           "healthy": false},
          {"address": "127.0.0.1:7002"}
        ],
        "profile": {
          "routes": [
            {"name": "Canary", "path_regex": "^/books.Library/GetBook$",
             "headers": [
               {"name": "x-canary", "exact": "1"},
               {"name": "x-user", "prefix": "beta-", "invert": true},
               {"name": ":authority", "regex": "books(\\.local)?(:[0-9]+)?"},
               {"name": "x-debug", "present": true}
             ],
             "dst_overrides": [{"authority": "books-v2.local:7001",
                                "weight": 1}]},
            {"name": "GetBook", "retryable": true,
             "retry_on": ["UNAVAILABLE", "DEADLINE_EXCEEDED",
                          "RESOURCE_EXHAUSTED"],
             "max_retries": 4},
            {"name": "Plain", "retryable": true}
          ]
        }
      }
    }
  })");
  ASSERT_TRUE(c.ok()) << c.status();
  const TargetSpec& books = c->targets.at("books.local:7001");
  ASSERT_EQ(books.endpoints.size(), 2u);
  EXPECT_EQ(books.endpoints[0].zone, "eu-west-1a");
  EXPECT_FALSE(books.endpoints[0].healthy);
  EXPECT_EQ(books.endpoints[1].zone, "");
  EXPECT_TRUE(books.endpoints[1].healthy);
  ASSERT_EQ(books.profile->routes.size(), 3u);

  const RouteSpec& canary = books.profile->routes[0];
  ASSERT_EQ(canary.headers.size(), 4u);
  EXPECT_EQ(canary.headers[0].name, "x-canary");
  EXPECT_EQ(canary.headers[0].kind, HeaderMatchSpec::Kind::kExact);
  EXPECT_EQ(canary.headers[0].value, "1");
  EXPECT_FALSE(canary.headers[0].invert);
  EXPECT_EQ(canary.headers[1].kind, HeaderMatchSpec::Kind::kPrefix);
  EXPECT_EQ(canary.headers[1].value, "beta-");
  EXPECT_TRUE(canary.headers[1].invert);
  EXPECT_EQ(canary.headers[2].name, ":authority");
  EXPECT_EQ(canary.headers[2].kind, HeaderMatchSpec::Kind::kRegex);
  EXPECT_EQ(canary.headers[2].value, "books(\\.local)?(:[0-9]+)?");
  EXPECT_EQ(canary.headers[3].kind, HeaderMatchSpec::Kind::kPresent);
  EXPECT_EQ(canary.headers[3].value, "");
  ASSERT_EQ(canary.dst_overrides.size(), 1u);
  EXPECT_EQ(canary.dst_overrides[0].first, "books-v2.local:7001");
  EXPECT_EQ(canary.dst_overrides[0].second, 1u);
  EXPECT_TRUE(canary.retry_on.empty());
  EXPECT_EQ(canary.max_retries, 2u);
  EXPECT_TRUE(canary.xds_only());

  const RouteSpec& get = books.profile->routes[1];
  EXPECT_TRUE(get.headers.empty());
  EXPECT_THAT(get.retry_on,
              ::testing::ElementsAre("unavailable", "deadline-exceeded",
                                     "resource-exhausted"));
  EXPECT_EQ(get.max_retries, 4u);
  EXPECT_FALSE(get.xds_only());

  const RouteSpec& plain = books.profile->routes[2];
  EXPECT_TRUE(plain.retry_on.empty());  // UNAVAILABLE
  EXPECT_EQ(plain.max_retries, 2u);
  EXPECT_FALSE(plain.xds_only());
}

TEST(ControlPlaneConfigTest, TheXdsCertificateProviderIsATopLevelString) {
  absl::StatusOr<Config> plain = ParseConfig(R"({"targets": {}})");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->xds_certificate_provider, "default");
  absl::StatusOr<Config> named = ParseConfig(
      R"({"targets": {}, "xds_certificate_provider": "spiffe-certs"})");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->xds_certificate_provider, "spiffe-certs");

  EXPECT_THAT(ErrorOf("{\"targets\": {},\n\"xds_certificate_provider\": 1}"),
              HasSubstr("line 2: xds_certificate_provider: expected a string"));
  EXPECT_THAT(ErrorOf("{\n\"xds_certificate_provider\": \"\"}"),
              HasSubstr("line 2: xds_certificate_provider: expected the name "
                        "of a certificate provider instance"));
  // A misspelt key is refused like any other.
  EXPECT_THAT(ErrorOf("{\n\"xds_certificate_providers\": \"default\"}"),
              HasSubstr("line 2: (top level).xds_certificate_providers: "
                        "unknown field"));
}

// A route whose header conditions are `headers` (JSON), on line 3.
std::string RouteWithHeaders(const std::string& headers) {
  return "{\"targets\": {\"b:1\": {\"profile\": {\"routes\": [\n"
         "{\"name\": \"r\",\n"
         "\"headers\": " +
         headers + "}]}}}}";
}

TEST(ControlPlaneConfigTest, BadHeaderConditionsNameTheFieldAndLine) {
  const std::string kRoute = "line 3: targets[\"b:1\"].profile.routes[0]";
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders(
          "[{\"name\": \"x-a\", \"exact\": \"1\"}, {\"exact\": \"1\"}]")),
      HasSubstr(kRoute + ".headers[1]: name is required"));
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders("[{\"name\": \"\", \"present\": true}]")),
      HasSubstr(kRoute + ".headers[0].name: a header name cannot be "
                         "empty"));
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders("[{\"name\": \"X-Canary\", \"exact\": \"1\"}]")),
      HasSubstr(kRoute + ".headers[0].name: header name 'X-Canary' must be "
                         "lower case"));
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders("[{\"name\": \"x canary\", \"exact\": \"1\"}]")),
      HasSubstr(kRoute + ".headers[0].name: header name 'x canary' holds a "
                         "character not allowed in an HTTP token"));
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders("[{\"name\": \":status\", \"exact\": \"1\"}]")),
      HasSubstr(kRoute + ".headers[0].name: pseudo-header ':status' cannot "
                         "be matched"));
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders(
          "[{\"name\": \"x-a\", \"exact\": \"1\", \"prefix\": \"1\"}]")),
      HasSubstr(kRoute + ".headers[0]: expected exactly one of exact, "
                         "prefix, regex, present"));
  EXPECT_THAT(ErrorOf(RouteWithHeaders("[{\"name\": \"x-a\"}]")),
              HasSubstr(kRoute + ".headers[0]: expected exactly one of exact, "
                                 "prefix, regex, present"));
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders("[{\"name\": \"x-a\", \"present\": false}]")),
      HasSubstr(kRoute + ".headers[0].present: expected true (use invert to "
                         "match an absent header)"));
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders("[{\"name\": \"x-a\", \"present\": \"yes\"}]")),
      HasSubstr(kRoute + ".headers[0].present: expected true or false"));
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders("[{\"name\": \"x-a\", \"prefix\": \"\"}]")),
      HasSubstr(kRoute + ".headers[0].prefix: an empty prefix matches any "
                         "value: use present"));
  EXPECT_THAT(ErrorOf(RouteWithHeaders("[{\"name\": \"x-a\", \"exact\": 1}]")),
              HasSubstr(kRoute + ".headers[0].exact: expected a string"));
  // RE2's own words.
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders("[{\"name\": \"x-a\", \"regex\": \"a(b\"}]")),
      HasSubstr(kRoute + ".headers[0].regex: not an RE2 regex: missing ): "
                         "a(b"));
  // Valid, but too big a program (16004 in RE2 2022); one well below the
  // limit (8004) is fine.
  std::string big = ErrorOf(
      RouteWithHeaders("[{\"name\": \"x-a\", \"regex\": \".{1000}.{1000}\"}]"));
  EXPECT_THAT(big, HasSubstr(kRoute + ".headers[0].regex: the RE2 program "
                                      "has size "));
  EXPECT_THAT(big, HasSubstr(", more than 10000"));
  EXPECT_TRUE(ParseConfig(RouteWithHeaders(
                              "[{\"name\": \"x-a\", \"regex\": \".{1000}\"}]"))
                  .ok());
  EXPECT_THAT(
      ErrorOf(RouteWithHeaders(
          "[{\"name\": \"x-a\", \"exact\": \"1\", \"inverted\": true}]")),
      HasSubstr(kRoute + ".headers[0].inverted: unknown field"));
  EXPECT_THAT(ErrorOf(RouteWithHeaders(
                  "[{\"name\": \"x-a\", \"exact\": \"1\", \"invert\": 1}]")),
              HasSubstr(kRoute + ".headers[0].invert: expected true or false"));
  EXPECT_THAT(ErrorOf(RouteWithHeaders("{\"name\": \"x-a\"}")),
              HasSubstr(kRoute + ".headers: expected an array"));

  std::string sixteen = "[";
  for (int i = 0; i < 16; ++i) {
    sixteen +=
        "{\"name\": \"x-" + std::to_string(i) + "\", \"present\": true},";
  }
  std::string seventeen = sixteen + "{\"name\": \"x-16\", \"present\": true}]";
  sixteen.back() = ']';
  absl::StatusOr<Config> ok = ParseConfig(RouteWithHeaders(sixteen));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->targets.at("b:1").profile->routes[0].headers.size(), 16u);
  EXPECT_THAT(ErrorOf(RouteWithHeaders(seventeen)),
              HasSubstr(kRoute + ".headers: 17 header conditions, more than "
                                 "the limit of 16"));
}

// A route holding the fields `fields` (JSON, after a comma), on line 3.
std::string RouteWith(const std::string& fields) {
  return "{\"targets\": {\"b:1\": {\"profile\": {\"routes\": [\n{\"name\": "
         "\"r\",\n" +
         fields + "}]}}}}";
}

TEST(ControlPlaneConfigTest, BadRetryPoliciesAndRouteBackendsNameTheField) {
  const std::string kRoute = "line 3: targets[\"b:1\"].profile.routes[0]";
  EXPECT_THAT(
      ErrorOf(RouteWith("\"retryable\": true, \"retry_on\": [\"UNAVAILABLE\", "
                        "\"ABORTED\"]")),
      HasSubstr(kRoute + ".retry_on[1]: 'ABORTED': xDS retries gRPC calls "
                         "only on CANCELLED, DEADLINE_EXCEEDED, INTERNAL, "
                         "RESOURCE_EXHAUSTED, UNAVAILABLE"));
  // xDS's own spelling is not the config's.
  EXPECT_THAT(ErrorOf(RouteWith(
                  "\"retryable\": true, \"retry_on\": [\"unavailable\"]")),
              HasSubstr(kRoute + ".retry_on[0]: 'unavailable': xDS retries"));
  EXPECT_THAT(ErrorOf(RouteWith("\"retryable\": true, \"retry_on\": "
                                "[\"INTERNAL\", \"CANCELLED\", \"INTERNAL\"]")),
              HasSubstr(kRoute + ".retry_on[2]: INTERNAL is listed twice"));
  EXPECT_THAT(ErrorOf(RouteWith("\"retryable\": true, \"retry_on\": []")),
              HasSubstr(kRoute + ".retry_on: expected at least one code"));
  EXPECT_THAT(
      ErrorOf(RouteWith("\"retryable\": true, \"retry_on\": \"UNAVAILABLE\"")),
      HasSubstr(kRoute + ".retry_on: expected an array"));
  EXPECT_THAT(ErrorOf(RouteWith("\"retryable\": true, \"max_retries\": 0")),
              HasSubstr(kRoute + ".max_retries: expected a whole number in "
                                 "1..10"));
  EXPECT_THAT(ErrorOf(RouteWith("\"retryable\": true, \"max_retries\": 11")),
              HasSubstr(kRoute + ".max_retries: expected a whole number in "
                                 "1..10"));
  EXPECT_THAT(ErrorOf(RouteWith("\"retryable\": true, \"max_retries\": 2.5")),
              HasSubstr(kRoute + ".max_retries: expected a whole number"));
  // Keys come in name order: "retry_on" is checked against "retryable"
  // whichever comes first in the file.
  EXPECT_THAT(ErrorOf(RouteWith("\"retry_on\": [\"UNAVAILABLE\"]")),
              HasSubstr(kRoute + ".retry_on: only a retryable route retries"));
  EXPECT_THAT(
      ErrorOf(RouteWith("\"retry_on\": [\"UNAVAILABLE\"], \"retryable\": "
                        "false")),
      HasSubstr(kRoute + ".retry_on: only a retryable route retries"));
  EXPECT_THAT(ErrorOf(RouteWith("\"max_retries\": 3, \"retryable\": false")),
              HasSubstr(kRoute + ".max_retries: only a retryable route "
                                 "retries"));
  EXPECT_TRUE(ParseConfig(RouteWith("\"max_retries\": 10, \"retry_on\": "
                                    "[\"CANCELLED\", \"INTERNAL\"], "
                                    "\"retryable\": true"))
                  .ok());

  // A route's dst_overrides are checked as a profile's are.
  EXPECT_THAT(
      ErrorOf(RouteWith("\"dst_overrides\": [{\"authority\": \"v2.local:1\", "
                        "\"weight\": 1},\n{\"authority\": \"v3.local:1\"}]")),
      HasSubstr("line 4: targets[\"b:1\"].profile.routes[0]."
                "dst_overrides[1]: authority and weight are "
                "required"));
  EXPECT_THAT(ErrorOf(RouteWith("\"dst_overrides\": [{\"authority\": "
                                "\"v2.local:1\", \"weight\": -1}]")),
              HasSubstr(kRoute + ".dst_overrides[0].weight: expected a whole "
                                 "number in 0..1073741824"));
  EXPECT_THAT(ErrorOf(RouteWith("\"dst_overrides\": [{\"authority\": "
                                "\"v2.local:1\", \"weight\": 1, \"w\": 1}]")),
              HasSubstr(kRoute + ".dst_overrides[0].w: unknown field"));
  EXPECT_THAT(ErrorOf(RouteWith("\"dst_overrides\": {}")),
              HasSubstr(kRoute + ".dst_overrides: expected an array"));
  // The profile's, through the same code.
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\"profile\": {\n"
                      "\"dst_overrides\": [{\"weight\": 1}]}}}}"),
              HasSubstr("line 2: targets[\"b:1\"].profile.dst_overrides[0]: "
                        "authority and weight are required"));
  // And the endpoint's new fields.
  EXPECT_THAT(
      ErrorOf("{\"targets\": {\"b:1\": {\"endpoints\": [\n"
              "{\"address\": \"127.0.0.1:1\", \"healthy\": \"no\"}]}}}"),
      HasSubstr("line 2: targets[\"b:1\"].endpoints[0].healthy: "
                "expected true or false"));
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\"endpoints\": [\n"
                      "{\"address\": \"127.0.0.1:1\", \"zone\": 1}]}}}"),
              HasSubstr("line 2: targets[\"b:1\"].endpoints[0].zone: "
                        "expected a string"));
}

// Linkerd's profiles have no header conditions and no per-route backends:
// a route with either is for xDS clients only; the others keep their order.
TEST(ControlPlaneConfigTest, ProfilesLeaveOutXdsOnlyRoutes) {
  absl::StatusOr<Config> c = ParseConfig(R"({
    "targets": {
      "books.local:7001": {
        "profile": {
          "routes": [
            {"name": "First", "retryable": true, "retry_on": ["CANCELLED"],
             "max_retries": 5},
            {"name": "Canary", "headers": [{"name": "x-canary", "exact": "1"}]},
            {"name": "Second", "path_regex": "^/b$"},
            {"name": "Split",
             "dst_overrides": [{"authority": "books-v2.local:7001",
                                "weight": 1}]},
            {"name": "Third", "method": "GET"}
          ],
          "dst_overrides": [{"authority": "books-v3.local:7001", "weight": 7}]
        }
      }
    }
  })");
  ASSERT_TRUE(c.ok()) << c.status();
  auto p = ProfileFor(*c, "books.local:7001");
  ASSERT_EQ(p.routes_size(), 3);
  EXPECT_EQ(p.routes(0).metrics_labels().at("route"), "First");
  EXPECT_TRUE(p.routes(0).is_retryable());
  EXPECT_EQ(p.routes(1).metrics_labels().at("route"), "Second");
  EXPECT_EQ(p.routes(2).metrics_labels().at("route"), "Third");
  // The profile's own backends stay.
  ASSERT_EQ(p.dst_overrides_size(), 1);
  EXPECT_EQ(p.dst_overrides(0).authority(), "books-v3.local:7001");
  EXPECT_EQ(p.dst_overrides(0).weight(), 7u);
}

// proto3 strings must be UTF-8: a label value that is not made every Get
// update unparseable for the client. Refused here, with line and field.
TEST(ControlPlaneConfigTest, StringsThatAreNotUtf8AreRefusedWithLineAndField) {
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\"endpoints\": [\n"
                      "{\"address\": \"127.0.0.1:1\",\n"
                      "\"labels\": {\"zone\": \"eu\xff\"}}]}}}"),
              HasSubstr("line 3: targets[\"b:1\"].endpoints[0].labels.zone: a "
                        "string is not valid UTF-8 (byte 0xff at offset 2)"));
  // A key, a route's regex, a target name.
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\"endpoints\": [\n"
                      "{\"address\": \"127.0.0.1:1\", \"labels\": "
                      "{\"z\xc0\xaf\": \"x\"}}]}}}"),
              HasSubstr("line 2: targets[\"b:1\"].endpoints[0].labels: a key "
                        "is not valid UTF-8 (byte 0xc0 at offset 1)"));
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b:1\": {\"profile\": {\"routes\": "
                      "[{\"path_regex\": \"/a\xed\xa0\x80\"}]}}}}"),
              HasSubstr("targets[\"b:1\"].profile.routes[0].path_regex: a "
                        "string is not valid UTF-8"));
  EXPECT_THAT(ErrorOf("{\"targets\": {\"b\x80:1\": {}}}"),
              HasSubstr("targets: a key is not valid UTF-8"));
  // Valid UTF-8 beyond ASCII is fine.
  EXPECT_TRUE(ParseConfig("{\"targets\": {\"b:1\": {\"endpoints\": ["
                          "{\"address\": \"127.0.0.1:1\", \"labels\": "
                          "{\"zone\": \"z\xc3\xbcrich \xe2\x82\xac\"}}]}}}")
                  .ok());
}

// The error text once stopped at a NUL byte of the input: every message is
// printable now, the byte shown as \x00, and the whole of it kept.
TEST(ControlPlaneConfigTest, ErrorsShowControlBytesAndAreNeverCutShort) {
  std::string raw_nul(
      "{\"targets\": {\"b:1\": {\"endpoints\": "
      "[{\"address\": \"127.0.0.1:1\", \"tls_identity\": "
      "\"a\0b\"}]}}}",
      87);
  ASSERT_EQ(raw_nul.back(), '}');
  std::string error = ErrorOf(raw_nul);
  EXPECT_THAT(error, HasSubstr("targets[\"b:1\"].endpoints[0].tls_identity: "
                               "a string holds the raw control character "
                               "0x00 (write it escaped)"));
  EXPECT_EQ(error.find('\0'), std::string::npos);
  error = ErrorOf(std::string("{\"targets\": \0}", 15));
  EXPECT_THAT(error, HasSubstr("unexpected '\\x00', expected a value"));
  // An escaped control character is valid JSON; a target name holding one
  // is refused, shown printable.
  error = ErrorOf("{\"targets\": {\"b\\n:1\": {}}}");
  EXPECT_THAT(error, HasSubstr("target 'b\\x0a:1' holds a space or control "
                               "character"));
}

// Every parsed value costs memory: a document may hold at most so many.
TEST(ControlPlaneConfigTest, DocumentsWithTooManyValuesAreRefused) {
  std::string many = "[";
  for (int i = 0; i < 1000; ++i) many += "1,";
  many += "1]";
  EXPECT_TRUE(ParseJson(many, 1002).ok());  // the array and 1001 numbers
  absl::StatusOr<JsonValue> refused = ParseJson(many, 1001);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("more than 1001 values"));
}

TEST(ControlPlaneConfigTest, TheShippedSampleParses) {
  std::ifstream in(std::string(MESH_SOURCE_DIR) +
                   "/tools/mesh-control-plane/sample.json");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Config> c = ParseConfig(text.str());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->targets.at("books.local:7001").endpoints.size(), 2u);
}

TEST(ControlPlaneConfigTest, UnknownTargetsGetLinkerdsDefaultProfile) {
  Config empty;
  auto p = ProfileFor(empty, "web.default.svc.cluster.local:8080");
  EXPECT_EQ(p.fully_qualified_name(), "web.default.svc.cluster.local");
  EXPECT_EQ(p.routes_size(), 0);
  EXPECT_NEAR(p.retry_budget().retry_ratio(), 0.2, 1e-6);
  EXPECT_EQ(p.retry_budget().min_retries_per_second(), 10u);
  EXPECT_EQ(p.retry_budget().ttl().seconds(), 10);
}

TEST(ControlPlaneConfigTest, EndpointsGoOnTheWireAsLinkerdEncodesThem) {
  EndpointSpec v4;
  v4.address = "10.0.0.1:8080";
  auto w = ToWire(v4);
  EXPECT_EQ(w.addr().ip().ipv4(), 0x0A000001u);
  EXPECT_EQ(w.addr().port(), 8080u);
  EndpointSpec v6;
  v6.address = "[2001:db8::1]:443";
  w = ToWire(v6);
  EXPECT_EQ(w.addr().ip().ipv6().first(), 0x20010db800000000u);
  EXPECT_EQ(w.addr().ip().ipv6().last(), 1u);
}

}  // namespace
}  // namespace mesh::controlplane

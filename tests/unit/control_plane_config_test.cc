// The local control plane's config file: what parses, and errors that name
// the line and the field.
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/json.h"

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

// The admin page's routing, tap query, event JSON and access rule, without
// sockets (tests/integration/admin_test.cc serves them for real).
#include "src/admin/admin_router.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/admin/admin_access.h"

namespace mesh::internal {
namespace {

using ::testing::HasSubstr;

AdminRouter Router() {
  AdminSources sources;
  sources.describe = [] { return std::string("[{\"target\":\"a:1\"}]"); };
  sources.metrics = [] { return std::string("route_request_total 1\n"); };
  return AdminRouter(std::move(sources), AdminLimits{});
}

AdminResponse Get(const AdminRouter& router, const std::string& path,
                  std::vector<std::pair<std::string, std::string>> query = {},
                  const std::string& method = "GET") {
  AdminRequest request;
  request.method = method;
  request.path = path;
  request.query = std::move(query);
  return router.Handle(request);
}

TEST(AdminRouterTest, ServesEachPathWithItsType) {
  AdminRouter router = Router();
  EXPECT_EQ(Get(router, "/healthz").body, "ok\n");
  AdminResponse metrics = Get(router, "/metrics");
  EXPECT_EQ(metrics.body, "route_request_total 1\n");
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  AdminResponse describe = Get(router, "/describe");
  EXPECT_EQ(describe.body, "[{\"target\":\"a:1\"}]");
  EXPECT_EQ(describe.content_type, "application/json");
  EXPECT_THAT(Get(router, "/").body, HasSubstr("<script src=\"/admin.js\">"));
  EXPECT_EQ(Get(router, "/admin.js").content_type,
            "text/javascript; charset=utf-8");
  EXPECT_EQ(Get(router, "/admin.css").content_type, "text/css; charset=utf-8");
  // HEAD as GET (the server library leaves the body out).
  EXPECT_EQ(Get(router, "/healthz", {}, "HEAD").status, 200);
}

TEST(AdminRouterTest, RefusesWithAReason) {
  AdminRouter router = Router();
  AdminResponse missing = Get(router, "/secrets");
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(missing.body, HasSubstr("no page at /secrets"));
  // A long path is quoted in part only.
  AdminResponse long_path = Get(router, "/" + std::string(5000, 'x'));
  EXPECT_EQ(long_path.status, 404);
  EXPECT_LT(long_path.body.size(), 400u);
  EXPECT_EQ(Get(router, "/healthz", {}, "PUT").status, 405);
  AdminResponse query = Get(router, "/describe", {{"pretty", "1"}});
  EXPECT_EQ(query.status, 400);
  EXPECT_THAT(query.body, HasSubstr("/describe takes no query (got 'pretty')"));
}

TEST(AdminRouterTest, TapStreamsGetTheirOptions) {
  AdminRouter router = Router();
  AdminResponse tap =
      Get(router, "/tap",
          {{"path_prefix", "/books."}, {"method", "GET"}, {"limit", "7"}});
  EXPECT_EQ(tap.status, 200);
  EXPECT_EQ(tap.content_type, "text/event-stream");
  ASSERT_TRUE(tap.tap.has_value());
  EXPECT_EQ(tap.tap->limit, 7u);
  EXPECT_EQ(tap.tap->buffer, AdminLimits{}.tap_buffer);
  ASSERT_EQ(tap.tap->match.kind, TapMatch::Kind::kAll);
  ASSERT_EQ(tap.tap->match.children.size(), 2u);
  EXPECT_EQ(tap.tap->match.children[0].kind, TapMatch::Kind::kPathPrefix);
  EXPECT_EQ(tap.tap->match.children[0].value, "/books.");
  EXPECT_EQ(tap.tap->match.children[1].kind, TapMatch::Kind::kMethod);
}

TEST(TapQueryTest, EmptyValuesMatchEverythingAndDefaultsHold) {
  auto options = ParseTapQuery({{"path_prefix", ""}}, AdminLimits{});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->match.children.empty());
  EXPECT_EQ(options->limit, 100u);
  EXPECT_FALSE(options->extract_headers);
  auto headers = ParseTapQuery({{"headers", "1"}}, AdminLimits{});
  ASSERT_TRUE(headers.ok());
  EXPECT_TRUE(headers->extract_headers);
}

TEST(TapQueryTest, BadQueriesNameTheParameter) {
  AdminLimits limits;
  struct Case {
    std::vector<std::pair<std::string, std::string>> query;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{{"colour", "red"}}, "unknown query parameter 'colour'"},
           {{{"limit", "0"}}, "'limit' must be 1..1000 (got '0')"},
           {{{"limit", "1001"}}, "'limit' must be 1..1000"},
           {{{"limit", "-3"}}, "'limit' must be 1..1000"},
           {{{"headers", "yes"}}, "'headers' must be 0 or 1"},
           {{{"method", "GET"}, {"method", "PUT"}}, "'method' is given twice"},
           {{{"path_prefix", std::string(3000, 'a')}},
            "the query has 3011 bytes; at most 2048"},
       }) {
    auto options = ParseTapQuery(c.query, limits);
    ASSERT_FALSE(options.ok()) << c.says;
    EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(options.status().message(), HasSubstr(c.says));
  }
}

TEST(TapEventJsonTest, HostileStringsStayStrings) {
  TapEvent e;
  e.kind = TapEvent::Kind::kRequestInit;
  e.base = 3;
  e.stream = 9;
  e.method = "GET";
  e.path = "/\"><script>alert(1)</script>\n\x01";
  e.authority = "a:1";
  e.destination = "10.0.0.1:80";
  e.route_labels["route"] = "r\"1";
  const std::string json = TapEventJson(e);
  EXPECT_THAT(json, HasSubstr("\"kind\":\"request\",\"id\":\"3:9\""));
  EXPECT_THAT(
      json,
      HasSubstr("\"path\":\"/\\\"><script>alert(1)</script>\\n\\u0001\""));
  EXPECT_THAT(json, HasSubstr("\"route\":\"r\\\"1\""));
  // One line: a server-sent event's data cannot hold a raw newline.
  EXPECT_EQ(json.find('\n'), std::string::npos);

  TapEvent end;
  end.kind = TapEvent::Kind::kResponseEnd;
  end.response_bytes = 12;
  end.grpc_status = 14;
  end.since_response_init = absl::Milliseconds(3);
  const std::string end_json = TapEventJson(end);
  EXPECT_THAT(end_json, HasSubstr("\"kind\":\"end\""));
  EXPECT_THAT(end_json, HasSubstr("\"bytes\":12"));
  EXPECT_THAT(end_json, HasSubstr("\"grpc_status\":14"));
  EXPECT_THAT(end_json, HasSubstr("\"since_response_ms\":3"));
}

sockaddr_in V4(const char* ip) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

sockaddr_in6 V6(const char* ip) {
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  inet_pton(AF_INET6, ip, &a.sin6_addr);
  return a;
}

TEST(AdminAccessTest, OnlyThisHostMaySeeThePage) {
  auto ok4 = [](const char* ip) {
    sockaddr_in a = V4(ip);
    return IsLocalPeer(reinterpret_cast<sockaddr*>(&a));
  };
  auto ok6 = [](const char* ip) {
    sockaddr_in6 a = V6(ip);
    return IsLocalPeer(reinterpret_cast<sockaddr*>(&a));
  };
  EXPECT_TRUE(ok4("127.0.0.1"));
  EXPECT_TRUE(ok6("::1"));
  EXPECT_TRUE(ok6("::ffff:127.0.0.1"));
  // As the tap rule: 127.0.0.1 itself, not the rest of 127/8.
  EXPECT_FALSE(ok4("127.0.0.2"));
  EXPECT_FALSE(ok4("10.0.0.7"));
  EXPECT_FALSE(ok4("0.0.0.0"));
  EXPECT_FALSE(ok6("fd00::1"));
  EXPECT_FALSE(ok6("::ffff:10.0.0.7"));
  EXPECT_FALSE(IsLocalPeer(nullptr));
  sockaddr_in6 a = V6("fd00::1");
  EXPECT_EQ(PeerText(reinterpret_cast<sockaddr*>(&a)), "fd00::1");
  EXPECT_EQ(PeerText(nullptr), "(unknown)");
}

}  // namespace
}  // namespace mesh::internal

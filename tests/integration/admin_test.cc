// The admin page's HTTP endpoints against a running Mesh with real echo
// backends on 127.0.0.1, read with a raw HTTP/1.1 client (so that the
// tests can also send what a browser would not). The page in a browser:
// tests/browser/.
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "mesh/discovery.h"
#include "mesh/mesh.h"
#include "src/admin/admin_server.h"
#include "tests/support/http_probe.h"
#include "tests/support/test_support.h"
#include "tools/common/echo_backend.h"

namespace mesh {
namespace {

using testing::EventStream;
using testing::HttpAnswer;
using testing::HttpExchange;
using testing::HttpGet;

constexpr char kTarget[] = "books:7000";

class AdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    backends_ = testing::StartBackends(2);
    discovery_ = StaticDiscovery::Create();
    ASSERT_TRUE(
        discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends_))
            .ok());
    MeshOptions options;
    options.discovery = discovery_;
    options.admin_address = "127.0.0.1:0";
    auto mesh = Mesh::Create(options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewChannel(kTarget);
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
    address_ = mesh_->AdminAddress();
  }

  std::vector<std::unique_ptr<tools::EchoBackend>> backends_;
  std::shared_ptr<StaticDiscovery> discovery_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
  std::string address_;
};

TEST_F(AdminTest, TheAddressIsReportedWithThePortPicked) {
  ASSERT_TRUE(absl::StartsWith(address_, "127.0.0.1:")) << address_;
  EXPECT_NE(address_, "127.0.0.1:0");
}

TEST_F(AdminTest, NoAdminAddressMeansNoServer) {
  MeshOptions options;
  options.discovery = discovery_;
  auto mesh = Mesh::Create(options);
  ASSERT_TRUE(mesh.ok());
  EXPECT_EQ((*mesh)->AdminAddress(), "");
}

TEST_F(AdminTest, ABadAddressIsRefusedNamingTheField) {
  MeshOptions options;
  options.discovery = discovery_;
  options.admin_address = "nowhere";
  auto mesh = Mesh::Create(options);
  ASSERT_FALSE(mesh.ok());
  EXPECT_EQ(mesh.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(mesh.status().message(), "MeshOptions.admin_address"))
      << mesh.status();
}

TEST_F(AdminTest, HealthzMetricsAndDescribeAreTheMeshs) {
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(channel_->CallRaw("/test.Echo/Say", "hi").status.ok());
  }
  HttpAnswer health = HttpGet(address_, "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");

  HttpAnswer metrics = HttpGet(address_, "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_TRUE(absl::StartsWith(metrics.Header("Content-Type"),
                               "text/plain; version=0.0.4"));
  // Nothing is called in between: the same text as Mesh::Metrics(), but
  // for the RTT estimates, which decay with time.
  auto steady = [](const std::string& text) {
    std::vector<std::string> lines;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (!absl::StartsWith(line, "endpoint_rtt_estimate_ms{")) {
        lines.emplace_back(line);
      }
    }
    return lines;
  };
  EXPECT_EQ(steady(metrics.body), steady(mesh_->Metrics()));
  EXPECT_TRUE(absl::StrContains(metrics.body, "endpoint_rtt_estimate_ms{"));

  HttpAnswer describe = HttpGet(address_, "/describe");
  EXPECT_EQ(describe.status, 200);
  EXPECT_EQ(describe.Header("Content-Type"), "application/json");
  for (const auto& backend : backends_) {
    EXPECT_TRUE(absl::StrContains(describe.body, backend->address()))
        << describe.body;
  }
  EXPECT_TRUE(absl::StrContains(
      describe.body,
      absl::StrCat(R"({"target":")", kTarget, R"(","source":"static")")))
      << describe.body;
  // The default budget (10 retries a second over 10 s, plus 20 % of the
  // 10 calls made): 102 retries available.
  EXPECT_TRUE(
      absl::StrContains(describe.body, R"("retry_budget_available":102,)"))
      << describe.body;
}

TEST_F(AdminTest, ThePageAndItsFilesComeFromTheLibrary) {
  HttpAnswer page = HttpGet(address_, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.Header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_TRUE(absl::StrContains(page.body, "src=\"/admin.js\"")) << page.body;
  // Nothing from elsewhere: no absolute URL in the page.
  EXPECT_FALSE(absl::StrContains(page.body, "http://"));
  EXPECT_FALSE(absl::StrContains(page.body, "https://"));
  EXPECT_TRUE(absl::StrContains(page.Header("Content-Security-Policy"),
                                "default-src 'self'"));
  HttpAnswer script = HttpGet(address_, "/admin.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_EQ(script.Header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_GT(script.body.size(), 1000u);
  HttpAnswer style = HttpGet(address_, "/admin.css");
  EXPECT_EQ(style.status, 200);
  EXPECT_EQ(style.Header("Content-Type"), "text/css; charset=utf-8");
}

TEST_F(AdminTest, AnUnknownPathIs404NamingIt) {
  HttpAnswer a = HttpGet(address_, "/nothing/here");
  EXPECT_EQ(a.status, 404);
  EXPECT_TRUE(absl::StrContains(a.body, "no page at /nothing/here")) << a.body;
}

TEST_F(AdminTest, OtherMethodsThanGetAre405) {
  HttpAnswer a = HttpGet(address_, "/healthz", "DELETE");
  EXPECT_EQ(a.status, 405);
  EXPECT_TRUE(absl::StrContains(a.body, "DELETE")) << a.body;
  HttpAnswer post =
      HttpExchange(address_,
                   "POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
                   "Connection: close\r\n\r\nhello");
  EXPECT_EQ(post.status, 405);
}

TEST_F(AdminTest, ABadQueryIs400NamingIt) {
  HttpAnswer unknown = HttpGet(address_, "/tap?colour=red");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_TRUE(absl::StrContains(unknown.body, "'colour'")) << unknown.body;
  HttpAnswer limit = HttpGet(address_, "/tap?limit=lots");
  EXPECT_EQ(limit.status, 400);
  EXPECT_TRUE(absl::StrContains(limit.body, "'limit'")) << limit.body;
  HttpAnswer twice = HttpGet(address_, "/tap?method=GET&method=POST");
  EXPECT_EQ(twice.status, 400);
  EXPECT_TRUE(absl::StrContains(twice.body, "twice")) << twice.body;
  HttpAnswer not_here = HttpGet(address_, "/metrics?x=1");
  EXPECT_EQ(not_here.status, 400);
  EXPECT_TRUE(absl::StrContains(not_here.body, "takes no query"))
      << not_here.body;
}

TEST_F(AdminTest, AHugeQueryIsRefusedAndTheServerGoesOn) {
  // Past the query bound, within a connection's memory: 400 naming it.
  HttpAnswer big = HttpGet(
      address_, absl::StrCat("/tap?path_prefix=", std::string(4000, 'a')));
  EXPECT_EQ(big.status, 400);
  EXPECT_TRUE(absl::StrContains(big.body, "at most 2048")) << big.body;
  // Past a connection's memory: refused by the server library (414 or
  // 431), and nothing else suffers.
  HttpAnswer huge = HttpGet(
      address_, absl::StrCat("/tap?path_prefix=", std::string(200000, 'a')));
  EXPECT_TRUE(huge.status == 414 || huge.status == 431 || huge.status == 0)
      << huge.status << " " << huge.body;
  EXPECT_EQ(HttpGet(address_, "/healthz").status, 200);
}

TEST_F(AdminTest, TheTapStreamShowsMatchingRequestsOnly) {
  EventStream stream(address_, "/tap?path_prefix=/test.Echo/Say&limit=5");
  // The subscription is live when the stream says ready.
  absl::StatusOr<std::string> ready = stream.Next(absl::Seconds(5));
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_TRUE(absl::StartsWith(*ready, "event ready")) << *ready;
  std::vector<std::string> events;
  for (int i = 0; i < 5; ++i) {
    // Another method (the backend does not have it): not tapped.
    (void)channel_->CallRaw("/test.Echo/Other", "x");
  }
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(channel_->CallRaw("/test.Echo/Say", "x").status.ok());
  }
  // Three events per request: request, response, end.
  for (int i = 0; i < 15; ++i) {
    absl::StatusOr<std::string> event = stream.Next(absl::Seconds(5));
    ASSERT_TRUE(event.ok()) << event.status() << " after " << i;
    events.push_back(*event);
  }
  EXPECT_EQ(stream.status(), 200);
  int requests = 0;
  for (const std::string& e : events) {
    EXPECT_FALSE(absl::StrContains(e, "/test.Echo/Other")) << e;
    if (absl::StrContains(e, "\"kind\":\"request\"")) {
      ++requests;
      EXPECT_TRUE(absl::StrContains(e, "\"path\":\"/test.Echo/Say\"")) << e;
    }
  }
  EXPECT_EQ(requests, 5);
  // The limit reached and every request ended: the stream says done.
  absl::StatusOr<std::string> done = stream.Next(absl::Seconds(5));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(absl::StartsWith(*done, "event done")) << *done;
}

// The bounds, on a server of its own with small limits.
internal::AdminSources QuietSources() {
  internal::AdminSources sources;
  sources.describe = [] { return std::string("[]"); };
  sources.metrics = [] { return std::string(); };
  sources.tap = [](const TapOptions&)
      -> absl::StatusOr<std::unique_ptr<TapSubscription>> {
    return absl::UnavailableError("no tap here");
  };
  return sources;
}

TEST(AdminBoundsTest, IdleConnectionsAreClosedAndTheCapHolds) {
  internal::AdminLimits limits;
  limits.max_connections = 2;
  limits.idle_timeout = absl::Seconds(1);
  auto server =
      internal::AdminServer::Start("127.0.0.1:0", QuietSources(), limits);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->address();
  // Two idle connections take the cap: a third gets no answer.
  const int a = testing::ConnectTo(address);
  const int b = testing::ConnectTo(address);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  HttpAnswer refused = HttpGet(address, "/healthz", "GET", absl::Seconds(2));
  EXPECT_EQ(refused.status, 0);
  // The idle ones are closed by the server within its timeout (bounded).
  char byte;
  EXPECT_EQ(recv(a, &byte, 1, 0), 0);  // the server closed it
  EXPECT_EQ(recv(b, &byte, 1, 0), 0);
  close(a);
  close(b);
  EXPECT_TRUE(testing::WaitFor(
      [&] { return HttpGet(address, "/healthz").status == 200; },
      absl::Seconds(5)));
}

TEST(AdminBoundsTest, TapStreamsAreCapped) {
  auto discovery = StaticDiscovery::Create();
  MeshOptions options;
  options.discovery = discovery;
  auto mesh = Mesh::Create(options);
  ASSERT_TRUE(mesh.ok());
  internal::AdminSources sources = QuietSources();
  Mesh* m = mesh->get();
  sources.tap = [m](const TapOptions& o) { return m->Tap(o); };
  internal::AdminLimits limits;
  limits.max_tap_streams = 1;
  auto server = internal::AdminServer::Start("127.0.0.1:0", sources, limits);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->address();
  EventStream first(address, "/tap");
  ASSERT_TRUE(first.Next(absl::Seconds(5)).ok());  // ready
  HttpAnswer second = HttpGet(address, "/tap");
  EXPECT_EQ(second.status, 503);
  EXPECT_TRUE(absl::StrContains(second.body, "1 tap streams are open"))
      << second.body;
}

TEST(AdminBoundsTest, APeerNotOnLoopbackIsRefusedNamingIt) {
  const std::string own = testing::NonLoopbackAddress();
  if (own.empty()) {
    GTEST_SKIP() << "this host has no IPv4 address but loopback";
  }
  // Listening everywhere changes nothing of who is served.
  auto server = internal::AdminServer::Start("0.0.0.0:0", QuietSources());
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string port =
      (*server)->address().substr((*server)->address().rfind(':') + 1);
  // Connecting to the host's own address, the peer is that address.
  HttpAnswer refused = HttpGet(absl::StrCat(own, ":", port), "/healthz");
  EXPECT_EQ(refused.status, 403);
  EXPECT_TRUE(absl::StrContains(
      refused.body, absl::StrCat("peer ", own, " is not on this host")))
      << refused.body;
  EXPECT_EQ(HttpGet(absl::StrCat("127.0.0.1:", port), "/healthz").status, 200);
}

TEST(AdminBoundsTest, ServerEndsWithAStreamOpen) {
  auto discovery = StaticDiscovery::Create();
  MeshOptions options;
  options.discovery = discovery;
  options.admin_address = "127.0.0.1:0";
  auto mesh = Mesh::Create(options);
  ASSERT_TRUE(mesh.ok());
  EventStream stream((*mesh)->AdminAddress(), "/tap");
  ASSERT_TRUE(stream.Next(absl::Seconds(5)).ok());  // ready
  const absl::Time start = absl::Now();
  mesh->reset();  // stops the server with the stream open
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

}  // namespace
}  // namespace mesh

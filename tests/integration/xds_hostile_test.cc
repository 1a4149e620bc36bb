// mesh's xDS client against a hostile control plane (a ScriptedAdsServer on
// 127.0.0.1): what a server can make the client spend — log lines, NACK
// bytes — stays bounded, and what the client ACKs is what it applies.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/log_capture.h"
#include "tests/support/test_echo_server.h"
#include "tests/support/xds_script_fixture.h"

namespace mesh {
namespace {

using testing::ClaOf;
using testing::DiscoveryRequest;
using ::testing::HasSubstr;
using testing::kCla;
using testing::kCluster;
using testing::kEds;
using testing::kLds;
using testing::kRds;
using testing::LogCapture;
using testing::MakeRoutes;
using testing::RouteTo;

class XdsHostileTest : public testing::XdsScriptTest {
 protected:
  // The log lines holding `part`, and their bytes.
  static std::vector<std::string> LinesWith(const LogCapture& log,
                                            const std::string& part) {
    std::vector<std::string> out;
    for (const std::string& line : log.Lines()) {
      if (absl::StrContains(line, part)) out.push_back(line);
    }
    return out;
  }
  static size_t Bytes(const std::vector<std::string>& lines) {
    size_t n = 0;
    for (const std::string& line : lines) n += line.size();
    return n;
  }

  // A RouteConfiguration the client refuses (a regex RE2 does not take).
  static envoy::config::route::v3::RouteConfiguration BadRoutes() {
    return MakeRoutes(absl::StrCat(
        R"(routes { match { safe_regex { regex: "/test.Echo/(" } } )",
        R"(route { cluster: ")", kCluster, R"(" } })"));
  }
};

TEST_F(XdsHostileTest, AMebibyteVersionIsQuotedShortInNacksAndLogLines) {
  testing::Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ASSERT_NO_FATAL_FAILURE(ServeChain(ClaOf(kCla, backends)));
  LogCapture log;
  const std::string version(1 << 20, 'v');
  const auto bad = BadRoutes();
  for (int i = 0; i < 20; ++i) {
    std::string error = ExpectNack(Respond(kRds, version, {&bad}), "r1");
    // The quote: 256 bytes of the version and its size, not the megabyte.
    EXPECT_THAT(error, HasSubstr("... (1048576 bytes)"));
    EXPECT_LT(error.size(), 2048u) << i;
  }
  ASSERT_NO_FATAL_FAILURE(Sync());
  // Twenty NACKs inside one period: one line, a few hundred bytes.
  const std::vector<std::string> lines = LinesWith(log, "NACK");
  EXPECT_EQ(lines.size(), 1u);
  EXPECT_LT(Bytes(lines), 2048u);
  // The last good routes serve.
  EXPECT_TRUE(Call().status.ok());
}

TEST_F(XdsHostileTest, ResponsesOfATypeNeverAskedForAreLoggedOnceAPeriod) {
  testing::Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ASSERT_NO_FATAL_FAILURE(ServeChain(ClaOf(kCla, backends)));
  LogCapture log;
  const std::string type =
      absl::StrCat("type.googleapis.com/mesh.test.", std::string(4096, 'X'));
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(server_->Send(testing::MakeResponse(type, "1", {})));
  }
  // An ACKed EDS response sent after them: all 300 have been read.
  ASSERT_NO_FATAL_FAILURE(Sync());
  const std::vector<std::string> lines = LinesWith(log, "never asked for");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_LT(lines[0].size(), 1024u);
  EXPECT_TRUE(Call().status.ok());
}

// A server whose every answer cannot be parsed (a version that is not
// UTF-8). The client ends each stream naming the message, and waits longer
// before each new one (the fixture's backoff: 50 ms doubling to 200 ms,
// each wait drawn from the upper half). The waits once restarted from
// 50 ms after every stream that had received anything, bad or not, and the
// log said only CANCELLED.
TEST_F(XdsHostileTest, UnparseableResponsesEndTheStreamAndTheBackoffGrows) {
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  LogCapture log;
  testing::ScriptedAdsServer::DiscoveryResponse bad =
      testing::MakeResponse(kLds, "\xff", {});
  for (int stream = 1; stream <= 4; ++stream) {
    ASSERT_TRUE(Await(
        kLds, [](const DiscoveryRequest&) { return true; }, stream));
    ASSERT_TRUE(server_->Send(bad));
  }
  ASSERT_TRUE(log.WaitForLine(
      {"could not parse a", "DiscoveryResponse", "reconnecting in"}));
  std::vector<std::string> lines;
  ASSERT_TRUE(testing::WaitFor([&] {
    lines = LinesWith(log, "reconnecting in ");
    return lines.size() >= 3;
  }));
  std::vector<absl::Duration> waits;
  for (const std::string& line : lines) {
    EXPECT_THAT(line, HasSubstr("could not parse a")) << line;
    absl::Duration wait;
    const size_t at = line.rfind("reconnecting in ") + 16;
    ASSERT_TRUE(absl::ParseDuration(line.substr(at), &wait)) << line;
    waits.push_back(wait);
  }
  // The third wait is drawn from [100 ms, 200 ms].
  EXPECT_GE(waits[2], absl::Milliseconds(100)) << lines[2];
  EXPECT_LE(waits[0], absl::Milliseconds(50)) << lines[0];
}

TEST_F(XdsHostileTest,
       RoutesTheRouteTableWouldDropAreNackedAndTheLastGoodServes) {
  // 10,000 routes were once ACKed, then the route table kept 1,000 and
  // calls matching the rest went elsewhere.
  testing::Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ASSERT_NO_FATAL_FAILURE(ServeChain(ClaOf(kCla, backends)));
  std::string routes;
  for (int i = 0; i < 1001; ++i) {
    absl::StrAppend(&routes, R"(routes { match { path: "/test.Echo/M)", i,
                    R"(" } route { cluster: ")", kCluster, R"(" } } )");
  }
  const auto many = MakeRoutes(routes);
  const std::string error = ExpectNack(Respond(kRds, "r2", {&many}), "r1");
  EXPECT_THAT(error, HasSubstr("1001 routes, more than 1000"));
  EXPECT_THAT(error, HasSubstr("RouteLimits::max_routes"));
  ASSERT_NO_FATAL_FAILURE(Sync());
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(Call().status.ok()) << i;
}

TEST_F(XdsHostileTest, ACallThatMatchesNoRouteFailsAtOnceNamingIt) {
  testing::Backends backends = testing::StartBackends(1);
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const auto routes = MakeRoutes(absl::StrCat(
      R"(routes { match { prefix: "/test.Echo/" } route { cluster: ")",
      kCluster, R"(" } })"));
  const auto listener = testing::MakeListener();
  const auto cluster = testing::MakeEdsCluster(kCluster, kCla);
  const auto cla = ClaOf(kCla, backends);
  ExpectAck(Serve(testing::kLds, {testing::kTarget}, "l1", {&listener}), "l1");
  ExpectAck(Serve(kRds, {testing::kRoutes}, "r1", {&routes}), "r1");
  ExpectAck(Serve(testing::kCds, {kCluster}, "c1", {&cluster}), "c1");
  ExpectAck(Serve(kEds, {kCla}, "e1", {&cla}), "e1");
  ASSERT_TRUE(Call().status.ok());
  // gRPC fails such a call UNAVAILABLE at once; it once waited out the
  // fail-fast time and said "no endpoints". Here a wait would end after
  // 60 s, past the call's 20 s deadline (DEADLINE_EXCEEDED).
  ChannelOptions options;
  options.fail_fast_timeout = absl::Seconds(60);
  auto channel =
      mesh_->NewChannel(absl::StrCat("xds:///", testing::kTarget), options);
  ASSERT_TRUE(channel.ok()) << channel.status();
  CallOptions call;
  call.timeout = absl::Seconds(20);
  CallResult r = (*channel)->CallRaw("/other.Service/Method", "x", call);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("no matching route for '/other.Service/Method'"));
  EXPECT_EQ(backends[0]->calls_received(), 1);
}

TEST_F(XdsHostileTest, CallsWaitingForAMissingRouteConfigurationNameIt) {
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const auto listener = testing::MakeListener();
  ExpectAck(Serve(testing::kLds, {testing::kTarget}, "l1", {&listener}), "l1");
  // The RouteConfiguration is asked for and never sent.
  ASSERT_TRUE(Await(kRds, [](const testing::DiscoveryRequest&) {
                return true;
              }).has_value());
  ChannelOptions options;
  options.fail_fast_timeout = absl::Milliseconds(200);
  auto channel =
      mesh_->NewChannel(absl::StrCat("xds:///", testing::kTarget), options);
  ASSERT_TRUE(channel.ok()) << channel.status();
  CallResult r = (*channel)->CallRaw("/test.Echo/Say", "x");
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("names RouteConfiguration 'svc-routes', which has "
                        "not come"));
}

// A Mesh whose xDS server is at `address`, and a channel to it whose calls
// wait at most `fail_fast`.
struct LoneXdsMesh {
  LoneXdsMesh(const std::string& address, absl::Duration fail_fast) {
    auto made = testing::MakeXdsMesh(address);
    EXPECT_TRUE(made.ok()) << made.status();
    if (!made.ok()) return;
    mesh = *std::move(made);
    ChannelOptions options;
    options.fail_fast_timeout = fail_fast;
    auto made_channel =
        mesh->NewChannel(absl::StrCat("xds:///", testing::kTarget), options);
    EXPECT_TRUE(made_channel.ok()) << made_channel.status();
    if (made_channel.ok()) channel = *std::move(made_channel);
  }
  std::unique_ptr<Mesh> mesh;
  std::unique_ptr<Channel> channel;
};

TEST(XdsStreamErrorTest, AServerWithoutAdsFailsCallsAtOnceNamingIt) {
  // A gRPC server of another service (test.Echo) answers ADS
  // UNIMPLEMENTED.
  std::unique_ptr<testing::TestEchoServer> other =
      testing::TestEchoServer::Start();
  // A wait would end after 60 s; the call's deadline is 20 s: a wait gives
  // DEADLINE_EXCEEDED, the immediate failure UNAVAILABLE.
  LoneXdsMesh lone(other->address(), absl::Seconds(60));
  ASSERT_NE(lone.channel, nullptr);
  CallOptions call;
  call.timeout = absl::Seconds(20);
  CallResult r = lone.channel->CallRaw("/test.Echo/Say", "x", call);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  EXPECT_THAT(std::string(r.status.message()), HasSubstr("UNIMPLEMENTED"));
  EXPECT_THAT(std::string(r.status.message()), HasSubstr("does not serve ADS"));
  // Later calls too, at once.
  r = lone.channel->CallRaw("/test.Echo/Say", "x", call);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
}

TEST(XdsStreamErrorTest, ARefusedConnectionIsNamedByCallsThatWaited) {
  // Nothing listens on port 1 of 127.0.0.1.
  LoneXdsMesh lone("127.0.0.1:1", absl::Milliseconds(1500));
  ASSERT_NE(lone.channel, nullptr);
  CallResult r = lone.channel->CallRaw("/test.Echo/Say", "x");
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("xDS stream to 127.0.0.1:1 ended: UNAVAILABLE"));
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("discovery has not answered yet"));
}

}  // namespace
}  // namespace mesh

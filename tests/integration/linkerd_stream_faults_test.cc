// A hostile Linkerd control plane on 127.0.0.1 (RawStreamServer writes any
// bytes): messages that cannot be parsed — a label that is not UTF-8, a
// profile nested past protobuf's limit — and a message past the receive
// limit. Each once froze the stream for good or restarted it silently. Now
// the stream ends, the log says why, a new stream starts after backoff, and
// its first answer replaces what the client had. The new stream waits on
// the timer thread lent to the source. An observer may call back into its
// subscription, even drop it, inside an update.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "linkerd/destination.pb.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"
#include "src/base/timer_thread.h"
#include "src/discovery/common/builtin_source.h"
#include "tests/support/log_capture.h"
#include "tests/support/raw_stream_server.h"
#include "tests/support/self_dropping_observer.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

namespace dst = ::io::linkerd::proxy::destination;
using testing::LogCapture;
using testing::RawStreamServer;

constexpr char kTarget[] = "books.test:7000";
constexpr char kGet[] = "/io.linkerd.proxy.destination.Destination/Get";
constexpr char kGetProfile[] =
    "/io.linkerd.proxy.destination.Destination/GetProfile";

void AddAddress(dst::WeightedAddrSet* set, int port,
                const std::string& zone = "a") {
  dst::WeightedAddr* addr = set->add_addrs();
  addr->mutable_addr()->mutable_ip()->set_ipv4(0x7f000001);
  addr->mutable_addr()->set_port(port);
  addr->set_weight(10000);
  (*addr->mutable_metric_labels())["zone"] = zone;
}

std::string AddOf(const std::vector<int>& ports) {
  dst::Update u;
  for (int port : ports) AddAddress(u.mutable_add(), port);
  return u.SerializeAsString();
}

std::string ProfileWithRoute(const std::string& name) {
  dst::DestinationProfile p;
  dst::Route* route = p.add_routes();
  route->mutable_condition()->mutable_path()->set_regex("/test.Echo/.*");
  (*route->mutable_metrics_labels())["route"] = name;
  return p.SerializeAsString();
}

class LinkerdStreamFaultsTest : public ::testing::Test {
 protected:
  void StartMesh(RawStreamServer::Script script, int max_message_bytes = 0) {
    server_ = RawStreamServer::Start(std::move(script));
    LinkerdDiscoveryOptions o;
    o.address = server_->address();
    o.backoff_min = absl::Milliseconds(10);
    o.backoff_max = absl::Milliseconds(100);
    if (max_message_bytes > 0) o.max_message_bytes = max_message_bytes;
    MeshOptions options;
    options.discovery = *NewLinkerdDiscovery(o);
    mesh_ = *Mesh::Create(options);
    channel_ = *mesh_->NewChannel(kTarget);
  }

  std::vector<std::string> Addresses() {
    std::vector<std::string> out;
    for (const EndpointStats& s : channel_->EndpointStatsSnapshot()) {
      out.push_back(s.address);
    }
    return out;
  }

  LogCapture log_;
  std::vector<std::unique_ptr<tools::EchoBackend>> backends_ =
      testing::StartBackends(2);
  std::unique_ptr<RawStreamServer> server_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
};

// A Get update whose label value is not UTF-8 after a good one: the client
// must cancel, log, reconnect, and apply the next stream's first answer as
// a Reset (the endpoint removed meanwhile goes; it once kept 8-16 % of the
// traffic until the end of the run).
TEST_F(LinkerdStreamFaultsTest, AnUpdateWithABadStringRestartsTheStream) {
  const int a = backends_[0]->port(), b = backends_[1]->port();
  StartMesh(
      [&](const std::string& method, int stream) -> std::vector<std::string> {
        if (method != kGet) return {};
        if (stream == 0) {
          dst::Update bad;
          AddAddress(bad.mutable_add(), 1, "eu\xff");
          return {AddOf({a, b}), bad.SerializeAsString()};
        }
        return {AddOf({a})};  // b has gone meanwhile
      });
  ASSERT_TRUE(testing::WaitFor([&] {
    return Addresses() == std::vector<std::string>{backends_[0]->address()};
  }));
  EXPECT_GE(server_->streams(kGet), 2);
  // The client ended stream 0 (the server learns it on its own time).
  EXPECT_TRUE(testing::WaitFor([&] { return server_->cancelled(kGet) >= 1; }));
  EXPECT_TRUE(
      log_.WaitForLine({"linkerd Get 'books.test:7000'", "could not parse a",
                        "io.linkerd.proxy.destination.Update", "restarting"}));
  for (int i = 0; i < 20; ++i) {
    CallResult r = channel_->CallRaw("/test.Echo/Say", "x");
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.endpoint, backends_[0]->address());
  }
  // Describe() shows why the stream last ended.
  EXPECT_THAT(mesh_->Describe(), ::testing::HasSubstr("could not parse"));
}

// A profile whose request match is nested deeper than protobuf's parse
// limit (100): the profile stream restarts and the next profile replaces
// the one the client had.
TEST_F(LinkerdStreamFaultsTest, AProfileNestedTooDeepRestartsTheStream) {
  dst::DestinationProfile deep;
  dst::Route* route = deep.add_routes();
  dst::RequestMatch* m = route->mutable_condition();
  for (int i = 0; i < 150; ++i) m = m->mutable_not_();
  m->mutable_path()->set_regex("/x");
  const std::string deep_bytes = deep.SerializeAsString();
  const int a = backends_[0]->port();
  StartMesh(
      [&](const std::string& method, int stream) -> std::vector<std::string> {
        if (method == kGet) return {AddOf({a})};
        if (stream == 0) return {ProfileWithRoute("v1"), deep_bytes};
        return {ProfileWithRoute("v2")};
      });
  ASSERT_TRUE(testing::WaitFor([&] {
    auto config = channel_->service_config();
    return config.has_value() && config->routes.size() == 1 &&
           config->routes[0].metrics_labels.at("route") == "v2";
  }));
  EXPECT_GE(server_->streams(kGetProfile), 2);
  EXPECT_TRUE(log_.WaitForLine(
      {"linkerd GetProfile 'books.test:7000'", "could not parse a",
       "io.linkerd.proxy.destination.DestinationProfile", "restarting"}));
}

// A message over gRPC's receive limit ends the stream: the log says so
// (it once restarted with no line), and the next stream's answer applies.
TEST_F(LinkerdStreamFaultsTest, AMessageOverTheReceiveLimitIsLogged) {
  const int a = backends_[0]->port(), b = backends_[1]->port();
  std::vector<int> many;
  for (int i = 0; i < 2000; ++i) many.push_back(20000 + i);
  const std::string big = AddOf(many);
  ASSERT_GT(big.size(), 16u * 1024);
  StartMesh(
      [&](const std::string& method, int stream) -> std::vector<std::string> {
        if (method != kGet) return {};
        if (stream == 0) return {AddOf({a, b}), big};
        return {AddOf({a})};
      },
      /*max_message_bytes=*/16 * 1024);
  ASSERT_TRUE(testing::WaitFor([&] {
    return Addresses() == std::vector<std::string>{backends_[0]->address()};
  }));
  EXPECT_TRUE(log_.WaitForLine({"linkerd Get 'books.test:7000'",
                                "exceeded the receive limit", "16384",
                                "restarting in"}));
}

class IgnoringObserver final : public EndpointObserver {
 public:
  void OnEndpointUpdate(const EndpointUpdate&) override {}
};

// The source's reconnects are scheduled on the timer thread lent to it (a
// Mesh lends its own): while that thread is held no rejected stream is
// reopened, though the backoff (at most 20 ms) passes 15 times over; once
// it is released the next stream starts.
TEST_F(LinkerdStreamFaultsTest, ItsReconnectsWaitOnTheTimerThreadLentToIt) {
  server_ = RawStreamServer::Start(
      [](const std::string& method, int) -> std::vector<std::string> {
        if (method != kGet) return {};
        return {std::string("\xff\xff\xff", 3)};  // no Update parses so
      });
  LinkerdDiscoveryOptions o;
  o.address = server_->address();
  o.backoff_min = absl::Milliseconds(10);
  o.backoff_max = absl::Milliseconds(20);
  std::shared_ptr<DiscoverySource> source = *NewLinkerdDiscovery(o);
  internal::BuiltinSource* builtin = internal::AsBuiltin(source.get());
  ASSERT_NE(builtin, nullptr);
  auto timers = std::make_shared<internal::TimerThread>();
  builtin->LendTimers(timers);
  internal::Notification held, release;
  timers->RunAfter(absl::ZeroDuration(), [&] {
    held.Notify();
    release.WaitForNotification();
  });
  ASSERT_TRUE(held.WaitForNotificationWithTimeout(absl::Seconds(30)));

  IgnoringObserver observer;
  auto subscription = source->Subscribe(kTarget, &observer);
  ASSERT_TRUE(testing::WaitFor([&] { return server_->cancelled(kGet) >= 1; }));
  absl::SleepFor(absl::Milliseconds(300));  // 15 backoffs at most
  EXPECT_EQ(server_->streams(kGet), 1);
  release.Notify();
  EXPECT_TRUE(testing::WaitFor([&] { return server_->streams(kGet) >= 2; }));
  subscription.reset();
}

// An observer reads its subscription's state and drops the subscription
// inside its first update: the hooks once ran under the stream's lock,
// which both calls take.
TEST_F(LinkerdStreamFaultsTest,
       AnObserverMayCallBackAndUnsubscribeInsideAnUpdate) {
  const int a = backends_[0]->port(), b = backends_[1]->port();
  // Every Get stream sends one Add and waits until the client goes.
  server_ = RawStreamServer::Start(
      [&](const std::string& method, int) -> std::vector<std::string> {
        if (method != kGet) return {};
        return {AddOf({a, b})};
      });
  LinkerdDiscoveryOptions o;
  o.address = server_->address();
  std::shared_ptr<DiscoverySource> source = *NewLinkerdDiscovery(o);
  testing::SelfDroppingObserver dropping;
  dropping.Set(source->Subscribe(kTarget, &dropping));
  std::optional<testing::SelfDroppingObserver::Seen> seen =
      dropping.WaitUntilDone();
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->endpoints, 2u);
  EXPECT_EQ(seen->state.messages, 1);
  // The stream was ended by the client, and not reopened.
  EXPECT_TRUE(testing::WaitFor([&] { return server_->cancelled(kGet) == 1; }));
  EXPECT_EQ(server_->streams(kGet), 1);
  EXPECT_EQ(dropping.updates(), 1);
}

}  // namespace
}  // namespace mesh

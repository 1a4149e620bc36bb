// Linkerd discovery end to end: the real local control plane
// (tools/mesh-control-plane) serving Destination.Get/GetProfile on 127.0.0.1,
// real gRPC backends, calls through a mesh::Channel.
#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "tests/support/test_support.h"
#include "tools/mesh-control-plane/control_plane.h"
#include "tools/mesh-control-plane/json.h"

namespace mesh {
namespace {

using controlplane::Config;
using controlplane::ControlPlane;
using controlplane::EndpointSpec;
using ::testing::HasSubstr;

constexpr char kTarget[] = "echo.test:7000";
constexpr char kMethod[] = "/test.Echo/Say";

Config ConfigWith(
    const std::vector<std::unique_ptr<tools::EchoBackend>>& backends,
    const std::vector<int>& which) {
  Config c;
  auto& t = c.targets[kTarget];
  for (int i : which) {
    EndpointSpec e;
    e.address = backends[i]->address();
    t.endpoints.push_back(e);
  }
  return c;
}

class LinkerdTest : public ::testing::Test {
 protected:
  void StartMesh(Config config, bool dns_fallback = true) {
    auto cp = ControlPlane::Start("127.0.0.1:0", std::move(config));
    ASSERT_TRUE(cp.ok()) << cp.status();
    control_plane_ = *std::move(cp);
    LinkerdDiscoveryOptions o;
    o.address = absl::StrCat("127.0.0.1:", control_plane_->port());
    o.backoff_max =
        absl::Milliseconds(500);  // reconnects within the test's time
    o.dns_fallback = dns_fallback;
    auto discovery = NewLinkerdDiscovery(o);
    ASSERT_TRUE(discovery.ok()) << discovery.status();
    MeshOptions options;
    options.discovery = *discovery;
    auto m = Mesh::Create(options);
    ASSERT_TRUE(m.ok()) << m.status();
    mesh_ = *std::move(m);
  }

  std::unique_ptr<mesh::Channel> NewChannel(
      const std::string& target = kTarget,
      absl::Duration fail_fast = absl::Seconds(3)) {
    ChannelOptions options;
    options.fail_fast_timeout = fail_fast;
    auto c = mesh_->NewChannel(target, options);
    EXPECT_TRUE(c.ok()) << c.status();
    return *std::move(c);
  }

  // Sends `n` calls one after another, running `between(i)` before call i;
  // returns how many succeeded.
  int Drive(mesh::Channel& channel, int n,
            const std::function<void(int)>& between) {
    int ok = 0;
    for (int i = 0; i < n; ++i) {
      between(i);
      CallResult r = channel.CallRaw(kMethod, "x");
      EXPECT_TRUE(r.status.ok()) << "call " << i << ": " << r.status;
      ok += r.status.ok();
    }
    return ok;
  }

  std::unique_ptr<ControlPlane> control_plane_;
  std::unique_ptr<Mesh> mesh_;
};

TEST(LinkerdOptionsTest, AnAddressGrpcWouldMisreadIsRefusedNamingIt) {
  // gRPC connects "127.0.0.1:99999" to port 34463.
  LinkerdDiscoveryOptions options;
  options.address = "127.0.0.1:99999";
  absl::Status s = NewLinkerdDiscovery(options).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr("LinkerdDiscoveryOptions.address: port of "
                                   "'127.0.0.1:99999' must be 1..65535"));
  options.address = "linkerd-dst-headless.linkerd.svc.cluster.local:8086";
  EXPECT_TRUE(NewLinkerdDiscovery(options).ok());
}

TEST_F(LinkerdTest, EndpointsAddedAndRemovedWhileCallsFlow) {
  auto backends = testing::StartBackends(3);
  StartMesh(ConfigWith(backends, {0, 1}));
  auto channel = NewChannel();
  ASSERT_TRUE(channel->WaitForEndpoints(absl::Seconds(10)).ok());

  int64_t zero_at_removal = -1;
  int ok = Drive(*channel, 600, [&](int i) {
    if (i == 150) {
      control_plane_->SetConfig(ConfigWith(backends, {0, 1, 2}));
      EXPECT_TRUE(testing::WaitFor(
          [&] { return channel->EndpointStatsSnapshot().size() == 3; }));
    }
    if (i == 400) {
      control_plane_->SetConfig(ConfigWith(backends, {1, 2}));
      EXPECT_TRUE(testing::WaitFor(
          [&] { return channel->EndpointStatsSnapshot().size() == 2; }));
      zero_at_removal = backends[0]->calls_received();
    }
  });
  EXPECT_EQ(ok, 600);
  EXPECT_GT(backends[2]->calls_received(), 0);  // the added backend got traffic
  // Calls are sequential: none reached the removed backend after the update.
  EXPECT_EQ(backends[0]->calls_received(), zero_at_removal);
  EXPECT_EQ(backends[0]->calls_received() + backends[1]->calls_received() +
                backends[2]->calls_received(),
            600);
}

TEST_F(LinkerdTest, ControlPlaneRestartKeepsServingAndReconnectReplacesTheSet) {
  auto backends = testing::StartBackends(3);
  StartMesh(ConfigWith(backends, {0, 1, 2}));
  auto channel = NewChannel();
  ASSERT_TRUE(channel->WaitForEndpoints(absl::Seconds(10)).ok());
  const int port = control_plane_->port();
  int64_t two_at_reconnect = -1;

  int ok = Drive(*channel, 600, [&](int i) {
    if (i == 100) control_plane_->Kill();  // calls keep flowing below
    if (i == 300) {
      // Back on the same port without backend 2: the reconnect's first Add
      // must replace the set, not merge into it.
      auto cp = ControlPlane::Start(absl::StrCat("127.0.0.1:", port),
                                    ConfigWith(backends, {0, 1}));
      ASSERT_TRUE(cp.ok()) << cp.status();
      control_plane_ = *std::move(cp);
      EXPECT_TRUE(testing::WaitFor(
          [&] { return channel->EndpointStatsSnapshot().size() == 2; }));
      two_at_reconnect = backends[2]->calls_received();
    }
  });
  EXPECT_EQ(ok, 600);  // no call failed because the control plane was down
  EXPECT_GT(two_at_reconnect, 0);
  EXPECT_EQ(backends[2]->calls_received(), two_at_reconnect);
}

TEST_F(LinkerdTest, NoEndpointsAndUnknownTargetsFailFast) {
  Config config;
  config.targets["empty.test:80"];  // known, no endpoints
  StartMesh(config);

  auto unknown = NewChannel("nowhere.test:80");
  // The answer is final: the wait returns with it, long before its timeout.
  absl::Time start = absl::Now();
  absl::Status wait = unknown->WaitForEndpoints(absl::Seconds(60));
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_EQ(wait.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(wait.message()), HasSubstr("does not exist"));
  EXPECT_THAT(std::string(unknown->CallRaw(kMethod, "x").status.message()),
              HasSubstr("'nowhere.test:80' does not exist"));

  // Known with no endpoints: calls wait for some, up to the fail-fast
  // timeout, then say why.
  auto empty = NewChannel("empty.test:80", absl::Milliseconds(50));
  ASSERT_TRUE(testing::WaitFor([&] {
    return absl::StrContains(empty->CallRaw(kMethod, "x").status.message(),
                             "no endpoints for target 'empty.test:80'; waited "
                             "50ms for endpoints");
  }));
  EXPECT_EQ(empty->CallRaw(kMethod, "x").status.code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(LinkerdTest, NotAMeshServiceStopsRetryingWithoutTheDnsFallback) {
  Config config;
  config.not_mesh.insert("external.test:443");
  StartMesh(config, /*dns_fallback=*/false);
  auto channel = NewChannel("external.test:443");
  absl::Time start = absl::Now();
  absl::Status wait = channel->WaitForEndpoints(absl::Seconds(60));
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));  // final: no timeout
  EXPECT_EQ(wait.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(wait.message()), HasSubstr("not a mesh service"));
  EXPECT_EQ(control_plane_->calls("Get", "external.test:443"), 1);
  // Calls fail at once too, inside CallRawAsync: nothing to wait for.
  auto inline_done = std::make_shared<std::atomic<bool>>(false);
  channel->CallRawAsync(kMethod, "x", {}, [inline_done](CallResult r) {
    EXPECT_THAT(std::string(r.status.message()),
                HasSubstr("not a mesh service"));
    inline_done->store(true);
  });
  EXPECT_TRUE(inline_done->load());
  // With a 100 ms backoff, a retrying client would call again within a
  // second; this waits for that to happen and expects it not to.
  EXPECT_FALSE(testing::WaitFor(
      [&] { return control_plane_->calls("Get", "external.test:443") > 1; },
      absl::Seconds(1)));
}

TEST_F(LinkerdTest, SilentStreamDoesNotBlockOtherTargets) {
  auto backends = testing::StartBackends(1);
  Config config = ConfigWith(backends, {0});
  config.silent.insert("silent.test:80");
  StartMesh(config);
  auto silent = NewChannel("silent.test:80", absl::Milliseconds(50));
  auto served = NewChannel();
  ASSERT_TRUE(served->WaitForEndpoints(absl::Seconds(10)).ok());
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(served->CallRaw(kMethod, "x").status.ok());
  CallResult r = silent->CallRaw(kMethod, "x");
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("not answered yet); waited 50ms"));
  EXPECT_TRUE(testing::WaitFor(
      [&] { return control_plane_->calls("Get", "silent.test:80") == 1; }));
}

TEST_F(LinkerdTest, ProfilesArriveConvertedAndFollowEdits) {
  auto backends = testing::StartBackends(1);
  Config config = ConfigWith(backends, {0});
  controlplane::ProfileSpec profile;
  controlplane::RouteSpec get;
  get.name = "GetBook";
  get.path_regex = "^/books.Library/GetBook$";
  get.timeout_ms = 300;
  get.retryable = true;
  get.failure_statuses = {{500, 599}};
  controlplane::RouteSpec bad;
  bad.name = "Broken";
  bad.path_regex = "(unclosed";
  profile.routes = {get, bad};
  profile.retry_budget = controlplane::BudgetSpec{0.5, 5, 2000};
  profile.dst_overrides = {{"books-v2.test:7000", 1000}, {"no port", 5}};
  config.targets[kTarget].profile = profile;
  StartMesh(config);
  auto channel = NewChannel();
  ASSERT_TRUE(
      testing::WaitFor([&] { return channel->service_config().has_value(); }));
  ServiceConfig sc = *channel->service_config();
  ASSERT_EQ(sc.routes.size(), 1u);  // the bad regex route was dropped
  EXPECT_EQ(sc.routes[0].name, "GetBook");
  EXPECT_EQ(sc.routes[0].timeout, absl::Milliseconds(300));
  EXPECT_TRUE(sc.routes[0].is_retryable);
  ASSERT_EQ(sc.routes[0].response_classes.size(), 1u);
  EXPECT_TRUE(sc.routes[0].response_classes[0].is_failure);
  ASSERT_TRUE(sc.retry_budget.has_value());
  EXPECT_NEAR(sc.retry_budget->retry_ratio, 0.5, 1e-6);
  EXPECT_EQ(sc.retry_budget->min_retries_per_second, 5u);
  EXPECT_EQ(sc.retry_budget->ttl, absl::Seconds(2));
  ASSERT_EQ(sc.backends.size(), 1u);  // "no port" was dropped
  EXPECT_EQ(sc.backends[0].authority, "books-v2.test:7000");
  EXPECT_EQ(sc.backends[0].weight, 1000u);
  EXPECT_EQ(sc.fully_qualified_name, "echo.test");

  config.targets[kTarget].profile->routes = {};
  control_plane_->SetConfig(config);
  EXPECT_TRUE(testing::WaitFor(
      [&] { return channel->service_config()->routes.empty(); }));
  // The profile outlives a control plane outage.
  control_plane_->Kill();
  ASSERT_TRUE(channel->service_config().has_value());
  EXPECT_EQ(channel->service_config()->fully_qualified_name, "echo.test");
}

TEST_F(LinkerdTest, ConfigFileEditsAreFollowedAndBadVersionsRejected) {
  auto backends = testing::StartBackends(2);
  std::string path = ::testing::TempDir() + "/mesh-control-plane-test.json";
  // Written whole and renamed into place, so the watcher never reads half.
  auto write = [&](const std::string& text) {
    {
      std::ofstream out(path + ".tmp", std::ios::trunc);
      out << text;
    }
    ASSERT_EQ(std::rename((path + ".tmp").c_str(), path.c_str()), 0);
  };
  auto config_for = [&](const std::vector<int>& which) {
    std::string eps;
    for (int i : which) {
      if (!eps.empty()) eps += ", ";
      eps += absl::StrCat("{\"address\": \"", backends[i]->address(), "\"}");
    }
    return absl::StrCat("{\n  \"targets\": {\n    \"", kTarget,
                        "\": {\"endpoints\": [", eps, "]}\n  }\n}\n");
  };
  write(config_for({0}));
  StartMesh(Config{});
  ASSERT_TRUE(control_plane_->WatchFile(path, absl::Milliseconds(10)).ok());
  auto channel = NewChannel();
  ASSERT_TRUE(channel->WaitForEndpoints(absl::Seconds(10)).ok());

  write("{\n  \"targets\": {\n    \"oops\n}\n");  // does not parse
  ASSERT_TRUE(
      testing::WaitFor([&] { return control_plane_->rejected_files() == 1; }));
  EXPECT_THAT(control_plane_->last_file_error(), HasSubstr("line 3"));
  EXPECT_EQ(channel->EndpointStatsSnapshot().size(),
            1u);  // last good config serves
  EXPECT_TRUE(channel->CallRaw(kMethod, "x").status.ok());

  write(config_for({0, 1}));
  EXPECT_TRUE(testing::WaitFor(
      [&] { return channel->EndpointStatsSnapshot().size() == 2; }));
  std::remove(path.c_str());
}

TEST_F(LinkerdTest, DescribeShowsWhatTheClientBelieves) {
  auto backends = testing::StartBackends(2);
  StartMesh(ConfigWith(backends, {0, 1}));
  auto channel = NewChannel();
  ASSERT_TRUE(channel->WaitForEndpoints(absl::Seconds(10)).ok());
  ASSERT_TRUE(
      testing::WaitFor([&] { return channel->service_config().has_value(); }));
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(channel->CallRaw(kMethod, "x").status.ok());

  // Parsed with the control plane's JSON reader: Describe() must be JSON.
  auto parsed = controlplane::ParseJson(mesh_->Describe());
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << mesh_->Describe();
  ASSERT_EQ(parsed->array.size(), 1u);
  const auto& d = parsed->array[0].object;
  EXPECT_EQ(d.at("target").string, kTarget);
  EXPECT_EQ(d.at("source").string, "linkerd");
  EXPECT_TRUE(d.at("endpoint_stream").object.at("connected").boolean);
  EXPECT_EQ(d.at("service_config").object.at("fully_qualified_name").string,
            "echo.test");
  const auto& endpoints = d.at("endpoints").array;
  ASSERT_EQ(endpoints.size(), 2u);
  double picks = 0;
  for (const auto& e : endpoints) {
    ASSERT_EQ(e.object.at("load_per_channel").array.size(), 1u);
    const auto& load = e.object.at("load_per_channel").array[0].object;
    EXPECT_EQ(load.at("pending").number, 0);
    EXPECT_GT(load.at("rtt_estimate_ms").number, 0);
    picks += load.at("picks").number;
  }
  EXPECT_EQ(picks, 10);

  control_plane_->Kill();
  ASSERT_TRUE(testing::WaitFor([&] {
    auto p = controlplane::ParseJson(mesh_->Describe());
    return p.ok() && !p->array[0]
                          .object.at("endpoint_stream")
                          .object.at("last_error")
                          .is(controlplane::JsonValue::Type::kNull);
  }));
  // The endpoints are still believed, and still served.
  EXPECT_TRUE(channel->CallRaw(kMethod, "x").status.ok());
}

}  // namespace
}  // namespace mesh

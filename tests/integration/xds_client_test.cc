// mesh's own xDS client against mesh-control-plane's ADS server on
// 127.0.0.1: the chain Listener → RouteConfiguration → Cluster →
// ClusterLoadAssignment resolves into calls on real backends, edits of the
// file are followed while calls flow, header routes and weighted clusters
// route as the file says, a listener that never comes fails its calls naming
// it, and a lost control plane leaves the cache serving.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "tests/support/test_support.h"
#include "tests/support/xds_fixtures.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace mesh {
namespace {

using controlplane::ControlPlane;
using testing::Backends;
using ::testing::HasSubstr;

std::string Endpoints(const Backends& backends, std::vector<int> which) {
  std::vector<std::string> parts;
  for (int i : which) {
    parts.push_back(
        absl::StrCat(R"({"address": ")", backends[i]->address(), R"("})"));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

class XdsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = absl::StrCat(
        ::testing::TempDir(), "xds_client_", getpid(), "_",
        ::testing::UnitTest::GetInstance()->current_test_info()->name(),
        ".json");
    WriteFile(R"({"targets": {}})");
    StartControlPlane(0);
  }
  void TearDown() override {
    mesh_.reset();
    control_plane_.reset();
    std::remove(path_.c_str());
  }

  void StartControlPlane(int port) {
    auto cp = ControlPlane::Start(absl::StrCat("127.0.0.1:", port), {},
                                  /*verbose_xds=*/false);
    ASSERT_TRUE(cp.ok()) << cp.status();
    control_plane_ = *std::move(cp);
    port_ = control_plane_->port();
    ASSERT_TRUE(control_plane_->WatchFile(path_, absl::Milliseconds(20)).ok());
  }

  // Replaces the file at once (written aside, renamed), as editors do.
  void WriteFile(const std::string& text) {
    std::string aside = path_ + ".tmp";
    {
      std::ofstream out(aside, std::ios::trunc | std::ios::binary);
      out << text;
    }
    ASSERT_EQ(std::rename(aside.c_str(), path_.c_str()), 0);
  }

  // Writes `text` and waits (bounded) until the control plane applied it.
  void Apply(const std::string& text) {
    auto before = control_plane_->ads().catalog();
    WriteFile(text);
    ASSERT_TRUE(testing::WaitFor([&] {
      return control_plane_->ads().catalog() != before;
    })) << "the control plane did not apply "
        << text;
  }

  // A Mesh whose only source is xDS from our control plane.
  void MakeMesh(absl::Duration resource_timeout = absl::Seconds(15)) {
    testing::XdsMeshOptions options;
    options.resource_timeout = resource_timeout;
    auto mesh =
        testing::MakeXdsMesh(absl::StrCat("127.0.0.1:", port_), options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
  }

  std::unique_ptr<Channel> NewChannel(const std::string& target) {
    auto channel = mesh_->NewChannel(target);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return channel.ok() ? *std::move(channel) : nullptr;
  }

  static int IndexOf(const Backends& backends, const std::string& endpoint) {
    for (size_t i = 0; i < backends.size(); ++i) {
      if (endpoint == backends[i]->address()) return static_cast<int>(i);
    }
    return -1;
  }

  std::string path_;
  std::unique_ptr<ControlPlane> control_plane_;
  int port_ = 0;
  std::unique_ptr<Mesh> mesh_;
};

TEST_F(XdsClientTest, ChainResolvesAndCallsSpreadOverEveryEndpoint) {
  Backends backends = testing::StartBackends(3);
  Apply(absl::StrCat(R"({"targets": {"chain.test:7001": {"endpoints": )",
                     Endpoints(backends, {0, 1, 2}), "}}}"));
  MakeMesh();
  auto channel = NewChannel("xds:///chain.test:7001");
  ASSERT_NE(channel, nullptr);
  std::vector<int> served(3, 0);
  for (int i = 0; i < 90; ++i) {
    CallResult r = channel->CallRaw("/test.Echo/Say", "hello");
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    int index = IndexOf(backends, r.endpoint);
    ASSERT_GE(index, 0) << r.endpoint;
    ++served[index];
  }
  // Every endpoint served, and the servers agree.
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(served[i], 0) << "backend " << i;
    EXPECT_EQ(backends[i]->calls_received(), served[i]) << "backend " << i;
  }
  EXPECT_EQ(control_plane_->ads().nacks(), 0)
      << control_plane_->ads().last_nack();
}

// Describe() shows what the client believes, per resource, as CSDS does:
// the target's Listener and RouteConfiguration, its cluster's Cluster and
// ClusterLoadAssignment, each ACKED with a version.
TEST_F(XdsClientTest, DescribeShowsEachResourceOfTheChainAcked) {
  Backends backends = testing::StartBackends(1);
  Apply(absl::StrCat(R"({"targets": {"csds.test:7001": {"endpoints": )",
                     Endpoints(backends, {0}), "}}}"));
  MakeMesh();
  auto channel = NewChannel("xds:///csds.test:7001");
  ASSERT_NE(channel, nullptr);
  ASSERT_TRUE(channel->CallRaw("/test.Echo/Say", "hello").status.ok());
  std::string described = mesh_->Describe();
  EXPECT_THAT(described, HasSubstr(R"("source":"xds")"));
  for (
      const char* resource :
      {R"("type":"Listener","name":"csds.test:7001","state":"ACKED")",
       R"("type":"RouteConfiguration","name":"outbound|7001||csds.test","state":"ACKED")",
       R"("type":"Cluster","name":"outbound|7001||csds.test","state":"ACKED")",
       R"("type":"ClusterLoadAssignment","name":"outbound|7001||csds.test","state":"ACKED")"}) {
    EXPECT_THAT(described, HasSubstr(resource)) << described;
  }
  // The cluster is a destination of its own, holding the endpoint.
  EXPECT_THAT(described,
              HasSubstr(R"("target":"xds cluster outbound|7001||csds.test")"));
  EXPECT_THAT(described, HasSubstr(backends[0]->address()));
}

TEST_F(XdsClientTest, BareTargetGoesToTheDefaultXdsSourceToo) {
  Backends backends = testing::StartBackends(1);
  Apply(absl::StrCat(R"({"targets": {"bare.test:7001": {"endpoints": )",
                     Endpoints(backends, {0}), "}}}"));
  MakeMesh();
  auto channel = NewChannel("bare.test:7001");
  ASSERT_NE(channel, nullptr);
  CallResult r = channel->CallRaw("/test.Echo/Say", "hello");
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.endpoint, backends[0]->address());
}

TEST_F(XdsClientTest, EndpointEditsAreFollowedWhileCallsFlow) {
  Backends backends = testing::StartBackends(3);
  auto config = [&](std::vector<int> which) {
    return absl::StrCat(R"({"targets": {"edit.test:7001": {"endpoints": )",
                        Endpoints(backends, std::move(which)), "}}}");
  };
  Apply(config({0, 1}));
  MakeMesh();
  // Round robin: the subject is discovery. Under P2C a newcomer seeded at
  // its peers' mean estimate may stay costlier than the one endpoint that
  // stays for as long as calls come one at a time (as under TSan's timing).
  ChannelOptions options;
  options.balancer.kind = BalancerKind::kRoundRobin;
  auto made = mesh_->NewChannel("xds:///edit.test:7001", options);
  ASSERT_TRUE(made.ok()) << made.status();
  std::unique_ptr<Channel> channel = *std::move(made);
  auto call = [&] { return channel->CallRaw("/test.Echo/Say", "hello"); };
  ASSERT_TRUE(call().status.ok());
  Apply(config({1, 2}));
  // Followed within a bounded number of calls; every call succeeds.
  int failures = 0;
  bool reached_new = testing::WaitFor([&] {
    CallResult r = call();
    if (!r.status.ok()) ++failures;
    return r.endpoint == backends[2]->address();
  });
  ASSERT_TRUE(reached_new);
  // Once the new set is in, endpoint 0 gets nothing.
  int64_t before = backends[0]->calls_received();
  for (int i = 0; i < 30; ++i) {
    CallResult r = call();
    EXPECT_TRUE(r.status.ok()) << r.status;
    EXPECT_NE(r.endpoint, backends[0]->address());
  }
  EXPECT_EQ(backends[0]->calls_received(), before);
  EXPECT_EQ(failures, 0);
}

TEST_F(XdsClientTest, HeaderRoutesAndWeightedClustersRouteAsTheFileSays) {
  Backends backends = testing::StartBackends(3);
  // main.test is served by 0; canary.test by 1; other.test by 2. Calls
  // with x-canary: 1 go to canary; the rest are split 1:1 main/other.
  Apply(absl::StrCat(
      R"({"targets": {)", R"("canary.test:7001": {"endpoints": )",
      Endpoints(backends, {1}), "}, ", R"("other.test:7001": {"endpoints": )",
      Endpoints(backends, {2}), "}, ", R"("main.test:7001": {"endpoints": )",
      Endpoints(backends, {0}), R"(, "profile": {"routes": [)",
      R"({"name": "canary", "path_regex": "/test.Echo/.*",)",
      R"( "headers": [{"name": "x-canary", "exact": "1"}],)",
      R"( "dst_overrides": [{"authority": "canary.test:7001", "weight": 1}]}],)",
      R"( "dst_overrides": [{"authority": "main.test:7001", "weight": 1},)",
      R"( {"authority": "other.test:7001", "weight": 1}]}}}})"));
  MakeMesh();
  auto channel = NewChannel("xds:///main.test:7001");
  ASSERT_NE(channel, nullptr);
  CallOptions canary;
  canary.metadata = {{"x-canary", "1"}};
  for (int i = 0; i < 20; ++i) {
    CallResult r = channel->CallRaw("/test.Echo/Say", "hello", canary);
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.endpoint, backends[1]->address());
  }
  std::vector<int> served(3, 0);
  constexpr int kCalls = 400;
  for (int i = 0; i < kCalls; ++i) {
    CallResult r = channel->CallRaw("/test.Echo/Say", "hello");
    ASSERT_TRUE(r.status.ok()) << r.status;
    int index = IndexOf(backends, r.endpoint);
    ASSERT_GE(index, 0);
    ++served[index];
  }
  EXPECT_EQ(served[1], 0);
  // 1:1 over 400 calls: 200 ± 6σ (σ = 10).
  EXPECT_NEAR(served[0], kCalls / 2, 60);
  EXPECT_NEAR(served[2], kCalls / 2, 60);
  EXPECT_EQ(control_plane_->ads().nacks(), 0)
      << control_plane_->ads().last_nack();
}

// The control plane never sends it: it does not exist once the resource
// timeout has passed (a full Listener set that lacks a name never had does
// not decide it: that response may predate the request). Calls made before
// wait within the fail-fast timeout; here the resource timeout (300 ms)
// decides first.
TEST_F(XdsClientTest, AListenerTheServerLacksFailsItsCallsNamingIt) {
  MakeMesh(/*resource_timeout=*/absl::Milliseconds(300));
  // The clock starts when the channel asks for the Listener, which may be
  // while NewChannel runs: measure from before it.
  absl::Time start = absl::Now();
  auto channel = NewChannel("xds:///missing.test:7001");
  ASSERT_NE(channel, nullptr);
  CallResult r = channel->CallRaw("/test.Echo/Say", "hello");
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr("missing.test:7001"));
  EXPECT_THAT(r.status.message(), HasSubstr("does not exist"));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  // Later calls fail at once the same way.
  r = channel->CallRaw("/test.Echo/Say", "hello");
  EXPECT_THAT(r.status.message(), HasSubstr("does not exist"));
}

TEST_F(XdsClientTest, LostControlPlaneLeavesTheCacheServingThenReconnects) {
  Backends backends = testing::StartBackends(2);
  auto config = [&](std::vector<int> which) {
    return absl::StrCat(R"({"targets": {"cache.test:7001": {"endpoints": )",
                        Endpoints(backends, std::move(which)), "}}}");
  };
  Apply(config({0}));
  MakeMesh();
  auto channel = NewChannel("xds:///cache.test:7001");
  ASSERT_NE(channel, nullptr);
  ASSERT_TRUE(channel->CallRaw("/test.Echo/Say", "hello").status.ok());
  const int port = port_;
  control_plane_.reset();
  for (int i = 0; i < 20; ++i) {
    CallResult r = channel->CallRaw("/test.Echo/Say", "hello");
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, backends[0]->address());
  }
  // Back on the same port with a new file: the client reconnects and
  // follows it.
  WriteFile(config({1}));
  StartControlPlane(port);
  ASSERT_TRUE(testing::WaitFor([&] {
    return channel->CallRaw("/test.Echo/Say", "hello").endpoint ==
           backends[1]->address();
  }));
}

}  // namespace
}  // namespace mesh

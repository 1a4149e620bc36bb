// mesh-control-plane's ADS server proven by a client no one here wrote:
// gRPC's own xDS client (Debian's libgrpc++), through "xds:///name:port"
// channels and a bootstrap naming the control plane on 127.0.0.1. The whole
// chain — Listener, RouteConfiguration, Cluster, ClusterLoadAssignment —
// must resolve into real calls on real backends; edits of the file must be
// followed while calls flow; splits, header routes, bad files and a restart
// of the control plane must behave as the file says. Any NACK from gRPC's
// client fails the test (TearDown): gRPC 1.51 is strict, and each NACK is a
// wire defect of ours.
//
// One control plane serves the whole suite: gRPC's xDS client reads its
// bootstrap once per process. Each test uses its own target names.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/control_plane_file.h"
#include "tests/support/test_support.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace mesh {
namespace {

using controlplane::ControlPlane;
using controlplane::XdsType;
using ::testing::HasSubstr;
using tools::EchoBackend;

using Backends = std::vector<std::unique_ptr<EchoBackend>>;

struct CallResult {
  grpc::Status status;
  std::string peer;  // "ipv4:127.0.0.1:PORT"
};

// One unary call through `channel`, bounded by `timeout`.
CallResult CallOnce(const std::shared_ptr<grpc::Channel>& channel,
                    const std::map<std::string, std::string>& metadata = {},
                    absl::Duration timeout = absl::Seconds(10)) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
  grpc::Slice slice(std::string("hello"));
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  absl::Notification done;
  grpc::Status status;
  stub.UnaryCall(&context, "/test.Echo/Say", grpc::StubOptions(), &request,
                 &response, [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  // gRPC ends the call by its deadline; the extra bound only keeps a broken
  // client from hanging the test.
  if (!done.WaitForNotificationWithTimeout(timeout + absl::Seconds(5))) {
    context.TryCancel();
    done.WaitForNotification();
  }
  return {status, context.peer()};
}

std::string Endpoints(const Backends& backends, std::vector<int> which) {
  std::vector<std::string> parts;
  for (int i : which) {
    parts.push_back(
        absl::StrCat(R"({"address": ")", backends[i]->address(), R"("})"));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

// A file with one target and the given backends as its endpoints.
std::string OneTarget(const std::string& target, const Backends& backends,
                      std::vector<int> which) {
  return absl::StrCat(R"({"targets": {")", target, R"(": {"endpoints": )",
                      Endpoints(backends, std::move(which)), "}}}");
}

class XdsInteropTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(
        absl::StrCat(::testing::TempDir(), "xds_interop_", getpid(), ".json"));
    WriteFile(R"({"targets": {}})");
    StartControlPlane(0);
    // gRPC's xDS client reads this once per process, at its first xds:///
    // channel.
    std::string bootstrap = absl::StrCat(
        R"({"xds_servers": [{"server_uri": "127.0.0.1:)", port_,
        R"(", "channel_creds": [{"type": "insecure"}],)",
        R"( "server_features": ["xds_v3"]}],)",
        R"( "node": {"id": "sidecar~127.0.0.1~interop-0.test~test.svc.cluster.local",)",
        R"( "cluster": "interop", "metadata": {"GENERATOR": "grpc"}}})");
    setenv("GRPC_XDS_BOOTSTRAP_CONFIG", bootstrap.c_str(), 1);
  }
  static void TearDownTestSuite() {
    delete control_plane_;
    control_plane_ = nullptr;
    std::remove(path_->c_str());
    delete path_;
  }

  void SetUp() override {
    // A test that failed to restart the control plane leaves none.
    ASSERT_NE(control_plane_, nullptr);
    nacks_before_ = control_plane_->ads().nacks();
  }

  void TearDown() override {
    if (control_plane_ != nullptr) {
      // A restarted control plane counts from zero.
      const int64_t before = restarted_ ? 0 : nacks_before_;
      EXPECT_EQ(control_plane_->ads().nacks() - before, expected_nacks_)
          << "gRPC's xDS client rejected what we sent: "
          << control_plane_->ads().last_nack();
    }
  }

  static void StartControlPlane(int port) {
    auto cp = ControlPlane::Start(absl::StrCat("127.0.0.1:", port), {},
                                  /*verbose_xds=*/true);
    ASSERT_TRUE(cp.ok()) << cp.status();
    control_plane_ = cp->release();
    port_ = control_plane_->port();
    ASSERT_TRUE(control_plane_->WatchFile(*path_, absl::Milliseconds(20)).ok());
  }

  // Replaces the file at once (written aside, renamed), as editors do.
  static void WriteFile(const std::string& text) {
    testing::ReplaceTextFile(*path_, text);
  }

  // Writes `text` and waits (bounded) until the control plane applied it.
  static void Apply(const std::string& text) {
    testing::ApplyConfigFile(*control_plane_, *path_, text);
  }

  static std::shared_ptr<grpc::Channel> XdsChannel(const std::string& target) {
    return grpc::CreateChannel(absl::StrCat("xds:///", target),
                               grpc::InsecureChannelCredentials());
  }

  static int IndexOf(const Backends& backends, const std::string& peer) {
    for (size_t i = 0; i < backends.size(); ++i) {
      if (peer == absl::StrCat("ipv4:", backends[i]->address())) return i;
    }
    return -1;
  }

  // Calls `channel` one after another on a thread of its own until
  // stopped, counting failures and the calls each backend served.
  class CallLoop {
   public:
    CallLoop(std::shared_ptr<grpc::Channel> channel, const Backends& backends)
        : served_(backends.size()), thread_([this, channel, &backends] {
            while (!stop_.load()) {
              CallResult r = CallOnce(channel);
              if (!r.status.ok()) {
                ++failures_;
                last_error_ = r.status.error_message();
                continue;
              }
              int i = IndexOf(backends, r.peer);
              if (i >= 0) ++served_[i];
              ++calls_;
            }
          }) {}
    ~CallLoop() { Stop(); }
    void Stop() {
      stop_ = true;
      if (thread_.joinable()) thread_.join();
    }
    int served(int i) const { return served_[i].load(); }
    int calls() const { return calls_.load(); }
    int failures() const { return failures_.load(); }
    // Read after Stop().
    const std::string& last_error() const { return last_error_; }

   private:
    std::atomic<bool> stop_{false};
    std::vector<std::atomic<int>> served_;
    std::atomic<int> calls_{0};
    std::atomic<int> failures_{0};
    std::string last_error_;
    std::thread thread_;
  };

  static ControlPlane* control_plane_;
  static int port_;
  static std::string* path_;
  int64_t expected_nacks_ = 0;
  int64_t nacks_before_ = 0;
  bool restarted_ = false;
};

ControlPlane* XdsInteropTest::control_plane_ = nullptr;
int XdsInteropTest::port_ = 0;
std::string* XdsInteropTest::path_ = nullptr;

TEST_F(XdsInteropTest, ChainResolvesAndEveryEndpointServes) {
  Backends backends = testing::StartBackends(3);
  Apply(OneTarget("chain.test:7001", backends, {0, 1, 2}));
  auto channel = XdsChannel("chain.test:7001");
  // round_robin rotates over the subchannels that are READY: until all
  // three have connected, the first ones take every call. Wait (bounded)
  // until each has served once, then count.
  std::vector<bool> seen(3, false);
  ASSERT_TRUE(testing::WaitFor([&] {
    CallResult r = CallOnce(channel);
    int index = r.status.ok() ? IndexOf(backends, r.peer) : -1;
    if (index >= 0) seen[index] = true;
    return seen[0] && seen[1] && seen[2];
  })) << "not every endpoint served";
  std::vector<int> served(3, 0);
  for (int i = 0; i < 60; ++i) {
    CallResult r = CallOnce(channel);
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status.error_message();
    int index = IndexOf(backends, r.peer);
    ASSERT_GE(index, 0) << r.peer;
    ++served[index];
  }
  // gRPC's round_robin, as the Cluster says: every endpoint in turn.
  for (int i = 0; i < 3; ++i) EXPECT_GE(served[i], 15) << "backend " << i;
  // The whole chain went over one stream, each type answered.
  for (XdsType type : controlplane::kAllXdsTypes) {
    EXPECT_GE(control_plane_->ads().responses_sent(type), 1)
        << controlplane::ShortName(type);
  }
}

TEST_F(XdsInteropTest, FileEditIsFollowedWhileCallsFlow) {
  Backends backends = testing::StartBackends(3);
  auto config = [&](std::vector<int> which) {
    return OneTarget("edit.test:7001", backends, std::move(which));
  };
  Apply(config({0, 1}));
  CallLoop calls(XdsChannel("edit.test:7001"), backends);
  ASSERT_TRUE(testing::WaitFor(
      [&] { return calls.served(0) > 0 && calls.served(1) > 0; }));

  // Endpoint 0 removed, 2 added.
  Apply(config({1, 2}));
  ASSERT_TRUE(testing::WaitFor([&] { return calls.served(2) > 0; }));
  // One call at a time: once one reached endpoint 2, gRPC had the new set,
  // and endpoint 0 gets no more.
  const int on_0 = calls.served(0);
  const int on_2 = calls.served(2);
  ASSERT_TRUE(testing::WaitFor(
      [&] { return calls.served(2) >= on_2 + 20 && calls.served(1) > 0; }));
  calls.Stop();
  EXPECT_EQ(calls.served(0), on_0);
  EXPECT_EQ(calls.failures(), 0) << calls.last_error();
}

TEST_F(XdsInteropTest, DstOverridesSplitTrafficEightyTwenty) {
  Backends backends = testing::StartBackends(3);
  Apply(absl::StrCat(
      R"({"targets": {)", R"("split.test:7001": {"endpoints": )",
      Endpoints(backends, {0}), R"(, "profile": {"dst_overrides": [)",
      R"({"authority": "split-a.test:7001", "weight": 80},)",
      R"({"authority": "split-b.test:7001", "weight": 20}]}},)",
      R"("split-a.test:7001": {"endpoints": )", Endpoints(backends, {1}), "},",
      R"("split-b.test:7001": {"endpoints": )", Endpoints(backends, {2}),
      "}}}"));
  auto channel = XdsChannel("split.test:7001");
  constexpr int kCalls = 1000;
  std::vector<int> served(3, 0);
  for (int i = 0; i < kCalls; ++i) {
    CallResult r = CallOnce(channel);
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status.error_message();
    ++served[IndexOf(backends, r.peer)];
  }
  EXPECT_EQ(served[0], 0) << "the split replaces the target's own endpoints";
  // 800 expected; ±60 is more than 4.7 standard deviations (12.6).
  EXPECT_NEAR(served[1], 800, 60);
  EXPECT_EQ(served[1] + served[2], kCalls);
}

TEST_F(XdsInteropTest, HeaderRoutesSendMatchingCallsToAnotherTarget) {
  Backends backends = testing::StartBackends(2);
  Apply(absl::StrCat(
      R"({"targets": {"hdr.test:7001": {"endpoints": )",
      Endpoints(backends, {0}), R"(, "profile": {"routes": [)",
      R"({"name": "canary", "path_regex": "/test\\.Echo/.*",)",
      R"( "headers": [{"name": "x-canary", "exact": "1"}],)",
      R"( "dst_overrides": [{"authority": "canary.test:7001", "weight": 1}]},)",
      R"({"name": "admins", "headers": [{"name": "x-user", "regex": "admin-[0-9]+"},)",
      R"( {"name": "x-trace", "present": true, "invert": true}],)",
      R"( "dst_overrides": [{"authority": "canary.test:7001", "weight": 1}]}]}},)",
      R"("canary.test:7001": {"endpoints": )", Endpoints(backends, {1}),
      "}}}"));
  auto channel = XdsChannel("hdr.test:7001");
  struct Case {
    std::map<std::string, std::string> metadata;
    int backend;
  };
  const std::vector<Case> cases = {
      {{}, 0},
      {{{"x-canary", "1"}}, 1},
      {{{"x-canary", "2"}}, 0},
      {{{"x-user", "admin-42"}}, 1},
      {{{"x-user", "admin-x"}}, 0},
      {{{"x-user", "admin-42"}, {"x-trace", "on"}}, 0},  // inverted: absent
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    for (int i = 0; i < 10; ++i) {
      CallResult r = CallOnce(channel, cases[c].metadata);
      ASSERT_TRUE(r.status.ok())
          << "case " << c << ": " << r.status.error_message();
      EXPECT_EQ(IndexOf(backends, r.peer), cases[c].backend) << "case " << c;
    }
  }
}

TEST_F(XdsInteropTest, BadFileKeepsTheLastGoodConfigServing) {
  Backends backends = testing::StartBackends(2);
  auto config = [&](int which) {
    return OneTarget("bad.test:7001", backends, {which});
  };
  Apply(config(0));
  auto channel = XdsChannel("bad.test:7001");
  ASSERT_TRUE(CallOnce(channel).status.ok());

  const int64_t rejected = control_plane_->rejected_files();
  // Not JSON, then a field the file does not have.
  WriteFile(R"({"targets": )");
  ASSERT_TRUE(testing::WaitFor(
      [&] { return control_plane_->rejected_files() > rejected; }));
  WriteFile(
      R"({"targets": {"bad.test:7001": {"endpoints": [], "weight": 1}}})");
  ASSERT_TRUE(testing::WaitFor(
      [&] { return control_plane_->rejected_files() > rejected + 1; }));
  EXPECT_THAT(control_plane_->last_file_error(), HasSubstr("unknown field"));
  for (int i = 0; i < 20; ++i) {
    CallResult r = CallOnce(channel);
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    EXPECT_EQ(IndexOf(backends, r.peer), 0);
  }
  // The next good file is followed.
  Apply(config(1));
  EXPECT_TRUE(testing::WaitFor(
      [&] { return IndexOf(backends, CallOnce(channel).peer) == 1; }));
}

TEST_F(XdsInteropTest, NackedRoutesAreLoggedAndTheLastGoodOnesServe) {
  Backends backends = testing::StartBackends(2);
  auto config = [&](const std::string& regex) {
    return absl::StrCat(
        R"({"targets": {"nack.test:7001": {"endpoints": )",
        Endpoints(backends, {0}), R"(, "profile": {"routes": [)",
        R"({"name": "r", "path_regex": ")", regex, R"(",)",
        R"( "dst_overrides": [{"authority": "nack-b.test:7001", "weight": 1}]}]}},)",
        R"("nack-b.test:7001": {"endpoints": )", Endpoints(backends, {1}),
        "}}}");
  };
  // A route to nack-b for no method at first.
  Apply(config("/none/.*"));
  auto channel = XdsChannel("nack.test:7001");
  ASSERT_EQ(IndexOf(backends, CallOnce(channel).peer), 0);

  // The control plane passes a path regex on unchecked, and gRPC's client
  // refuses one that RE2 cannot compile: a NACK, logged with the node.
  Apply(config("/test\\\\.Echo/(unclosed"));
  ASSERT_TRUE(testing::WaitFor(
      [&] { return control_plane_->ads().nacks() == nacks_before_ + 1; }));
  std::string nack = control_plane_->ads().last_nack();
  EXPECT_THAT(nack, HasSubstr("sidecar~127.0.0.1~interop-0.test"));
  EXPECT_THAT(nack, HasSubstr("RDS"));
  EXPECT_THAT(nack, HasSubstr("outbound|7001||nack.test"));
  // The client keeps the last routes it accepted.
  for (int i = 0; i < 10; ++i) {
    CallResult r = CallOnce(channel);
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    EXPECT_EQ(IndexOf(backends, r.peer), 0);
  }
  // A fixed file is accepted: calls of the route go to nack-b.
  Apply(config("/test\\\\.Echo/.*"));
  EXPECT_TRUE(testing::WaitFor(
      [&] { return IndexOf(backends, CallOnce(channel).peer) == 1; }));
  expected_nacks_ = 1;  // that one, never the same version again
}

TEST_F(XdsInteropTest, ControlPlaneRestartLosesNoCallAndLaterEditsAreFollowed) {
  Backends backends = testing::StartBackends(3);
  auto config = [&](std::vector<int> which) {
    return OneTarget("restart.test:7001", backends, std::move(which));
  };
  Apply(config({0, 1}));
  CallLoop calls(XdsChannel("restart.test:7001"), backends);
  ASSERT_TRUE(testing::WaitFor(
      [&] { return calls.served(0) > 0 && calls.served(1) > 0; }));

  const int port = port_;
  delete control_plane_;
  control_plane_ = nullptr;
  // Calls go on from what the client has.
  const int before = calls.calls();
  ASSERT_TRUE(testing::WaitFor([&] { return calls.calls() >= before + 50; }));

  restarted_ = true;
  StartControlPlane(port);
  ASSERT_NE(control_plane_, nullptr);
  // gRPC's client reconnects after its backoff (about 1 s).
  ASSERT_TRUE(testing::WaitFor(
      [&] { return control_plane_->ads().open_streams() == 1; },
      absl::Seconds(20)));
  Apply(config({1, 2}));
  ASSERT_TRUE(testing::WaitFor([&] { return calls.served(2) > 0; }));
  calls.Stop();
  EXPECT_EQ(calls.failures(), 0) << calls.last_error();
}

TEST_F(XdsInteropTest, RouteRetriesAndTimeoutsReachTheClient) {
  Backends backends = testing::StartBackends(2);
  backends[0]->set_status(grpc::StatusCode::UNAVAILABLE);
  backends[1]->set_delay(absl::Milliseconds(20));
  // /test.Echo/Say is retried on UNAVAILABLE; /test.Echo/Slow has a 3 s
  // timeout (gRPC 1.51 applies max_stream_duration 1-2 s short, so no
  // shorter one is tested) and no retries.
  Apply(absl::StrCat(
      R"({"targets": {"retry.test:7001": {"endpoints": )",
      Endpoints(backends, {0, 1}), R"(, "profile": {"routes": [)",
      R"({"name": "say", "path_regex": "/test\\.Echo/Say", "retryable": true,)",
      R"( "retry_on": ["UNAVAILABLE"], "max_retries": 2},)",
      R"({"name": "slow", "path_regex": "/test\\.Echo/Slow", "timeout_ms": 3000}]}}}})"));
  auto channel = XdsChannel("retry.test:7001");
  // Round robin over a failing and a working endpoint: every call that
  // meets the failing one is retried on the other.
  for (int i = 0; i < 20; ++i) {
    CallResult r = CallOnce(channel);
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status.error_message();
    EXPECT_EQ(IndexOf(backends, r.peer), 1);
  }
  EXPECT_GE(backends[0]->calls_received(), 5);

  // The route's timeout bounds a call that would take 30 s.
  backends[0]->set_status(grpc::StatusCode::OK);
  backends[0]->set_delay(absl::Seconds(30));
  backends[1]->set_delay(absl::Seconds(30));
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  grpc::Slice slice(std::string("slow"));
  grpc::ByteBuffer request(&slice, 1), response;
  absl::Notification done;
  grpc::Status status;
  const absl::Time start = absl::Now();
  stub.UnaryCall(&context, "/test.Echo/Slow", grpc::StubOptions(), &request,
                 &response, [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(25)));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // Without the route's 3 s the call would end at its own 20 s deadline.
  // (gRPC 1.51 ends it 1-2 s early; any bound below 3 s is gRPC's.)
  EXPECT_LT(took, absl::Seconds(10)) << "the route's timeout did not apply";
}

}  // namespace
}  // namespace mesh

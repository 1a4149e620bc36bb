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
#include <fstream>
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

  void TearDown() override {
    if (control_plane_ != nullptr) {
      EXPECT_EQ(control_plane_->ads().nacks(), expected_nacks_)
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
    std::string aside = *path_ + ".tmp";
    {
      std::ofstream out(aside, std::ios::trunc | std::ios::binary);
      out << text;
    }
    ASSERT_EQ(std::rename(aside.c_str(), path_->c_str()), 0);
  }

  // Writes `text` and waits (bounded) until the control plane applied it.
  static void Apply(const std::string& text) {
    std::shared_ptr<const controlplane::XdsCatalog> before =
        control_plane_->ads().catalog();
    WriteFile(text);
    ASSERT_TRUE(testing::WaitFor([&] {
      return control_plane_->ads().catalog() != before;
    })) << "the control plane did not apply "
        << text;
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

  static ControlPlane* control_plane_;
  static int port_;
  static std::string* path_;
  int64_t expected_nacks_ = 0;
};

ControlPlane* XdsInteropTest::control_plane_ = nullptr;
int XdsInteropTest::port_ = 0;
std::string* XdsInteropTest::path_ = nullptr;

TEST_F(XdsInteropTest, ChainResolvesAndEveryEndpointServes) {
  Backends backends = testing::StartBackends(3);
  Apply(absl::StrCat(R"({"targets": {"chain.test:7001": {"endpoints": )",
                     Endpoints(backends, {0, 1, 2}), "}}}"));
  auto channel = XdsChannel("chain.test:7001");
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

}  // namespace
}  // namespace mesh

// The local control plane following its config file on disk: an unchanged
// file is not read again (a 200 MB file once cost 56-88 % CPU, re-read every
// 200 ms), a file over the size limit is refused with a line naming the
// limit, and in every case the last good config keeps serving a real mesh
// client on 127.0.0.1.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "tests/support/test_support.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace mesh {
namespace {

using controlplane::ControlPlane;
using ::testing::HasSubstr;

constexpr char kTarget[] = "echo.test:7000";

class ControlPlaneFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    backends_ = testing::StartBackends(2);
    path_ = absl::StrCat(
        ::testing::TempDir(), "cp_file_", getpid(), "_",
        ::testing::UnitTest::GetInstance()->current_test_info()->name(),
        ".json");
    auto cp = ControlPlane::Start("127.0.0.1:0", {});
    ASSERT_TRUE(cp.ok()) << cp.status();
    control_plane_ = *std::move(cp);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  // Replaces the file at once (written aside, renamed), as editors do.
  void Write(const std::string& text) {
    {
      std::ofstream out(path_ + ".tmp", std::ios::trunc | std::ios::binary);
      out << text;
    }
    ASSERT_EQ(std::rename((path_ + ".tmp").c_str(), path_.c_str()), 0);
  }

  std::string ConfigFor(const std::vector<int>& which,
                        const std::string& padding = "") {
    std::string eps;
    for (int i : which) {
      absl::StrAppend(&eps, eps.empty() ? "" : ", ", "{\"address\": \"",
                      backends_[i]->address(), "\"}");
    }
    return absl::StrCat("{\"targets\": {\"", kTarget, "\": {\"endpoints\": [",
                        eps, "]}}}", padding, "\n");
  }

  std::unique_ptr<Channel> Client() {
    LinkerdDiscoveryOptions o;
    o.address = absl::StrCat("127.0.0.1:", control_plane_->port());
    MeshOptions options;
    options.discovery = *NewLinkerdDiscovery(o);
    mesh_ = *Mesh::Create(options);
    return *mesh_->NewChannel(kTarget);
  }

  // Waits until the watcher has looked at the file `n` more times.
  void WaitForPolls(int n) {
    int64_t until = control_plane_->file_polls() + n;
    ASSERT_TRUE(testing::WaitFor(
        [&] { return control_plane_->file_polls() >= until; }));
  }

  std::vector<std::unique_ptr<tools::EchoBackend>> backends_;
  std::string path_;
  std::unique_ptr<ControlPlane> control_plane_;
  std::unique_ptr<Mesh> mesh_;
};

TEST_F(ControlPlaneFileTest, AnUnchangedFileIsReadOnceAndAChangedOneAgain) {
  Write(ConfigFor({0}));
  ASSERT_TRUE(control_plane_->WatchFile(path_, absl::Milliseconds(2)).ok());
  auto channel = Client();
  ASSERT_TRUE(channel->WaitForEndpoints(absl::Seconds(10)).ok());
  WaitForPolls(50);
  EXPECT_EQ(control_plane_->file_reads(), 1);

  Write(ConfigFor({0, 1}));
  EXPECT_TRUE(testing::WaitFor(
      [&] { return channel->EndpointStatsSnapshot().size() == 2; }));
  WaitForPolls(50);
  EXPECT_EQ(control_plane_->file_reads(), 2);
}

TEST_F(ControlPlaneFileTest, AnInvalidFileIsReportedOnceNotReparsedEachLook) {
  Write(ConfigFor({0}));
  ASSERT_TRUE(control_plane_->WatchFile(path_, absl::Milliseconds(2)).ok());
  auto channel = Client();
  ASSERT_TRUE(channel->WaitForEndpoints(absl::Seconds(10)).ok());
  Write("{\"targets\": {\"oops\n");
  ASSERT_TRUE(
      testing::WaitFor([&] { return control_plane_->rejected_files() == 1; }));
  WaitForPolls(50);
  EXPECT_EQ(control_plane_->rejected_files(), 1);
  EXPECT_EQ(control_plane_->file_reads(), 2);
  EXPECT_TRUE(channel->CallRaw("/test.Echo/Say", "x").status.ok());
}

TEST_F(ControlPlaneFileTest, AFileOverTheLimitIsRefusedAndTheLastGoodServes) {
  const int64_t kLimit = 4096;
  // At start: refused with the size and the limit.
  Write(ConfigFor({0}, std::string(5000, ' ')));
  absl::Status start =
      control_plane_->WatchFile(path_, absl::Milliseconds(2), kLimit);
  EXPECT_EQ(start.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(start.message()),
              HasSubstr("over the limit of 4096 (--max-config-bytes)"));

  auto cp = ControlPlane::Start("127.0.0.1:0", {});
  ASSERT_TRUE(cp.ok());
  control_plane_ = *std::move(cp);
  Write(ConfigFor({0}));
  ASSERT_TRUE(
      control_plane_->WatchFile(path_, absl::Milliseconds(2), kLimit).ok());
  auto channel = Client();
  ASSERT_TRUE(channel->WaitForEndpoints(absl::Seconds(10)).ok());
  // Later: a valid but oversized version is refused, once.
  Write(ConfigFor({0, 1}, std::string(5000, ' ')));
  ASSERT_TRUE(
      testing::WaitFor([&] { return control_plane_->rejected_files() == 1; }));
  EXPECT_THAT(control_plane_->last_file_error(),
              HasSubstr("bytes, over the limit of 4096"));
  WaitForPolls(50);
  EXPECT_EQ(control_plane_->rejected_files(), 1);
  EXPECT_EQ(channel->EndpointStatsSnapshot().size(), 1u);
  // Back under the limit: applied.
  Write(ConfigFor({0, 1}));
  EXPECT_TRUE(testing::WaitFor(
      [&] { return channel->EndpointStatsSnapshot().size() == 2; }));
}

// The rejection's text is whole and printable whatever the file holds.
TEST_F(ControlPlaneFileTest, ARejectionNamesLineAndFieldOfABadByte) {
  Write(ConfigFor({0}));
  ASSERT_TRUE(control_plane_->WatchFile(path_, absl::Milliseconds(2)).ok());
  Write(absl::StrCat(
      "{\"targets\": {\"", kTarget, "\": {\"endpoints\": [\n{\"address\": \"",
      backends_[0]->address(), "\", \"labels\": {\"zone\": \"a\xff\"}}]}}}\n"));
  ASSERT_TRUE(
      testing::WaitFor([&] { return control_plane_->rejected_files() == 1; }));
  EXPECT_THAT(control_plane_->last_file_error(),
              HasSubstr(":line 2: targets[\"echo.test:7000\"].endpoints[0]."
                        "labels.zone: a string is not valid UTF-8 (byte 0xff "
                        "at offset 1)"));
}

}  // namespace
}  // namespace mesh

// DirectoryEvents on real directories: a file renamed in, as certificate
// agents write, is reported for its directory only; a directory that
// cannot be watched is refused naming it (the caller then polls).
#include "src/base/directory_events.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class DirectoryEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "mesh_direv_XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    fs::create_directory(root_ / "a");
    fs::create_directory(root_ / "b");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
};

TEST_F(DirectoryEventsTest, AFileRenamedInIsReportedForItsDirectoryOnly) {
  auto events = DirectoryEvents::Create();
  ASSERT_TRUE(events.ok()) << events.status();
  auto a = (*events)->Watch((root_ / "a").string());
  auto b = (*events)->Watch((root_ / "b").string());
  ASSERT_TRUE(a.ok() && b.ok());
  bool overflowed = false;
  EXPECT_THAT((*events)->Drain(&overflowed), IsEmpty());
  std::ofstream(root_ / "a" / "cert.pem.next") << "new";
  fs::rename(root_ / "a" / "cert.pem.next", root_ / "a" / "cert.pem");
  // Written, closed and renamed: one id, however many events.
  EXPECT_THAT((*events)->Drain(&overflowed), ElementsAre(*a));
  EXPECT_FALSE(overflowed);
  EXPECT_THAT((*events)->Drain(&overflowed), IsEmpty());
  // The same directory by another name is the same watch.
  auto again = (*events)->Watch((root_ / "a" / ".").string());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *a);
}

TEST_F(DirectoryEventsTest, ADirectoryThatCannotBeWatchedIsNamed) {
  auto events = DirectoryEvents::Create();
  ASSERT_TRUE(events.ok()) << events.status();
  const std::string missing = (root_ / "missing").string();
  auto id = (*events)->Watch(missing);
  ASSERT_FALSE(id.ok());
  EXPECT_THAT(id.status().message(), HasSubstr(missing));
  std::ofstream(root_ / "a" / "file") << "x";
  auto file = (*events)->Watch((root_ / "a" / "file").string());
  ASSERT_FALSE(file.ok());  // a file, not a directory
  EXPECT_THAT(file.status().message(), HasSubstr("Not a directory"));
}

}  // namespace
}  // namespace mesh::internal

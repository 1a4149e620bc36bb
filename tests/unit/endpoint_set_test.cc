#include "src/model/endpoint_set.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Endpoint Ep(const std::string& address, uint32_t weight = 1) {
  Endpoint e;
  e.address = address;
  e.weight = weight;
  return e;
}

std::vector<std::string> Addresses(const EndpointSet& set) {
  std::vector<std::string> out;
  for (const Endpoint& e : set.Endpoints()) out.push_back(e.address);
  return out;
}

TEST(EndpointSetTest, AddUpsertsRemoveEvictsResetReplaces) {
  EndpointSet set;
  EXPECT_FALSE(set.has_update());
  ASSERT_TRUE(
      set.Apply(EndpointUpdate::Add({Ep("10.0.0.2:80"), Ep("10.0.0.1:80")}))
          .ok());
  EXPECT_THAT(Addresses(set), ElementsAre("10.0.0.1:80", "10.0.0.2:80"));

  ASSERT_TRUE(set.Apply(EndpointUpdate::Add({Ep("10.0.0.1:80", 5)})).ok());
  EXPECT_EQ(set.Endpoints()[0].weight, 5u);  // upsert replaced attributes
  EXPECT_EQ(set.size(), 2u);

  ASSERT_TRUE(
      set.Apply(EndpointUpdate::Remove({"10.0.0.2:80", "10.9.9.9:1"})).ok());
  EXPECT_THAT(Addresses(set), ElementsAre("10.0.0.1:80"));

  ASSERT_TRUE(set.Apply(EndpointUpdate::Reset({Ep("10.0.0.3:80")})).ok());
  EXPECT_THAT(Addresses(set), ElementsAre("10.0.0.3:80"));
}

TEST(EndpointSetTest, ApplyingTwiceIsIdempotent) {
  EndpointSet once, twice;
  for (const EndpointUpdate& u :
       {EndpointUpdate::Add({Ep("10.0.0.1:80"), Ep("10.0.0.2:80")}),
        EndpointUpdate::Remove({"10.0.0.1:80"}),
        EndpointUpdate::Reset({Ep("10.0.0.4:80"), Ep("10.0.0.5:80")})}) {
    ASSERT_TRUE(once.Apply(u).ok());
    ASSERT_TRUE(twice.Apply(u).ok());
    ASSERT_TRUE(twice.Apply(u).ok());
    EXPECT_EQ(once.Endpoints(), twice.Endpoints());
  }
}

TEST(EndpointSetTest, NoEndpointsEmptiesAndRecordsExistence) {
  EndpointSet set;
  ASSERT_TRUE(set.Apply(EndpointUpdate::Add({Ep("10.0.0.1:80")})).ok());
  ASSERT_TRUE(set.Apply(EndpointUpdate::NoEndpoints(false)).ok());
  EXPECT_EQ(set.size(), 0u);
  EXPECT_FALSE(set.exists());
  ASSERT_TRUE(set.Apply(EndpointUpdate::Add({Ep("10.0.0.1:80")})).ok());
  EXPECT_TRUE(set.exists());
  ASSERT_TRUE(set.Apply(EndpointUpdate::NoEndpoints(true)).ok());
  EXPECT_TRUE(set.exists());
  EXPECT_EQ(set.size(), 0u);
}

TEST(EndpointSetTest, InvalidUpdateIsRejectedWholeAndKeepsLastGoodSet) {
  EndpointSet set;
  ASSERT_TRUE(set.Apply(EndpointUpdate::Add({Ep("10.0.0.1:80")})).ok());

  absl::Status zero = set.Apply(
      EndpointUpdate::Reset({Ep("10.0.0.2:80"), Ep("10.0.0.3:80", 0)}));
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(zero.message()), HasSubstr("weight 0"));

  absl::Status dup =
      set.Apply(EndpointUpdate::Add({Ep("10.0.0.2:80"), Ep("10.0.0.2:80")}));
  EXPECT_EQ(dup.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(dup.message()), HasSubstr("twice"));

  absl::Status port = set.Apply(EndpointUpdate::Add({Ep("10.0.0.2:70000")}));
  EXPECT_EQ(port.code(), absl::StatusCode::kInvalidArgument);

  absl::Status host = set.Apply(EndpointUpdate::Add({Ep("books:80")}));
  EXPECT_EQ(host.code(), absl::StatusCode::kInvalidArgument);

  EXPECT_THAT(Addresses(set), ElementsAre("10.0.0.1:80"));
}

}  // namespace
}  // namespace mesh::internal

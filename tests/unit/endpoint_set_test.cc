#include "src/model/endpoint_set.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/model/address_set.h"

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

TEST(EndpointSetTest, UnchangedEndpointsKeepTheirSharedEntry) {
  EndpointSet set;
  ASSERT_TRUE(set.Apply(EndpointUpdate::Reset(
                            {Ep("10.0.0.2:80"), Ep("10.0.0.1:80", 2)}))
                  .ok());
  std::shared_ptr<const EndpointSet::List> first = set.entries();
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0]->endpoint.address, "10.0.0.1:80");  // sorted
  EXPECT_EQ((*first)[0]->endpoint.weight, 2u);

  // The same set again: the same list.
  ASSERT_TRUE(set.Apply(EndpointUpdate::Reset(
                            {Ep("10.0.0.1:80", 2), Ep("10.0.0.2:80")}))
                  .ok());
  EXPECT_EQ(set.entries(), first);
  ASSERT_TRUE(set.Apply(EndpointUpdate::Remove({"10.9.9.9:1"})).ok());
  EXPECT_EQ(set.entries(), first);

  // A change makes a new list; the endpoint it left alone keeps its entry,
  // the changed one gets a new entry, and the old list is untouched.
  ASSERT_TRUE(
      set.Apply(EndpointUpdate::Add({Ep("10.0.0.1:80", 3), Ep("10.0.0.3:80")}))
          .ok());
  const EndpointSet::List& now = *set.entries();
  ASSERT_EQ(now.size(), 3u);
  EXPECT_NE(now[0], (*first)[0]);
  EXPECT_EQ(now[0]->endpoint.weight, 3u);
  EXPECT_EQ(now[1], (*first)[1]);
  EXPECT_EQ(now[2]->endpoint.address, "10.0.0.3:80");
  EXPECT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0]->endpoint.weight, 2u);

  ASSERT_TRUE(set.Apply(EndpointUpdate::Remove({"10.0.0.1:80"})).ok());
  EXPECT_THAT(Addresses(set), ElementsAre("10.0.0.2:80", "10.0.0.3:80"));
  EXPECT_EQ((*set.entries())[0], (*first)[1]);
}

TEST(SortedByAddressTest, OrdersAsTheStringsCompareWhateverTheirLength) {
  // Addresses that share their first 16 bytes or more (IPv6), that are a
  // prefix of another, and that differ only in the port; shuffled by a
  // fixed permutation so that the input is not sorted.
  const std::vector<std::string> addresses = {
      "10.0.0.1:80",
      "10.0.0.1:8080",
      "10.0.0.10:80",
      "10.0.0.2:80",
      "127.0.0.1:7001",
      "192.168.100.200:65535",
      "192.168.100.200:6553",
      "[2001:db8::1]:443",
      "[2001:db8::1]:4430",
      "[2001:db8::10]:443",
      "[2001:db8:0:0:0:0:0:2]:443",
      "[2001:db8:0:0:0:0:0:1]:443",
      "[::1]:80",
      "9.9.9.9:9",
  };
  std::vector<Endpoint> endpoints;
  for (size_t i = 0; i < addresses.size(); ++i) {
    endpoints.push_back(Ep(addresses[(i * 5 + 3) % addresses.size()]));
  }
  std::vector<std::string> expected = addresses;
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> got;
  for (const Endpoint* e : SortedByAddress(endpoints)) {
    got.push_back(e->address);
  }
  EXPECT_EQ(got, expected);
}

TEST(AddressSetTest, ContainsExactlyItsMembers) {
  AddressSet empty;
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_FALSE(empty.contains("10.0.0.1:80"));
  EXPECT_FALSE(empty.contains(""));

  AddressSet set({"10.0.0.2:80", "10.0.0.1:80", "[fd00::1]:443", "10.0.0.1:80",
                  "10.0.0.10:80"});
  EXPECT_EQ(set.size(), 4u);  // the duplicate once
  for (const char* a :
       {"10.0.0.1:80", "10.0.0.2:80", "10.0.0.10:80", "[fd00::1]:443"}) {
    EXPECT_TRUE(set.contains(a)) << a;
  }
  for (const char* a : {"", "10.0.0.1:8", "10.0.0.1:800", "10.0.0.3:80",
                        "0.0.0.0:1", "[fd00::2]:443", "~"}) {
    EXPECT_FALSE(set.contains(a)) << a;
  }
}

}  // namespace
}  // namespace mesh::internal

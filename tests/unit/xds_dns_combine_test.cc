// CombineDnsAnswers and DnsHostAnswer: what the names of an xDS DNS
// cluster make together, and how one name's answers are kept.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/discovery/xds/xds_dns_cluster.h"

namespace mesh::internal::xds {
namespace {

using ::testing::HasSubstr;

DnsHost Host(const std::string& name, uint32_t weight = 1) {
  DnsHost h;
  h.host = name;
  h.port = 80;
  h.weight = weight;
  return h;
}

DnsHostAnswer::State Answered(std::vector<std::string> addresses) {
  DnsHostAnswer::State s;
  s.answered = true;
  s.addresses = std::move(addresses);
  return s;
}

TEST(CombineDnsAnswersTest, UnionWithTheFirstHostsWeight) {
  DnsClusterUpdate u =
      CombineDnsAnswers({Host("a.test", 3), Host("b.test", 5)},
                        {Answered({"10.0.0.1:80", "10.0.0.2:80"}),
                         Answered({"10.0.0.2:80", "10.0.0.3:80"})});
  ASSERT_EQ(u.kind, DnsClusterUpdate::Kind::kEndpoints);
  ASSERT_EQ(u.endpoints.size(), 3u);
  EXPECT_EQ(u.endpoints[0].address, "10.0.0.1:80");
  EXPECT_EQ(u.endpoints[0].weight, 3u);
  EXPECT_EQ(u.endpoints[1].address, "10.0.0.2:80");
  EXPECT_EQ(u.endpoints[1].weight, 3u);  // a's, listed first
  EXPECT_EQ(u.endpoints[2].address, "10.0.0.3:80");
  EXPECT_EQ(u.endpoints[2].weight, 5u);
}

TEST(CombineDnsAnswersTest, TheClustersLookupFamilyChoosesEachNamesAddresses) {
  using Family = ClusterResource::DnsFamily;
  // a.test has both families; b.test only IPv4.
  const std::vector<DnsHost> hosts = {Host("a.test"), Host("b.test")};
  const std::vector<DnsHostAnswer::State> answers = {
      Answered({"10.0.0.1:80", "[fd00::1]:80"}), Answered({"10.0.0.2:80"})};
  auto serving = [&](Family family) {
    std::vector<std::string> out;
    for (const Endpoint& e :
         CombineDnsAnswers(hosts, answers, family).endpoints) {
      out.push_back(e.address);
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(serving(Family::kAll),
            (V{"10.0.0.1:80", "[fd00::1]:80", "10.0.0.2:80"}));
  EXPECT_EQ(serving(Family::kV4Only), (V{"10.0.0.1:80", "10.0.0.2:80"}));
  EXPECT_EQ(serving(Family::kV6Only), (V{"[fd00::1]:80"}));
  // Per name: a.test's IPv6 address; b.test, which has none, its IPv4 one.
  EXPECT_EQ(serving(Family::kAuto), (V{"[fd00::1]:80", "10.0.0.2:80"}));
  EXPECT_EQ(serving(Family::kV4Preferred), (V{"10.0.0.1:80", "10.0.0.2:80"}));

  // A name with none of the family says which records it lacks.
  DnsClusterUpdate u = CombineDnsAnswers(
      {Host("b.test")}, {Answered({"10.0.0.2:80"})}, Family::kV6Only);
  EXPECT_EQ(u.kind, DnsClusterUpdate::Kind::kNone);
  EXPECT_TRUE(u.exists);
  EXPECT_THAT(u.why, HasSubstr("DNS name 'b.test' has no AAAA records (the "
                               "cluster's dns_lookup_family is V6_ONLY)"));
}

TEST(CombineDnsAnswersTest, AHostNotAnsweredHoldsOnlyAnEmptyCluster) {
  DnsHostAnswer::State none;  // not answered
  EXPECT_EQ(CombineDnsAnswers({Host("a.test")}, {none}).kind,
            DnsClusterUpdate::Kind::kWaiting);
  // The others' addresses serve meanwhile.
  EXPECT_EQ(CombineDnsAnswers({Host("a.test"), Host("b.test")},
                              {none, Answered({"10.0.0.1:80"})})
                .kind,
            DnsClusterUpdate::Kind::kEndpoints);
}

TEST(CombineDnsAnswersTest, NoAddressAnywhereNamesEachName) {
  DnsHostAnswer::State gone = Answered({});
  gone.exists = false;
  DnsClusterUpdate u =
      CombineDnsAnswers({Host("a.test"), Host("b.test")}, {gone, Answered({})});
  ASSERT_EQ(u.kind, DnsClusterUpdate::Kind::kNone);
  EXPECT_TRUE(u.exists);  // b.test exists, without records
  EXPECT_THAT(u.why, HasSubstr("'a.test' does not exist"));
  EXPECT_THAT(u.why, HasSubstr("'b.test' has no A or AAAA records"));
  u = CombineDnsAnswers({Host("a.test")}, {gone});
  EXPECT_FALSE(u.exists);
}

// A name whose first query failed does not hold the cluster waiting for
// good: it counts as one without an address, saying why.
TEST(CombineDnsAnswersTest, AFirstQueryThatFailedEndsTheWait) {
  DnsHostAnswer::State failed;
  failed.failed_unanswered = "DNS: A query for 'a.test' failed: Timeout";
  DnsClusterUpdate u = CombineDnsAnswers({Host("a.test")}, {failed});
  ASSERT_EQ(u.kind, DnsClusterUpdate::Kind::kNone);
  EXPECT_TRUE(u.exists);
  EXPECT_THAT(u.why, HasSubstr("'a.test' could not be resolved: DNS: A query"));
}

TEST(DnsHostAnswerTest, WakesOnceUntilTakenAndAnAnswerEndsTheError) {
  int wakes = 0;
  DnsHostAnswer answer([&] { ++wakes; });
  answer.OnDiscoveryError(absl::UnavailableError("timeout"));
  answer.OnDiscoveryError(absl::UnavailableError("timeout again"));
  EXPECT_EQ(wakes, 1);
  DnsHostAnswer::State s = answer.Take();
  EXPECT_FALSE(s.answered);
  EXPECT_EQ(s.error, "timeout again");
  EXPECT_EQ(s.failed_unanswered, "timeout again");
  answer.OnDiscoveryError(absl::UnavailableError("later"));
  answer.OnEndpointUpdate(EndpointUpdate::Reset({Endpoint("10.0.0.1:80")}));
  EXPECT_EQ(wakes, 2);
  s = answer.Take();
  EXPECT_TRUE(s.answered);
  EXPECT_EQ(s.error, "");  // the answer replaced the failed query
  EXPECT_EQ(s.failed_unanswered, "");
  EXPECT_EQ(s.addresses, std::vector<std::string>{"10.0.0.1:80"});
}

}  // namespace
}  // namespace mesh::internal::xds

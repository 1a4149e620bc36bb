// AresLoop alone against a scripted DNS server on a loopback port: what
// one lookup (A and AAAA) makes of each kind of answer — addresses through
// CNAMEs in any order, a name without records, NXDOMAIN, SERVFAIL, and
// CNAMEs that cannot be followed to an address (a loop; a chain to a name
// the answers give no address for), which are failed queries.
#include "src/discovery/dns/ares_loop.h"

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/scripted_dns_server.h"

namespace mesh::internal {
namespace {

using testing::AaaaRecord;
using testing::ARecord;
using testing::CnameRecord;
using testing::DnsReply;
using testing::DnsType;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ScriptedDnsServer;

class AresLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dns = ScriptedDnsServer::Start();
    ASSERT_TRUE(dns.ok()) << dns.status();
    dns_ = *std::move(dns);
    DnsOptions options;
    options.servers = {dns_->address()};
    options.query_timeout = absl::Milliseconds(500);
    options.tries = 1;
    auto loop = AresLoop::Start(options);
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
  }

  void Answer(const std::string& name, DnsReply a, DnsReply aaaa) {
    ASSERT_TRUE(dns_->Set(name, DnsType::kA, std::move(a)).ok());
    ASSERT_TRUE(dns_->Set(name, DnsType::kAaaa, std::move(aaaa)).ok());
  }

  // One lookup, waited for (bounded).
  absl::StatusOr<DnsAnswer> Lookup(const std::string& name) {
    auto done = std::make_shared<std::promise<absl::StatusOr<DnsAnswer>>>();
    std::future<absl::StatusOr<DnsAnswer>> answer = done->get_future();
    loop_->Lookup(name, [done](absl::StatusOr<DnsAnswer> a) {
      done->set_value(std::move(a));
    });
    if (answer.wait_for(std::chrono::seconds(10)) !=
        std::future_status::ready) {
      return absl::DeadlineExceededError("no answer within 10 s");
    }
    return answer.get();
  }

  std::unique_ptr<ScriptedDnsServer> dns_;
  std::unique_ptr<AresLoop> loop_;
};

TEST_F(AresLoopTest, AddressesThroughCnamesInAnyOrderWithTheSmallestTtl) {
  // The A record before the CNAME that leads to it (c-ares's own
  // ares_getaddrinfo reads them in order and misses it).
  Answer(
      "a.test",
      {0,
       {ARecord("c.test", "10.0.0.1", 70), CnameRecord("b.test", "c.test", 50),
        CnameRecord("a.test", "b.test", 60)}},
      {0,
       {CnameRecord("a.test", "b.test", 60),
        CnameRecord("b.test", "c.test", 50),
        AaaaRecord("c.test", "fd00::1", 80)}});
  absl::StatusOr<DnsAnswer> a = Lookup("a.test");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->addresses, ElementsAre("10.0.0.1", "fd00::1"));
  EXPECT_EQ(a->ttl, absl::Seconds(50));
}

// A CNAME to a name with an A record and no AAAA: the AAAA answer is the
// CNAME alone, and the A records answer for the name.
TEST_F(AresLoopTest, ACnameToANameWithOneFamilyGivesThatFamily) {
  Answer("a.test",
         {0,
          {CnameRecord("a.test", "v4.test", 5),
           ARecord("v4.test", "10.0.0.2", 5)}},
         {0, {CnameRecord("a.test", "v4.test", 5)}});
  absl::StatusOr<DnsAnswer> a = Lookup("a.test");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->addresses, ElementsAre("10.0.0.2"));
}

TEST_F(AresLoopTest, ACnameLoopIsAFailedQueryNamingIt) {
  const DnsReply loop{
      0,
      {CnameRecord("a.test", "b.test", 5), CnameRecord("b.test", "a.test", 5)}};
  Answer("a.test", loop, loop);
  absl::StatusOr<DnsAnswer> a = Lookup("a.test");
  EXPECT_EQ(a.status().code(), absl::StatusCode::kUnavailable) << a.status();
  EXPECT_THAT(a.status().ToString(),
              HasSubstr("A query for 'a.test' failed: the CNAME chain could "
                        "not be followed: it loops (a.test -> b.test -> "
                        "a.test)"));
}

// A loop in one family's answer fails the lookup even when the other has
// addresses: half an answer never stands for the whole.
TEST_F(AresLoopTest, ALoopInOneFamilyFailsTheLookup) {
  Answer("a.test", {0, {ARecord("a.test", "10.0.0.3", 5)}},
         {0, {CnameRecord("a.test", "a.test", 5)}});
  absl::StatusOr<DnsAnswer> a = Lookup("a.test");
  EXPECT_EQ(a.status().code(), absl::StatusCode::kUnavailable) << a.status();
  EXPECT_THAT(a.status().ToString(),
              HasSubstr("AAAA query for 'a.test' failed: the CNAME chain "
                        "could not be followed: it loops (a.test -> a.test)"));
}

TEST_F(AresLoopTest, AChainToANameWithoutAddressesIsAFailedQuery) {
  const DnsReply chain{0,
                       {CnameRecord("a.test", "b.test", 5),
                        CnameRecord("b.test", "end.test", 5)}};
  Answer("a.test", chain, chain);
  absl::StatusOr<DnsAnswer> a = Lookup("a.test");
  EXPECT_EQ(a.status().code(), absl::StatusCode::kUnavailable) << a.status();
  EXPECT_THAT(
      a.status().ToString(),
      HasSubstr("'a.test': the CNAME chain could not be followed to "
                "an address (a.test -> b.test -> end.test: no A or AAAA "
                "record for its last name in the answers)"));
}

// No answer records at all: the name exists without addresses (as before).
TEST_F(AresLoopTest, ANameWithoutRecordsIsAnEmptyAnswer) {
  Answer("a.test", {}, {});
  absl::StatusOr<DnsAnswer> a = Lookup("a.test");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->addresses.empty());
}

TEST_F(AresLoopTest, NxdomainIsNotFound) {
  absl::StatusOr<DnsAnswer> a = Lookup("missing.test");  // nothing scripted
  EXPECT_EQ(a.status().code(), absl::StatusCode::kNotFound) << a.status();
  EXPECT_THAT(a.status().ToString(), HasSubstr("'missing.test'"));
}

TEST_F(AresLoopTest, ServfailIsAFailedQuery) {
  Answer("a.test", {2, {}}, {0, {AaaaRecord("a.test", "fd00::4", 5)}});
  absl::StatusOr<DnsAnswer> a = Lookup("a.test");
  EXPECT_EQ(a.status().code(), absl::StatusCode::kUnavailable) << a.status();
  EXPECT_THAT(a.status().ToString(), HasSubstr("A query for 'a.test' failed"));
}

}  // namespace
}  // namespace mesh::internal

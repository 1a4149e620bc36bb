// DNS discovery when the answers hold CNAMEs that do not lead to an
// address (issue 29, defect 6: a CNAME loop was read as "no records" and
// dropped the last good addresses for 30 s, failing 239 of 280 calls).
// A scripted DNS server on a loopback port answers each question as the
// test says and counts the questions; echo backends on 127.0.0.1 and
// 127.0.0.2 at one port, so that the records alone name the endpoints.
//
// A loop, and a chain to a name the answer gives no address for, are
// failed queries: calls keep succeeding on the last good addresses, the
// destination says why, the name is asked again with backoff, and a good
// answer serves again. A name behind a CNAME with addresses of one family
// only is served by them.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/dns.h"
#include "mesh/mesh.h"
#include "tests/support/scripted_dns_server.h"
#include "tests/support/test_support.h"
#include "tools/common/echo_backend.h"

namespace mesh {
namespace {

using testing::AaaaRecord;
using testing::ARecord;
using testing::CnameRecord;
using testing::DnsReply;
using testing::DnsType;
using ::testing::HasSubstr;
using testing::ScriptedDnsServer;
using tools::EchoBackend;

constexpr char kName[] = "db.mesh.test";
constexpr char kOther[] = "other.mesh.test";

class DnsCnameTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dns = ScriptedDnsServer::Start();
    ASSERT_TRUE(dns.ok()) << dns.status();
    dns_ = *std::move(dns);
    backends_ = testing::StartOnOnePort({"127.0.0.1", "127.0.0.2"}, &port_);
    ASSERT_EQ(backends_.size(), 2u) << "no port free on both hosts";
  }

  // Both families of `name` answered with `a` and `aaaa`.
  void Answer(const std::string& name, DnsReply a, DnsReply aaaa) {
    ASSERT_TRUE(dns_->Set(name, DnsType::kA, std::move(a)).ok());
    ASSERT_TRUE(dns_->Set(name, DnsType::kAaaa, std::move(aaaa)).ok());
  }

  // kName -> kOther -> kName, for both families.
  void AnswerWithALoop() {
    const DnsReply loop{
        0, {CnameRecord(kName, kOther, 1), CnameRecord(kOther, kName, 1)}};
    Answer(kName, loop, loop);
  }

  // A Mesh whose only source is DNS through the scripted server, asked
  // often; a channel to dns:///kName:port_.
  void Connect() {
    DnsOptions options;
    options.servers = {dns_->address()};
    options.min_refresh = absl::Milliseconds(200);
    options.max_refresh = absl::Seconds(1);
    options.query_timeout = absl::Milliseconds(300);
    options.tries = 1;
    auto source = NewDnsDiscovery(options);
    ASSERT_TRUE(source.ok()) << source.status();
    MeshOptions mesh_options;
    mesh_options.discovery = *source;
    auto mesh = Mesh::Create(mesh_options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel =
        mesh_->NewChannel(absl::StrCat("dns:///", kName, ":", port_));
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
  }

  // One call, counted; its status.
  absl::Status Call() {
    CallOptions options;
    options.timeout = absl::Seconds(2);
    absl::Status s =
        channel_->CallRaw("/test.Echo/Say", "hello", options).status;
    ++calls_;
    if (s.ok()) ++ok_;
    return s;
  }

  std::vector<std::string> Addresses() {
    std::vector<std::string> out;
    for (const EndpointStats& e : channel_->EndpointStatsSnapshot()) {
      out.push_back(e.address);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string At(const std::string& host) {
    return absl::StrCat(host, ":", port_);
  }

  int64_t Served(const std::string& host) {
    return backends_.at(host)->calls_received();
  }

  int64_t Queries() { return dns_->queries(kName, DnsType::kA); }

  // Calls until `condition` holds (bounded); each call must succeed.
  bool CallWhileWaitingFor(const std::function<bool()>& condition) {
    return testing::WaitFor([&] {
      absl::Status s = Call();
      EXPECT_TRUE(s.ok()) << s;
      return condition();
    });
  }

  std::unique_ptr<ScriptedDnsServer> dns_;
  int port_ = 0;
  std::map<std::string, std::unique_ptr<EchoBackend>> backends_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
  int calls_ = 0;
  int ok_ = 0;
};

TEST_F(DnsCnameTest, ACnameLoopKeepsTheLastGoodAddressesAndIsRetried) {
  Answer(kName, {0, {ARecord(kName, "127.0.0.1", 1)}}, {});
  Connect();
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok())
      << mesh_->Describe();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Call().ok());

  AnswerWithALoop();
  // The refresh after the TTL (1 s) meets the loop: a failed query, said
  // so, while every call goes on succeeding on the last good address.
  ASSERT_TRUE(CallWhileWaitingFor([&] {
    return absl::StrContains(mesh_->Describe(),
                             "CNAME chain could not be followed");
  })) << mesh_->Describe();
  const std::string described = mesh_->Describe();
  EXPECT_THAT(described, HasSubstr(R"("source":"dns")"));
  EXPECT_THAT(described, HasSubstr("query for 'db.mesh.test' failed"));
  EXPECT_THAT(described, HasSubstr("loops (db.mesh.test -> other.mesh.test -> "
                                   "db.mesh.test)"));
  EXPECT_THAT(described, HasSubstr("STALE, retrying in"));
  // Asked again, with backoff, and still served meanwhile.
  const int64_t failed_at = Queries();
  ASSERT_TRUE(CallWhileWaitingFor([&] { return Queries() >= failed_at + 2; }))
      << "queries: " << Queries() << "\n"
      << mesh_->Describe();
  EXPECT_EQ(ok_, calls_);
  EXPECT_EQ(Served("127.0.0.1"), calls_);
  EXPECT_EQ(Addresses(), std::vector<std::string>{At("127.0.0.1")});

  // A good answer again, with a new address: it serves.
  Answer(kName, {0, {ARecord(kName, "127.0.0.2", 1)}}, {});
  ASSERT_TRUE(CallWhileWaitingFor([&] {
    return Addresses() == std::vector<std::string>{At("127.0.0.2")};
  })) << mesh_->Describe();
  const int64_t before = Served("127.0.0.2");
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Call().ok());
  EXPECT_EQ(Served("127.0.0.2"), before + 10);
  EXPECT_EQ(ok_, calls_);
  EXPECT_THAT(mesh_->Describe(), HasSubstr("RESOLVED"));
}

// A chain that ends at a name the answer holds no address for (a server
// that did not follow it): the same, a failed query.
TEST_F(DnsCnameTest, AChainToANameWithoutAddressesKeepsTheLastGoodAddresses) {
  Answer(kName, {0, {ARecord(kName, "127.0.0.1", 1)}}, {});
  Connect();
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok())
      << mesh_->Describe();
  const DnsReply chain{0, {CnameRecord(kName, kOther, 1)}};
  Answer(kName, chain, chain);
  ASSERT_TRUE(CallWhileWaitingFor([&] {
    return absl::StrContains(mesh_->Describe(),
                             "CNAME chain could not be followed");
  })) << mesh_->Describe();
  EXPECT_THAT(mesh_->Describe(),
              HasSubstr("'db.mesh.test': the CNAME chain could not be "
                        "followed to an address (db.mesh.test -> "
                        "other.mesh.test: no A or AAAA record for its last "
                        "name in the answers)"));
  const int64_t failed_at = Queries();
  ASSERT_TRUE(CallWhileWaitingFor([&] { return Queries() >= failed_at + 2; }))
      << mesh_->Describe();
  EXPECT_EQ(ok_, calls_);
  EXPECT_EQ(Addresses(), std::vector<std::string>{At("127.0.0.1")});
}

// The common case that must not become a failure: a name behind a CNAME
// whose target has an A record and no AAAA (the AAAA answer is the CNAME
// alone), the records in any order.
TEST_F(DnsCnameTest, ACnameToAnIpv4OnlyNameIsServedByItsAddress) {
  Answer(kName,
         {0, {ARecord(kOther, "127.0.0.2", 1), CnameRecord(kName, kOther, 1)}},
         {0, {CnameRecord(kName, kOther, 1)}});
  Connect();
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok())
      << mesh_->Describe();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Call().ok());
  EXPECT_EQ(Served("127.0.0.2"), 10);
  EXPECT_THAT(mesh_->Describe(), HasSubstr("RESOLVED"));
}

// Before any good answer, a loop leaves calls waiting for endpoints
// (fail_fast_timeout, 3 s); then they fail naming it.
TEST_F(DnsCnameTest, ALoopBeforeAnyAnswerFailsCallsNamingIt) {
  AnswerWithALoop();
  Connect();
  ASSERT_TRUE(testing::WaitFor([&] {
    return absl::StrContains(mesh_->Describe(),
                             "CNAME chain could not be followed");
  })) << mesh_->Describe();
  CallOptions options;
  options.timeout = absl::Seconds(10);
  absl::Status s = channel_->CallRaw("/test.Echo/Say", "x", options).status;
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("'db.mesh.test' failed: the CNAME "
                                     "chain could not be followed"));
}

}  // namespace
}  // namespace mesh

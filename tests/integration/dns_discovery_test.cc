// DNS discovery (NewDnsDiscovery) against a real DNS server: dnsmasq on a
// loopback port, answering from a hosts file it reads again on SIGHUP,
// with a TTL of 1 s; echo backends on 127.0.0.1, 127.0.0.2 and 127.0.0.3
// at one port, so that the records alone name the endpoints.
//
// Calls spread over the three; a record removed and another added are
// followed while calls flow; with the DNS server killed the last answer
// keeps serving; a name that does not exist fails calls at once, naming
// it, and is served once it appears (twice); a name without address
// records has no endpoints; an address target needs no query; an AAAA
// record (::1) serves; a target Linkerd says is not a mesh service is
// served through DNS; a target naming its DNS server is resolved there; a
// connection that fails asks again before the TTL; one Mesh sends bare
// names to its default source and dns:/// targets to DNS; an observer may
// call back into the source and cancel its own subscription inside a
// delivery; bad options are refused.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/dns.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"
#include "tests/support/dnsmasq.h"
#include "tests/support/self_dropping_observer.h"
#include "tests/support/test_support.h"
#include "tools/common/echo_backend.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace mesh {
namespace {

using testing::Dnsmasq;
using ::testing::HasSubstr;
using tools::EchoBackend;

constexpr char kDomain[] = "mesh.test";
constexpr char kName[] = "echo.mesh.test";

class DnsDiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // "txt.mesh.test" exists with a TXT record only: no A or AAAA.
    auto dns = Dnsmasq::Start(kDomain, /*ttl_seconds=*/1,
                              {"--txt-record=txt.mesh.test,only-text"});
    ASSERT_TRUE(dns.ok()) << dns.status();
    dns_ = *std::move(dns);
  }

  // Backends on 127.0.0.1, .2 and .3 at one port.
  void StartBackends() {
    backends_ = testing::StartOnOnePort({"127.0.0.1", "127.0.0.2", "127.0.0.3"},
                                        &port_);
    ASSERT_EQ(backends_.size(), 3u) << "no port free on all three hosts";
  }

  // A Mesh whose only source is DNS through dnsmasq; a channel to
  // dns:///`name`:port_.
  void Connect(const std::string& name) {
    auto source = NewDnsDiscovery(TestDnsOptions());
    ASSERT_TRUE(source.ok()) << source.status();
    Use(*source, absl::StrCat("dns:///", name, ":", port_));
  }

  // dnsmasq, asked often.
  DnsOptions TestDnsOptions() {
    DnsOptions dns;
    dns.servers = {dns_->address()};
    dns.min_refresh = absl::Milliseconds(200);
    dns.max_refresh = absl::Seconds(1);  // names that did not exist too
    dns.query_timeout = absl::Milliseconds(300);
    dns.tries = 1;
    return dns;
  }

  // A Mesh whose only source is `source`; a channel to `target`.
  void Use(std::shared_ptr<DiscoverySource> source, const std::string& target) {
    MeshOptions options;
    options.discovery = std::move(source);
    auto mesh = Mesh::Create(options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewChannel(target);
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
  }

  absl::Status Call() {
    CallOptions options;
    options.timeout = absl::Seconds(10);
    return channel_->CallRaw("/test.Echo/Say", "hello", options).status;
  }

  // The channel's endpoints, sorted.
  std::vector<std::string> Addresses() {
    std::vector<std::string> out;
    for (const EndpointStats& e : channel_->EndpointStatsSnapshot()) {
      out.push_back(e.address);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  int64_t Served(const std::string& host) {
    return backends_.at(host)->calls_received();
  }

  std::unique_ptr<Dnsmasq> dns_;
  int port_ = 0;
  std::map<std::string, std::unique_ptr<EchoBackend>> backends_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
};

TEST_F(DnsDiscoveryTest, CallsSpreadOverEveryRecord) {
  StartBackends();
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.1", kName},
                              {"127.0.0.2", kName},
                              {"127.0.0.3", kName}})
                  .ok());
  Connect(kName);
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok());
  for (int i = 0; i < 90; ++i) ASSERT_TRUE(Call().ok());
  EXPECT_EQ(Served("127.0.0.1") + Served("127.0.0.2") + Served("127.0.0.3"),
            90);
  for (const char* host : {"127.0.0.1", "127.0.0.2", "127.0.0.3"}) {
    EXPECT_GT(Served(host), 0) << host;
  }
}

TEST_F(DnsDiscoveryTest, ChangedRecordsAreFollowedWhileCallsFlow) {
  StartBackends();
  ASSERT_TRUE(
      dns_->SetHosts({{"127.0.0.1", kName}, {"127.0.0.2", kName}}).ok());
  Connect(kName);
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(Call().ok());
  EXPECT_EQ(Served("127.0.0.3"), 0);
  // .1 removed, .3 added: once the TTL has run out, the next answer says
  // so, while calls flow.
  ASSERT_TRUE(
      dns_->SetHosts({{"127.0.0.2", kName}, {"127.0.0.3", kName}}).ok());
  const std::vector<std::string> want = {absl::StrCat("127.0.0.2:", port_),
                                         absl::StrCat("127.0.0.3:", port_)};
  bool followed = testing::WaitFor(
      [&] {
        EXPECT_TRUE(Call().ok());
        return Addresses() == want;
      },
      absl::Seconds(10));
  ASSERT_TRUE(followed) << mesh_->Describe();
  // Concurrent calls spread over the new set (sequential ones would all go
  // to the endpoint P2C already knows to be fastest), and none reaches the
  // removed record.
  const int64_t first = Served("127.0.0.1");
  testing::Load load(*channel_, /*total=*/200, /*concurrency=*/8);
  load.Run();
  EXPECT_EQ(load.CountOk(), 200);
  EXPECT_GT(Served("127.0.0.3"), 0);
  EXPECT_EQ(Served("127.0.0.1"), first) << "the removed record still served";
}

TEST_F(DnsDiscoveryTest, TheLastAnswerServesWhenTheDnsServerIsGone) {
  StartBackends();
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.1", kName}}).ok());
  Connect(kName);
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok());
  dns_->Kill();
  // A refresh fails (the TTL is 1 s), and says so.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        return absl::StrContains(mesh_->Describe(),
                                 "query for 'echo.mesh.test' failed");
      },
      absl::Seconds(10)))
      << mesh_->Describe();
  for (int i = 0; i < 20; ++i) {
    absl::Status s = Call();
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_EQ(Served("127.0.0.1"), 20);
}

TEST_F(DnsDiscoveryTest, ANameThatDoesNotExistFailsCallsNamingIt) {
  StartBackends();
  Connect("missing.mesh.test");
  absl::Status s = Call();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("missing.mesh.test"));
  EXPECT_THAT(s.message(), HasSubstr("does not exist"));
  EXPECT_THAT(mesh_->Describe(), HasSubstr("NXDOMAIN"));
}

TEST_F(DnsDiscoveryTest, ANameThatAppearsLaterIsServed) {
  StartBackends();
  Connect(kName);
  ASSERT_TRUE(testing::WaitFor(
      [&] { return absl::StrContains(mesh_->Describe(), "NXDOMAIN"); }));
  // The same records as any later answer: delivered all the same.
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.2", kName}}).ok());
  ASSERT_TRUE(testing::WaitFor([&] { return Call().ok(); }))
      << mesh_->Describe();
  EXPECT_GT(Served("127.0.0.2"), 0);
  // Gone again, and back with the same record.
  ASSERT_TRUE(dns_->SetHosts({}).ok());
  ASSERT_TRUE(testing::WaitFor([&] {
    absl::Status s = Call();
    return absl::StrContains(s.message(), "does not exist");
  }));
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.2", kName}}).ok());
  EXPECT_TRUE(testing::WaitFor([&] { return Call().ok(); }))
      << mesh_->Describe();
}

TEST_F(DnsDiscoveryTest, ANameWithoutAddressRecordsHasNoEndpoints) {
  StartBackends();
  Connect("txt.mesh.test");
  ASSERT_TRUE(testing::WaitFor([&] {
    return absl::StrContains(mesh_->Describe(), "NO_RECORDS");
  })) << mesh_->Describe();
  CallOptions options;
  options.timeout = absl::Milliseconds(300);
  absl::Status s = channel_->CallRaw("/test.Echo/Say", "hello", options).status;
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("does not exist")));
}

TEST_F(DnsDiscoveryTest, AnAddressTargetIsItselfWithoutAQuery) {
  StartBackends();
  Connect("127.0.0.3");
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Call().ok());
  EXPECT_EQ(Served("127.0.0.3"), 3);
  EXPECT_THAT(mesh_->Describe(), ::testing::Not(HasSubstr("DNS A/AAAA")));
}

TEST_F(DnsDiscoveryTest, AnAaaaRecordServesOverIpv6) {
  auto v6 = EchoBackend::Start(0, nullptr, "::1");
  if (!v6.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << v6.status();
  port_ = (*v6)->port();
  ASSERT_TRUE(dns_->SetHosts({{"::1", "v6.mesh.test"}}).ok());
  Connect("v6.mesh.test");
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Call().ok());
  EXPECT_EQ((*v6)->calls_received(), 5);
  EXPECT_THAT(mesh_->Describe(), HasSubstr(absl::StrCat("[::1]:", port_)));
}

// With a TTL of 300 s only an early query sees the record move in time:
// calls that cannot connect to the old address ask again at once.
TEST_F(DnsDiscoveryTest, AFailedConnectionAsksAgainBeforeTheTtl) {
  auto slow = Dnsmasq::Start(kDomain, /*ttl_seconds=*/300);
  ASSERT_TRUE(slow.ok()) << slow.status();
  StartBackends();
  ASSERT_TRUE((*slow)->SetHosts({{"127.0.0.1", kName}}).ok());
  DnsOptions options = TestDnsOptions();
  options.servers = {(*slow)->address()};
  options.max_refresh = absl::Seconds(300);
  auto dns = NewDnsDiscovery(options);
  ASSERT_TRUE(dns.ok()) << dns.status();
  Use(*dns, absl::StrCat("dns:///", kName, ":", port_));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Call().ok());
  ASSERT_THAT(mesh_->Describe(), HasSubstr("ttl 5m"));
  // The record moves to .2, and .1's server goes away.
  ASSERT_TRUE((*slow)->SetHosts({{"127.0.0.2", kName}}).ok());
  backends_.erase("127.0.0.1");
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        CallOptions quick;
        quick.timeout = absl::Seconds(1);
        return channel_->CallRaw("/test.Echo/Say", "x", quick).status.ok();
      },
      absl::Seconds(10)))
      << mesh_->Describe();
  EXPECT_GT(Served("127.0.0.2"), 0);
  EXPECT_THAT(mesh_->Describe(), HasSubstr("after connection failures"));
}

// The proxyless form of linkerd2-proxy forwarding a connection to its
// original destination: the destination service says "not a mesh service"
// (InvalidArgument), and DNS serves the target.
TEST_F(DnsDiscoveryTest, ATargetLinkerdDoesNotKnowIsServedThroughDns) {
  StartBackends();
  ASSERT_TRUE(
      dns_->SetHosts({{"127.0.0.1", kName}, {"127.0.0.2", kName}}).ok());
  const std::string target = absl::StrCat(kName, ":", port_);
  const std::string missing = absl::StrCat("missing.mesh.test:", port_);
  controlplane::Config config;
  config.not_mesh = {target, missing};
  auto cp = controlplane::ControlPlane::Start("127.0.0.1:0", config);
  ASSERT_TRUE(cp.ok()) << cp.status();
  auto dns = NewDnsDiscovery(TestDnsOptions());
  ASSERT_TRUE(dns.ok()) << dns.status();
  LinkerdDiscoveryOptions linkerd;
  linkerd.address = absl::StrCat("127.0.0.1:", (*cp)->port());
  linkerd.dns_fallback_source = *dns;
  auto source = NewLinkerdDiscovery(linkerd);
  ASSERT_TRUE(source.ok()) << source.status();
  Use(*source, target);  // a bare name: the default source, Linkerd
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok())
      << mesh_->Describe();
  testing::Load load(*channel_, /*total=*/100, /*concurrency=*/4);
  load.Run();
  EXPECT_EQ(load.CountOk(), 100);
  EXPECT_EQ(Served("127.0.0.1") + Served("127.0.0.2"), 100);
  EXPECT_EQ(Served("127.0.0.3"), 0);
  // Linkerd was asked once and not again; Describe says why DNS serves.
  EXPECT_EQ((*cp)->calls("Get", target), 1);
  const std::string described = mesh_->Describe();
  EXPECT_THAT(described, HasSubstr("NOT_A_MESH_SERVICE (INVALID_ARGUMENT: "));
  EXPECT_THAT(described, HasSubstr("), resolved through DNS"));
  EXPECT_THAT(described, HasSubstr("DNS A/AAAA"));
  // A target neither Linkerd nor DNS knows fails naming the name.
  auto gone = mesh_->NewChannel(missing);
  ASSERT_TRUE(gone.ok()) << gone.status();
  ASSERT_TRUE(testing::WaitFor([&] {
    absl::Status s = (*gone)->CallRaw("/test.Echo/Say", "x").status;
    return absl::StrContains(s.message(), "does not exist");
  })) << mesh_->Describe();
}

// gRPC's dns://server/host:port: the target names its DNS server; the
// source's own servers (here a closed port) are not asked.
TEST_F(DnsDiscoveryTest, ATargetThatNamesItsServerIsResolvedThere) {
  StartBackends();
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.3", kName}}).ok());
  DnsOptions options = TestDnsOptions();
  options.servers = {"127.0.0.1:1"};
  auto dns = NewDnsDiscovery(options);
  ASSERT_TRUE(dns.ok()) << dns.status();
  Use(*dns, absl::StrCat("dns://", dns_->address(), "/", kName, ":", port_));
  ASSERT_TRUE(channel_->WaitForEndpoints(absl::Seconds(10)).ok())
      << mesh_->Describe();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Call().ok());
  EXPECT_EQ(Served("127.0.0.3"), 5);
  // Through the source's own server, the same name does not resolve.
  auto own = mesh_->NewChannel(absl::StrCat("dns:///", kName, ":", port_));
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_FALSE((*own)->WaitForEndpoints(absl::Milliseconds(500)).ok());
  EXPECT_EQ(Served("127.0.0.3"), 5);
  // A server that is not an address fails the target's calls, naming it.
  auto bad = mesh_->NewChannel(absl::StrCat("dns://ns1.example/", kName, ":1"));
  ASSERT_TRUE(bad.ok()) << bad.status();
  absl::Status s = (*bad)->CallRaw("/test.Echo/Say", "x").status;
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("'ns1.example' is not an IP address"));
}

// One Mesh, two sources: a bare name:port goes to the default source
// (static: 127.0.0.3), dns:///name:port to the DNS source mapped to its
// scheme (the records: 127.0.0.1 and .2).
TEST_F(DnsDiscoveryTest, BareNamesGoToTheDefaultSourceAndDnsTargetsToDns) {
  StartBackends();
  ASSERT_TRUE(
      dns_->SetHosts({{"127.0.0.1", kName}, {"127.0.0.2", kName}}).ok());
  const std::string name = absl::StrCat(kName, ":", port_);
  auto fixed = StaticDiscovery::Create();
  ASSERT_TRUE(
      fixed->SetEndpoints(name, {{absl::StrCat("127.0.0.3:", port_)}}).ok());
  auto dns = NewDnsDiscovery(TestDnsOptions());
  ASSERT_TRUE(dns.ok()) << dns.status();
  MeshOptions options;
  options.discovery = fixed;
  options.discovery_by_scheme["dns"] = *dns;
  auto mesh = Mesh::Create(options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  mesh_ = *std::move(mesh);
  auto bare = mesh_->NewChannel(name);
  ASSERT_TRUE(bare.ok()) << bare.status();
  auto by_dns = mesh_->NewChannel(absl::StrCat("dns:///", name));
  ASSERT_TRUE(by_dns.ok()) << by_dns.status();
  ASSERT_TRUE((*by_dns)->WaitForEndpoints(absl::Seconds(10)).ok());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE((*bare)->CallRaw("/test.Echo/Say", "x").status.ok());
  }
  EXPECT_EQ(Served("127.0.0.3"), 20);
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE((*by_dns)->CallRaw("/test.Echo/Say", "x").status.ok());
  }
  EXPECT_EQ(Served("127.0.0.1") + Served("127.0.0.2"), 40);
  EXPECT_EQ(Served("127.0.0.3"), 20);
}

// An observer reads its subscription's state and drops the subscription
// inside its first delivery (both once waited for the lock the delivery
// ran under); a second subscription of the name goes on.
TEST_F(DnsDiscoveryTest, AnObserverMayCallBackAndCancelInsideItsDelivery) {
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.2", kName}}).ok());
  auto source = NewDnsDiscovery(TestDnsOptions());
  ASSERT_TRUE(source.ok()) << source.status();
  const std::string target = absl::StrCat(kName, ":7000");
  testing::SelfDroppingObserver cancelling;
  cancelling.Set((*source)->Subscribe(target, &cancelling));
  std::optional<testing::SelfDroppingObserver::Seen> seen =
      cancelling.WaitUntilDone();
  ASSERT_TRUE(seen.has_value());
  EXPECT_GE(seen->endpoints, 1u);
  // The name's A/AAAA line, read inside.
  EXPECT_EQ(seen->state.resources.size(), 1u);

  // The source serves on: another subscription of the name follows a
  // change.
  class Latest final : public EndpointObserver {
   public:
    void OnEndpointUpdate(const EndpointUpdate& update) override {
      internal::MutexLock lock(&mu);
      count = update.endpoints.size();
    }
    internal::Mutex mu;
    size_t count ABSL_GUARDED_BY(mu) = 0;
  } latest;
  auto kept = (*source)->Subscribe(target, &latest);
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.1", kName},
                              {"127.0.0.2", kName},
                              {"127.0.0.3", kName}})
                  .ok());
  EXPECT_TRUE(testing::WaitFor([&] {
    internal::MutexLock lock(&latest.mu);
    return latest.count == 3;
  }));
  kept.reset();
}

TEST(DnsTargetTest, ASourceThatTakesNoAuthorityRefusesOne) {
  MeshOptions options;
  options.discovery = StaticDiscovery::Create();
  options.discovery_by_scheme["static"] = StaticDiscovery::Create();
  auto mesh = Mesh::Create(options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  auto channel = (*mesh)->NewChannel("static://somewhere/a:1");
  EXPECT_EQ(channel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(channel.status().message(),
              HasSubstr("names an authority, which the 'static' discovery "
                        "source does not take"));
}

TEST(DnsOptionsTest, BadOptionsAreRefused) {
  DnsOptions bad_server;
  bad_server.servers = {"dns.example"};
  auto s = NewDnsDiscovery(bad_server);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("'dns.example'"));
  DnsOptions bad_bounds;
  bad_bounds.min_refresh = absl::Seconds(10);
  bad_bounds.max_refresh = absl::Seconds(1);
  EXPECT_EQ(NewDnsDiscovery(bad_bounds).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mesh

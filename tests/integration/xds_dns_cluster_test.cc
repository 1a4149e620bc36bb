// xDS LOGICAL_DNS and STRICT_DNS clusters (gRFC A37) end to end: a
// scripted ADS server on 127.0.0.1 serves a Listener, its routes and a DNS
// cluster over a real ADS stream; a real DNS server (dnsmasq on a loopback
// port, TTL 1 s, answering from a hosts file it reads again on SIGHUP)
// resolves the cluster's names; echo backends on 127.0.0.1, 127.0.0.2 and
// 127.0.0.3 at one port, so that the records alone say which serve.
//
// A LOGICAL_DNS cluster is served by every address its name has, and
// follows a change of its records; a STRICT_DNS cluster serves the union of
// its names' addresses, each with its host's weight, and a name of it that
// does not exist adds nothing; a name that does not exist fails calls
// naming it; a bad LOGICAL_DNS cluster is NACKed naming the field while the
// last good one serves; a cluster switching between EDS and DNS follows;
// with the DNS server gone the last answer serves, and the Mesh goes at
// once; the cluster's dns_lookup_family chooses among a name's A and AAAA
// addresses (a backend on ::1 too).
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/dns.h"
#include "mesh/mesh.h"
#include "mesh/xds.h"
#include "src/base/mutex.h"
#include "src/discovery/xds/bootstrap.h"
#include "src/discovery/xds/xds_client.h"
#include "tests/support/dnsmasq.h"
#include "tests/support/scripted_ads_server.h"
#include "tests/support/test_support.h"
#include "tests/support/xds_fixtures.h"
#include "tools/common/echo_backend.h"

namespace mesh {
namespace {

using envoy::config::cluster::v3::Cluster;
using testing::AdsResponder;
using testing::Dnsmasq;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Parse;
using testing::ScriptedAdsServer;
using tools::EchoBackend;

constexpr char kDomain[] = "mesh.test";
constexpr char kTarget[] = "svc.test:7001";
constexpr char kRoutes[] = "svc-routes";
constexpr char kCluster[] = "dns-cluster";
constexpr const char* kHosts[] = {"127.0.0.1", "127.0.0.2", "127.0.0.3"};

// One lb_endpoint (text) at `name`:`port`, with `more` fields.
std::string Host(const std::string& name, int port,
                 const std::string& more = "") {
  return absl::StrCat(
      "lb_endpoints { endpoint { address { socket_address { address: \"", name,
      "\" port_value: ", port, " } } } ", more, " }");
}

// Cluster kCluster of `type` whose one locality holds `lb_endpoints`
// (text), with `more` fields.
Cluster DnsCluster(const std::string& type, const std::string& lb_endpoints,
                   const std::string& more = "") {
  return Parse<Cluster>(absl::StrCat("name: \"", kCluster, "\" type: ", type,
                                     " load_assignment { endpoints { ",
                                     lb_endpoints, " } } ", more));
}

class XdsDnsClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dns = Dnsmasq::Start(kDomain, /*ttl_seconds=*/1);
    ASSERT_TRUE(dns.ok()) << dns.status();
    dns_ = *std::move(dns);
    backends_ =
        testing::StartOnOnePort({kHosts[0], kHosts[1], kHosts[2]}, &port_);
    ASSERT_EQ(backends_.size(), 3u) << "no port free on all three hosts";
    server_ = ScriptedAdsServer::Start();
    responder_ = std::make_unique<AdsResponder>(*server_);
    responder_->Set(testing::MakeListener(kTarget, kRoutes));
    responder_->Set(
        testing::OneHostRoutes(kRoutes, testing::RouteTo(kCluster)));
  }

  void TearDown() override {
    channel_.reset();
    mesh_.reset();
    if (responder_ == nullptr) return;  // SetUp failed before it
    responder_->Stop();
    responder_->ExpectNoNacks();
  }

  // The Mesh over the ADS server, its DNS clusters resolved through
  // dnsmasq; channel_ to xds:///kTarget.
  void MakeMesh(const Dnsmasq* dns = nullptr,
                absl::Duration max_refresh = absl::Seconds(1)) {
    testing::XdsMeshOptions options;
    options.dns.servers = {(dns != nullptr ? dns : dns_.get())->address()};
    options.dns.min_refresh = absl::Milliseconds(200);
    options.dns.max_refresh = max_refresh;
    options.dns.query_timeout = absl::Milliseconds(300);
    options.dns.tries = 1;
    auto mesh = testing::MakeXdsMesh(server_->address(), options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    auto channel = mesh_->NewChannel(absl::StrCat("xds:///", kTarget));
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
    // Brings up the cluster's leg of the channel (its destination, which
    // watches the cluster), as a first call would: until then the channel
    // shows no endpoint. Not asserted: a name may not exist.
    (void)channel_->WaitForEndpoints(absl::Seconds(10));
  }

  // "ip:port_" for each of `ips`, sorted.
  std::vector<std::string> At(std::vector<std::string> ips) const {
    for (std::string& ip : ips) ip = absl::StrCat(ip, ":", port_);
    std::sort(ips.begin(), ips.end());
    return ips;
  }

  // The channel's endpoints (those of the cluster its routes name), sorted.
  std::vector<std::string> Addresses() const {
    std::vector<std::string> out;
    for (const EndpointStats& e : channel_->EndpointStatsSnapshot()) {
      out.push_back(e.address);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Waits (bounded) until the channel's endpoints are `want`.
  void ExpectEndpoints(const std::vector<std::string>& want) {
    const bool reached = testing::WaitFor([&] { return Addresses() == want; });
    EXPECT_TRUE(reached) << "endpoints: "
                         << ::testing::PrintToString(Addresses())
                         << ", want: " << ::testing::PrintToString(want) << "\n"
                         << mesh_->Describe();
  }

  absl::Status Call() {
    CallOptions options;
    options.timeout = absl::Seconds(10);
    return channel_->CallRaw("/test.Echo/Say", "hello", options).status;
  }

  // Concurrent calls, so that they spread over the endpoints (sequential
  // ones stay on the endpoint P2C knows to be fastest); all must succeed.
  void Spread(int total) {
    testing::Load load(*channel_, total, /*concurrency=*/8);
    load.Run();
    EXPECT_EQ(load.CountOk(), total);
  }

  int64_t Served(const std::string& host) const {
    return backends_.at(host)->calls_received();
  }

  std::unique_ptr<Dnsmasq> dns_;
  int port_ = 0;
  std::map<std::string, std::unique_ptr<EchoBackend>> backends_;
  std::unique_ptr<ScriptedAdsServer> server_;
  std::unique_ptr<AdsResponder> responder_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
};

TEST_F(XdsDnsClusterTest, LogicalDnsIsServedByEveryAddressOfItsName) {
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.1", "echo.mesh.test"},
                              {"127.0.0.2", "echo.mesh.test"},
                              {"127.0.0.3", "echo.mesh.test"}})
                  .ok());
  responder_->Set(DnsCluster("LOGICAL_DNS", Host("echo.mesh.test", port_)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ExpectEndpoints(At({"127.0.0.1", "127.0.0.2", "127.0.0.3"}));
  Spread(300);
  for (const char* host : kHosts) EXPECT_GT(Served(host), 0) << host;
  // The cluster's resources: its Cluster and its name, no assignment.
  const std::string describe = mesh_->Describe();
  EXPECT_THAT(describe, HasSubstr("DNS A/AAAA"));
  EXPECT_THAT(describe, HasSubstr("echo.mesh.test"));
  EXPECT_THAT(describe, Not(HasSubstr("ClusterLoadAssignment")));
}

TEST_F(XdsDnsClusterTest, LogicalDnsFollowsARecordChange) {
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.1", "echo.mesh.test"},
                              {"127.0.0.2", "echo.mesh.test"}})
                  .ok());
  responder_->Set(DnsCluster("LOGICAL_DNS", Host("echo.mesh.test", port_)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ExpectEndpoints(At({"127.0.0.1", "127.0.0.2"}));
  Spread(50);
  EXPECT_EQ(Served("127.0.0.3"), 0);
  // .1 out, .3 in: followed once the TTL has run out.
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.2", "echo.mesh.test"},
                              {"127.0.0.3", "echo.mesh.test"}})
                  .ok());
  ExpectEndpoints(At({"127.0.0.2", "127.0.0.3"}));
  const int64_t first = Served("127.0.0.1");
  Spread(200);
  EXPECT_GT(Served("127.0.0.3"), 0);
  EXPECT_EQ(Served("127.0.0.1"), first) << "the removed record still served";
}

// With a TTL of 300 s only an early query sees the record move in time:
// calls that cannot connect to the old address ask the cluster's name again.
TEST_F(XdsDnsClusterTest, AFailedConnectionAsksTheNameAgainBeforeTheTtl) {
  auto slow = Dnsmasq::Start(kDomain, /*ttl_seconds=*/300);
  ASSERT_TRUE(slow.ok()) << slow.status();
  ASSERT_TRUE((*slow)->SetHosts({{"127.0.0.1", "echo.mesh.test"}}).ok());
  responder_->Set(DnsCluster("LOGICAL_DNS", Host("echo.mesh.test", port_)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh(slow->get(), absl::Seconds(300)));
  ExpectEndpoints(At({"127.0.0.1"}));
  ASSERT_TRUE(Call().ok());
  // The record moves to .2, and .1's server goes away.
  ASSERT_TRUE((*slow)->SetHosts({{"127.0.0.2", "echo.mesh.test"}}).ok());
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

// A name with an A and an AAAA record (backends on 127.0.0.1 and ::1):
// the cluster's dns_lookup_family decides which serve, and a new value
// re-sent is followed without a new query.
TEST_F(XdsDnsClusterTest, TheLookupFamilyChoosesWhichAddressesServe) {
  auto v6 = EchoBackend::Start(port_, nullptr, "::1");
  if (!v6.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << v6.status();
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.1", "dual.mesh.test"},
                              {"::1", "dual.mesh.test"}})
                  .ok());
  const std::string v4_address = At({"127.0.0.1"})[0];
  const std::string v6_address = absl::StrCat("[::1]:", port_);
  auto cluster = [&](const std::string& family) {
    return DnsCluster("STRICT_DNS", Host("dual.mesh.test", port_), family);
  };
  responder_->Set(cluster("dns_lookup_family: V4_ONLY"));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ExpectEndpoints({v4_address});
  Spread(20);
  EXPECT_EQ((*v6)->calls_received(), 0);

  responder_->Set(cluster("dns_lookup_family: V6_ONLY"));
  ExpectEndpoints({v6_address});
  Spread(20);
  EXPECT_EQ((*v6)->calls_received(), 20);

  responder_->Set(cluster("dns_lookup_family: ALL"));
  ExpectEndpoints({v4_address, v6_address});
  responder_->Set(cluster("dns_lookup_family: V4_PREFERRED"));
  ExpectEndpoints({v4_address});
  // Unset: AUTO, IPv6 first.
  responder_->Set(cluster(""));
  ExpectEndpoints({v6_address});
}

TEST_F(XdsDnsClusterTest, StrictDnsServesTheUnionWithEachHostsWeight) {
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.1", "a.mesh.test"},
                              {"127.0.0.2", "b.mesh.test"},
                              {"127.0.0.3", "b.mesh.test"}})
                  .ok());
  responder_->Set(DnsCluster(
      "STRICT_DNS",
      Host("a.mesh.test", port_, "load_balancing_weight { value: 3 }") +
          Host("b.mesh.test", port_)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ExpectEndpoints(At({"127.0.0.1", "127.0.0.2", "127.0.0.3"}));
  std::map<std::string, uint32_t> weights;
  for (const EndpointStats& e : channel_->EndpointStatsSnapshot()) {
    weights[e.address] = e.weight;
  }
  EXPECT_EQ(weights[At({"127.0.0.1"})[0]], 3u);
  EXPECT_EQ(weights[At({"127.0.0.2"})[0]], 1u);
  EXPECT_EQ(weights[At({"127.0.0.3"})[0]], 1u);
  Spread(300);
  for (const char* host : kHosts) EXPECT_GT(Served(host), 0) << host;
  // A host dropped from the cluster takes its addresses along; one that
  // does not exist adds none.
  responder_->Update(
      DnsCluster("STRICT_DNS",
                 Host("b.mesh.test", port_) + Host("nope.mesh.test", port_)));
  // Once the missing name has answered (until then it adds nothing
  // anyway), the set is still the other name's alone.
  ASSERT_TRUE(testing::WaitFor([&] {
    return absl::StrContains(mesh_->Describe(), "NXDOMAIN");
  })) << mesh_->Describe();
  ExpectEndpoints(At({"127.0.0.2", "127.0.0.3"}));
  const int64_t first = Served("127.0.0.1");
  Spread(100);
  EXPECT_EQ(Served("127.0.0.1"), first);
}

TEST_F(XdsDnsClusterTest, ANameThatDoesNotExistFailsCallsNamingIt) {
  responder_->Set(DnsCluster("LOGICAL_DNS", Host("missing.mesh.test", port_)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  absl::Status s = Call();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("missing.mesh.test"));
  EXPECT_THAT(s.message(), HasSubstr("does not exist"));
  EXPECT_THAT(mesh_->Describe(), HasSubstr("NXDOMAIN"));
  // Once it exists, it serves.
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.2", "missing.mesh.test"}}).ok());
  ExpectEndpoints(At({"127.0.0.2"}));
  s = Call();
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(XdsDnsClusterTest, ABadLogicalDnsClusterIsNackedAndTheLastGoodServes) {
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.1", "echo.mesh.test"},
                              {"127.0.0.2", "other.mesh.test"}})
                  .ok());
  responder_->Set(DnsCluster("LOGICAL_DNS", Host("echo.mesh.test", port_)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ExpectEndpoints(At({"127.0.0.1"}));
  // Two endpoints: refused over the stream, naming the field.
  const std::string nonce = responder_->Set(DnsCluster(
      "LOGICAL_DNS",
      Host("echo.mesh.test", port_) + Host("other.mesh.test", port_)));
  std::string error;
  ASSERT_NO_FATAL_FAILURE(responder_->AwaitNack(nonce, &error));
  EXPECT_THAT(error, HasSubstr(kCluster));
  EXPECT_THAT(error, HasSubstr("load_assignment.endpoints[0].lb_endpoints: 2 "
                               "lb_endpoints: a LOGICAL_DNS cluster has "
                               "exactly one"));
  EXPECT_THAT(mesh_->Describe(), HasSubstr("NACKED"));
  // The last good cluster serves, and only it.
  for (int i = 0; i < 20; ++i) {
    absl::Status s = Call();
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_EQ(Served("127.0.0.1"), 20);
  EXPECT_EQ(Served("127.0.0.2"), 0);
  EXPECT_EQ(Addresses(), At({"127.0.0.1"}));
}

TEST_F(XdsDnsClusterTest, AClusterSwitchesBetweenEdsAndDns) {
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.2", "echo.mesh.test"},
                              {"127.0.0.3", "echo.mesh.test"}})
                  .ok());
  responder_->Set(testing::MakeEdsCluster(kCluster, "dns-cluster-cla"));
  responder_->Set(
      testing::ClaOf("dns-cluster-cla", {backends_.at("127.0.0.1").get()}));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ExpectEndpoints(At({"127.0.0.1"}));
  // EDS → DNS: the names' addresses replace the assignment's.
  responder_->Update(DnsCluster("LOGICAL_DNS", Host("echo.mesh.test", port_)));
  ExpectEndpoints(At({"127.0.0.2", "127.0.0.3"}));
  EXPECT_THAT(mesh_->Describe(), Not(HasSubstr("ClusterLoadAssignment")));
  // DNS → EDS: the assignment again, and the name no longer asked.
  responder_->Update(testing::MakeEdsCluster(kCluster, "dns-cluster-cla"));
  ExpectEndpoints(At({"127.0.0.1"}));
  EXPECT_TRUE(testing::WaitFor([&] {
    return !absl::StrContains(mesh_->Describe(), "DNS A/AAAA");
  })) << mesh_->Describe();
  const int64_t before = Served("127.0.0.2") + Served("127.0.0.3");
  for (int i = 0; i < 10; ++i) {
    absl::Status s = Call();
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_EQ(Served("127.0.0.2") + Served("127.0.0.3"), before);
}

TEST_F(XdsDnsClusterTest, TheLastAnswerServesWhenTheDnsServerIsGone) {
  ASSERT_TRUE(dns_->SetHosts({{"127.0.0.1", "echo.mesh.test"}}).ok());
  responder_->Set(DnsCluster("LOGICAL_DNS", Host("echo.mesh.test", port_)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  ExpectEndpoints(At({"127.0.0.1"}));
  dns_->Kill();
  // A refresh fails (the TTL is 1 s) and is reported to the cluster.
  ASSERT_TRUE(testing::WaitFor([&] {
    return absl::StrContains(mesh_->Describe(),
                             "query for 'echo.mesh.test' failed");
  })) << mesh_->Describe();
  for (int i = 0; i < 20; ++i) {
    absl::Status s = Call();
    ASSERT_TRUE(s.ok()) << s;
  }
  EXPECT_EQ(Served("127.0.0.1"), 20);
  // Queries keep failing (each waits out its time-out): the Mesh still goes
  // at once, the DNS subscriptions and their source with it.
  const absl::Time start = absl::Now();
  channel_.reset();
  mesh_.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

// The client's side alone, with names answered in code: an XdsClient over
// the scripted ADS server whose DNS source is a StaticDiscovery that counts
// its subscriptions.
class XdsDnsClusterClientTest : public ::testing::Test {
 protected:
  // What the cluster's watch is told. Thread-safe.
  class Recorder final : public EndpointObserver {
   public:
    void OnBackendPolicy(const BackendPolicy& policy) override {
      internal::MutexLock lock(&mu_);
      max_requests_ = policy.max_requests;
    }
    void OnEndpointUpdate(const EndpointUpdate& update) override {
      internal::MutexLock lock(&mu_);
      endpoints_.clear();
      for (const Endpoint& e : update.endpoints) {
        endpoints_.push_back(absl::StrCat(e.address, " w", e.weight));
      }
      std::sort(endpoints_.begin(), endpoints_.end());
    }
    // The last set, as "address wWEIGHT", sorted.
    std::vector<std::string> endpoints() {
      internal::MutexLock lock(&mu_);
      return endpoints_;
    }
    uint32_t max_requests() {
      internal::MutexLock lock(&mu_);
      return max_requests_;
    }

   private:
    internal::Mutex mu_;
    std::vector<std::string> endpoints_ ABSL_GUARDED_BY(mu_);
    uint32_t max_requests_ ABSL_GUARDED_BY(mu_) = 0;
  };

  void SetUp() override {
    server_ = ScriptedAdsServer::Start();
    responder_ = std::make_unique<AdsResponder>(*server_);
    auto bootstrap = internal::xds::LoadXdsBootstrap(
        testing::PlaintextBootstrap(server_->address()), "");
    ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
    client_ = std::make_shared<internal::xds::XdsClient>(
        *std::move(bootstrap), XdsOptions(), nullptr, [this] {
          ++made_;
          return absl::StatusOr<std::shared_ptr<DiscoverySource>>(dns_);
        });
  }

  void TearDown() override {
    watch_.reset();
    client_->Shutdown();
    responder_->Stop();
    responder_->ExpectNoNacks();
  }

  std::unique_ptr<ScriptedAdsServer> server_;
  std::unique_ptr<AdsResponder> responder_;
  std::shared_ptr<StaticDiscovery> names_ = StaticDiscovery::Create();
  std::shared_ptr<testing::CountingDiscovery> dns_ =
      std::make_shared<testing::CountingDiscovery>(names_);
  std::atomic<int> made_{0};
  std::shared_ptr<internal::xds::XdsClient> client_;
  Recorder recorder_;
  std::unique_ptr<DiscoverySubscription> watch_;
};

TEST_F(XdsDnsClusterClientTest, OnlyChangedHostsAreResubscribed) {
  ASSERT_TRUE(names_->SetEndpoints("a.test:80", {{"10.0.0.1:80"}}).ok());
  ASSERT_TRUE(names_->SetEndpoints("b.test:80", {{"10.0.0.2:80"}}).ok());
  ASSERT_TRUE(names_->SetEndpoints("c.test:80", {{"10.0.0.3:80"}}).ok());
  // With a circuit breaker: the backend policy comes as for EDS.
  Cluster cluster =
      DnsCluster("STRICT_DNS", Host("a.test", 80) + Host("b.test", 80));
  cluster.mutable_circuit_breakers()
      ->add_thresholds()
      ->mutable_max_requests()
      ->set_value(9);
  responder_->Set(cluster);
  watch_ = client_->WatchCluster(kCluster, &recorder_);
  const std::vector<std::string> ab = {"10.0.0.1:80 w1", "10.0.0.2:80 w1"};
  ASSERT_TRUE(testing::WaitFor([&] { return recorder_.endpoints() == ab; }))
      << ::testing::PrintToString(recorder_.endpoints());
  EXPECT_EQ(recorder_.max_requests(), 9u);
  EXPECT_EQ(made_.load(), 1);
  EXPECT_EQ(dns_->subscribes(), 2);
  // b stays (with a new weight: no new query), a goes, c comes.
  responder_->Update(DnsCluster(
      "STRICT_DNS", Host("b.test", 80, "load_balancing_weight { value: 4 }") +
                        Host("c.test", 80)));
  const std::vector<std::string> bc = {"10.0.0.2:80 w4", "10.0.0.3:80 w1"};
  ASSERT_TRUE(testing::WaitFor([&] { return recorder_.endpoints() == bc; }))
      << ::testing::PrintToString(recorder_.endpoints());
  EXPECT_EQ(dns_->subscribes(), 3);
  EXPECT_EQ(dns_->live(), 2);
  // An answer that changes is followed.
  ASSERT_TRUE(
      names_->SetEndpoints("c.test:80", {{"10.0.0.3:80"}, {"10.0.0.4:80"}})
          .ok());
  const std::vector<std::string> bcc = {"10.0.0.2:80 w4", "10.0.0.3:80 w1",
                                        "10.0.0.4:80 w1"};
  ASSERT_TRUE(testing::WaitFor([&] { return recorder_.endpoints() == bcc; }))
      << ::testing::PrintToString(recorder_.endpoints());
  // An EDS cluster now: the names are dropped, EDS is asked.
  responder_->Set(testing::ClaOf("eds-cla", std::vector<const EchoBackend*>{}));
  responder_->Update(testing::MakeEdsCluster(kCluster, "eds-cla"));
  EXPECT_TRUE(testing::WaitFor([&] { return dns_->live() == 0; }));
  // DNS again: subscribed anew, by the one source made at first.
  responder_->Update(DnsCluster("LOGICAL_DNS", Host("a.test", 80)));
  const std::vector<std::string> a = {"10.0.0.1:80 w1"};
  ASSERT_TRUE(testing::WaitFor([&] { return recorder_.endpoints() == a; }))
      << ::testing::PrintToString(recorder_.endpoints());
  EXPECT_EQ(dns_->live(), 1);
  EXPECT_EQ(made_.load(), 1);
  // The watch gone, its names go.
  watch_.reset();
  EXPECT_EQ(dns_->live(), 0);
}

TEST_F(XdsDnsClusterClientTest, ShutdownDropsTheNamesAndTheSource) {
  ASSERT_TRUE(names_->SetEndpoints("a.test:80", {{"10.0.0.1:80"}}).ok());
  responder_->Set(DnsCluster("LOGICAL_DNS", Host("a.test", 80)));
  watch_ = client_->WatchCluster(kCluster, &recorder_);
  ASSERT_TRUE(testing::WaitFor([&] { return dns_->live() == 1; }));
  client_->Shutdown();
  EXPECT_EQ(dns_->live(), 0);
  // The client no longer holds the source.
  EXPECT_EQ(dns_.use_count(), 1);
  // Answers after that reach nobody (and nothing runs them).
  ASSERT_TRUE(names_->SetEndpoints("a.test:80", {{"10.0.0.9:80"}}).ok());
  EXPECT_EQ(recorder_.endpoints(), std::vector<std::string>{"10.0.0.1:80 w1"});
}

TEST(XdsDnsOptionsTest, BadDnsOptionsAreRefused) {
  XdsOptions options;
  options.bootstrap_json =
      R"({"xds_servers": [{"server_uri": "127.0.0.1:1",
          "channel_creds": [{"type": "insecure"}]}],
          "node": {"id": "n"}})";
  options.dns.servers = {"dns.example"};
  auto source = NewXdsDiscovery(options);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(source.status().message(), HasSubstr("XdsOptions.dns"));
  EXPECT_THAT(source.status().message(), HasSubstr("'dns.example'"));
}

}  // namespace
}  // namespace mesh

// mesh's xDS client on the data path: a scripted ADS server on 127.0.0.1
// serves Listener, RouteConfiguration, Cluster and ClusterLoadAssignment
// resources built here, and calls on real EchoBackends check that what they
// say is carried out per call (docs/xds.md, "What each resource does in
// mesh"): circuit breakers, drop_overloads, the fault filter (abort, delay,
// header abort, per-route overrides), retry policies within the retry
// budget, and endpoint updates while calls flow. Where calls go (virtual
// hosts, route matches, weighted clusters, timeouts) is in
// xds_routing_test.cc (the same fixture).
//
// The server answers every request with the resources set here (see
// XdsDataPathTest::Serve); statistical checks allow 6 standard deviations.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/extensions/filters/http/fault/v3/fault.pb.h"
#include "envoy/extensions/filters/http/router/v3/router.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "mesh/xds.h"
#include "src/discovery/xds/xds_client.h"
#include "tests/support/scripted_ads_server.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

using envoy::config::cluster::v3::Cluster;
using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using envoy::extensions::filters::http::fault::v3::HTTPFault;
using envoy::extensions::filters::http::router::v3::Router;
using envoy::extensions::filters::network::http_connection_manager::v3::
    HttpConnectionManager;
using envoy::extensions::filters::network::http_connection_manager::v3::
    HttpFilter;
using envoy::service::discovery::v3::DiscoveryRequest;
using internal::xds::ResourceType;
using internal::xds::TypeUrl;
using ::testing::HasSubstr;
using testing::ScriptedAdsServer;
using tools::EchoBackend;

using Backends = std::vector<std::unique_ptr<EchoBackend>>;

const std::string kLds = TypeUrl(ResourceType::kListener);
const std::string kRds = TypeUrl(ResourceType::kRouteConfig);
const std::string kCds = TypeUrl(ResourceType::kCluster);
const std::string kEds = TypeUrl(ResourceType::kEndpoints);

constexpr char kTarget[] = "svc.test:7001";
constexpr char kRoutes[] = "svc-routes";
constexpr char kCluster[] = "svc-cluster";
constexpr char kSay[] = "/test.Echo/Say";

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message))
      << text;
  return message;
}

// The Listener for kTarget over RDS kRoutes; with `fault` (HTTPFault,
// text), a fault filter named "fault" before the router.
Listener MakeListener(const std::string& fault = "") {
  HttpConnectionManager hcm;
  hcm.mutable_rds()->mutable_config_source()->mutable_ads();
  hcm.mutable_rds()->set_route_config_name(kRoutes);
  if (!fault.empty()) {
    HttpFilter* filter = hcm.add_http_filters();
    filter->set_name("fault");
    filter->mutable_typed_config()->PackFrom(Parse<HTTPFault>(fault));
  }
  HttpFilter* router = hcm.add_http_filters();
  router->set_name("router");
  router->mutable_typed_config()->PackFrom(Router());
  Listener listener;
  listener.set_name(kTarget);
  listener.mutable_api_listener()->mutable_api_listener()->PackFrom(hcm);
  return listener;
}

// A route's typed_per_filter_config entry (text) replacing the fault
// filter's config with `config` (HTTPFault, text).
std::string FaultOverride(const std::string& config) {
  google::protobuf::Any any;
  any.PackFrom(Parse<HTTPFault>(config));
  std::string text;
  google::protobuf::TextFormat::PrintToString(any, &text);
  return absl::StrCat(R"(typed_per_filter_config { key: "fault" value { )",
                      text, " } }");
}

// One route sending calls that match `match` (text) to `cluster`, with
// `action` (text) added to its RouteAction and `extra` to the Route.
std::string To(const std::string& cluster, const std::string& match = "",
               const std::string& action = "", const std::string& extra = "") {
  return absl::StrCat(
      "routes { match { ", match.empty() ? "prefix: \"\"" : match,
      " } route { cluster: \"", cluster, "\" ", action, " } ", extra, " }");
}
// kRoutes with one virtual host for every domain holding `routes`.
RouteConfiguration OneHost(const std::string& routes) {
  return Parse<RouteConfiguration>(absl::StrCat(
      "name: \"", kRoutes, "\" virtual_hosts { name: \"svc\" domains: \"*\" ",
      routes, " }"));
}

// Within 6 standard deviations of a binomial(n, p) draw's mean.
void ExpectShare(int got, int n, double p) {
  const double mean = n * p;
  const double sigma = std::sqrt(n * p * (1 - p));
  EXPECT_NEAR(got, mean, 6 * sigma)
      << got << " of " << n << ", expected share " << p << " (6 sigma)";
}

class XdsDataPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = ScriptedAdsServer::Start();
    responder_ = std::thread([this] { Serve(); });
  }
  void TearDown() override {
    channel_.reset();
    mesh_.reset();
    stop_.store(true);
    responder_.join();
    server_.reset();
    absl::MutexLock lock(&mu_);
    for (const auto& [nonce, error] : answers_) {
      EXPECT_EQ(error, "") << "NACK of response " << nonce;
    }
  }

  // The server: each request that is not the answer to a response (an ACK
  // or NACK with unchanged names) gets the type's resources it names.
  void Serve() {
    while (!stop_.load()) {
      std::optional<DiscoveryRequest> r =
          server_->NextRequest(absl::Milliseconds(50));
      if (!r.has_value()) continue;
      absl::MutexLock lock(&mu_);
      if (!r->response_nonce().empty()) {
        answers_[r->response_nonce()] =
            r->has_error_detail() ? r->error_detail().message() : "";
      }
      Type& t = types_[r->type_url()];
      std::vector<std::string> names(r->resource_names().begin(),
                                     r->resource_names().end());
      const bool answer =
          t.asked && names == t.names && !r->response_nonce().empty();
      t.asked = true;
      t.names = std::move(names);
      if (!answer) SendLocked(r->type_url());
    }
  }

  // Sends the resources of `type_url` the client asks for; the nonce.
  std::string SendLocked(const std::string& type_url)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Type& t = types_[type_url];
    std::vector<const google::protobuf::Message*> resources;
    for (const std::string& name : t.names) {
      auto it = t.resources.find(name);
      if (it != t.resources.end()) resources.push_back(it->second.get());
    }
    std::string nonce;
    server_->Send(
        testing::MakeResponse(type_url, absl::StrCat(t.version), resources),
        &nonce);
    return nonce;
  }

  // Serves `resource` from now on and, once its type was asked for, sends
  // it; returns that response's nonce ("" before).
  template <typename T>
  std::string Put(const std::string& type_url, const std::string& name,
                  const T& resource) {
    absl::MutexLock lock(&mu_);
    Type& t = types_[type_url];
    t.resources[name] = std::make_shared<T>(resource);
    ++t.version;
    return t.asked ? SendLocked(type_url) : "";
  }
  std::string Set(const Listener& r) { return Put(kLds, r.name(), r); }
  std::string Set(const RouteConfiguration& r) {
    return Put(kRds, r.name(), r);
  }
  std::string Set(const Cluster& r) { return Put(kCds, r.name(), r); }
  std::string Set(const ClusterLoadAssignment& r) {
    return Put(kEds, r.cluster_name(), r);
  }

  // Replaces a resource the client has and returns once the client has
  // ACKed it and applied it (an EDS response sent after it is ACKed: the
  // client handles responses in order, each whole).
  template <typename T>
  void Update(const T& resource) {
    const std::string nonce = Set(resource);
    ASSERT_FALSE(nonce.empty()) << "not asked for yet";
    ASSERT_NO_FATAL_FAILURE(AwaitAck(nonce));
    std::string sync;
    {
      absl::MutexLock lock(&mu_);
      sync = SendLocked(kEds);
    }
    ASSERT_NO_FATAL_FAILURE(AwaitAck(sync));
  }
  void AwaitAck(const std::string& nonce) {
    std::optional<std::string> error;
    ASSERT_TRUE(testing::WaitFor([&] {
      absl::MutexLock lock(&mu_);
      auto it = answers_.find(nonce);
      if (it != answers_.end()) error = it->second;
      return error.has_value();
    })) << "no answer to response "
        << nonce;
    ASSERT_EQ(*error, "") << "NACK of response " << nonce;
  }

  // Cluster `name` (EDS, its ClusterLoadAssignment "name-cla", `extra`
  // text fields) with `backends` in one locality.
  void AddCluster(const std::string& name,
                  const std::vector<const EchoBackend*>& backends,
                  const std::string& extra = "") {
    Set(Parse<Cluster>(absl::StrCat(
        "name: \"", name, "\" type: EDS ", extra,
        " eds_cluster_config { eds_config { ads {} } service_name: \"", name,
        "-cla\" }")));
    Set(Cla(name, backends));
  }
  static ClusterLoadAssignment Cla(
      const std::string& cluster,
      const std::vector<const EchoBackend*>& backends) {
    ClusterLoadAssignment cla;
    cla.set_cluster_name(cluster + "-cla");
    auto* locality = cla.add_endpoints();
    locality->mutable_locality()->set_zone("z1");
    locality->mutable_load_balancing_weight()->set_value(1);
    for (const EchoBackend* b : backends) {
      auto* socket = locality->add_lb_endpoints()
                         ->mutable_endpoint()
                         ->mutable_address()
                         ->mutable_socket_address();
      socket->set_address("127.0.0.1");
      socket->set_port_value(static_cast<uint32_t>(b->port()));
    }
    return cla;
  }

  // kTarget served by MakeListener, `routes` and kCluster over `backends`.
  void ServeOneCluster(const Backends& backends,
                       const RouteConfiguration& routes = OneHost(To(kCluster)),
                       const Listener& listener = MakeListener()) {
    Set(listener);
    Set(routes);
    std::vector<const EchoBackend*> all;
    for (const auto& b : backends) all.push_back(b.get());
    AddCluster(kCluster, all);
  }

  // A Mesh whose only source is the scripted server, and channel_ to
  // xds:///kTarget, once the target has endpoints.
  void MakeMesh(const ChannelOptions& options = {}) {
    XdsOptions xds;
    xds.bootstrap_json = absl::StrCat(
        R"({"xds_servers": [{"server_uri": ")", server_->address(),
        R"(", "channel_creds": [{"type": "insecure"}],)",
        R"( "server_features": ["xds_v3"]}],)",
        R"( "node": {"id": "mesh-test", "metadata": {"GENERATOR": "grpc"}}})");
    xds.backoff_min = absl::Milliseconds(50);
    xds.backoff_max = absl::Milliseconds(200);
    auto source = NewXdsDiscovery(xds);
    ASSERT_TRUE(source.ok()) << source.status();
    MeshOptions mesh_options;
    mesh_options.discovery = *source;
    auto mesh = Mesh::Create(mesh_options);
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
    channel_ = NewChannel(options);
    ASSERT_NE(channel_, nullptr);
    absl::Status ready = channel_->WaitForEndpoints(absl::Seconds(10));
    ASSERT_TRUE(ready.ok()) << ready;
  }
  std::unique_ptr<Channel> NewChannel(const ChannelOptions& options = {}) {
    auto channel = mesh_->NewChannel(absl::StrCat("xds:///", kTarget), options);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return channel.ok() ? *std::move(channel) : nullptr;
  }

  CallResult Call(const std::string& method = kSay, Metadata metadata = {}) {
    CallOptions options;
    options.metadata = std::move(metadata);
    return channel_->CallRaw(method, "hello", options);
  }

  struct Type {
    bool asked = false;
    std::vector<std::string> names;  // as last asked for
    std::map<std::string, std::shared_ptr<const google::protobuf::Message>>
        resources;
    int version = 0;
  };

  std::unique_ptr<ScriptedAdsServer> server_;
  std::thread responder_;
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  std::map<std::string, Type> types_ ABSL_GUARDED_BY(mu_);
  // Every ACK ("") or NACK (its error) by response nonce.
  std::map<std::string, std::string> answers_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
};

TEST_F(XdsDataPathTest, MaxRequestsRefusesCallsBeyondTheCircuitBreaker) {
  Backends b = testing::StartBackends(1);
  b[0]->set_delay(absl::Milliseconds(300));
  Set(MakeListener());
  Set(OneHost(To(kCluster)));
  AddCluster(kCluster, {b[0].get()},
             "circuit_breakers { thresholds { max_requests { value: 2 } } }");
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  struct Tally {
    absl::Mutex mu;
    int ok = 0;
    int refused = 0;
    std::vector<std::string> other;
  };
  auto tally = std::make_shared<Tally>();
  constexpr int kCalls = 6;
  for (int i = 0; i < kCalls; ++i) {
    channel_->CallRawAsync(kSay, "hello", {}, [tally](CallResult r) {
      absl::MutexLock lock(&tally->mu);
      if (r.status.ok()) {
        ++tally->ok;
      } else if (r.status.code() == absl::StatusCode::kUnavailable &&
                 absl::StrContains(r.status.message(), "max_requests")) {
        ++tally->refused;
      } else {
        tally->other.push_back(r.status.ToString());
      }
    });
  }
  ASSERT_TRUE(testing::WaitFor([&] {
    absl::MutexLock lock(&tally->mu);
    return tally->ok + tally->refused + static_cast<int>(tally->other.size()) ==
           kCalls;
  }));
  absl::MutexLock lock(&tally->mu);
  EXPECT_TRUE(tally->other.empty()) << tally->other.front();
  // Started at once, 300 ms each: 2 in flight, 4 refused, unless the
  // scheduler delays a start past the end of another call.
  EXPECT_GE(tally->ok, 2);
  EXPECT_GE(tally->refused, 1);
  EXPECT_EQ(b[0]->calls_received(), tally->ok);
  EXPECT_THAT(mesh_->Describe(),
              HasSubstr(absl::StrCat(
                  "\"circuit_breaker_refusals\":", tally->refused, ",")));
}

TEST_F(XdsDataPathTest, DropOverloadsDropTheirShare) {
  Backends b = testing::StartBackends(1);
  ServeOneCluster(b);
  auto dropping = [&](uint32_t percent) {
    ClusterLoadAssignment cla = Cla(kCluster, {b[0].get()});
    auto* drop = cla.mutable_policy()->add_drop_overloads();
    drop->set_category("lb");
    drop->mutable_drop_percentage()->set_numerator(percent);
    drop->mutable_drop_percentage()->set_denominator(
        envoy::type::v3::FractionalPercent::HUNDRED);
    return cla;
  };
  Set(dropping(100));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  auto is_drop = [](const CallResult& r) {
    return r.status.code() == absl::StatusCode::kUnavailable &&
           absl::StrContains(r.status.message(), "'lb'");
  };
  constexpr int kAll = 20;
  for (int i = 0; i < kAll; ++i) {
    CallResult r = Call();
    EXPECT_TRUE(is_drop(r)) << i << ": " << r.status;
  }
  EXPECT_EQ(b[0]->calls_received(), 0);
  ASSERT_NO_FATAL_FAILURE(Update(dropping(50)));
  constexpr int kCalls = 400;
  int dropped = 0;
  for (int i = 0; i < kCalls; ++i) {
    CallResult r = Call();
    if (is_drop(r)) {
      ++dropped;
    } else {
      EXPECT_TRUE(r.status.ok()) << i << ": " << r.status;
    }
  }
  ExpectShare(dropped, kCalls, 0.5);
  EXPECT_EQ(b[0]->calls_received(), kCalls - dropped);
  const std::string described = mesh_->Describe();
  EXPECT_THAT(described,
              HasSubstr(R"({"category":"lb","per_million":500000})"));
  EXPECT_THAT(described,
              HasSubstr(absl::StrCat("\"dropped\":", kAll + dropped, "}")));
}

TEST_F(XdsDataPathTest, FaultAbortFailsItsShareOfCalls) {
  Backends b = testing::StartBackends(1);
  auto aborting = [](int percent) {
    return absl::StrCat(
        "abort { grpc_status: 14 percentage { numerator: ", percent, " } }");
  };
  ServeOneCluster(b,
                  OneHost(To(kCluster, R"(path: "/test.Echo/Spared")", "",
                             FaultOverride(aborting(0))) +
                          To(kCluster)),
                  MakeListener(aborting(100)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  for (int i = 0; i < 20; ++i) {
    CallResult r = Call();
    EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
    EXPECT_THAT(r.status.message(), HasSubstr("fault"));
    CallResult spared = Call("/test.Echo/Spared");
    EXPECT_TRUE(spared.status.ok()) << i << ": " << spared.status;
  }
  EXPECT_EQ(b[0]->calls_received(), 20);
  ASSERT_NO_FATAL_FAILURE(Update(MakeListener(aborting(50))));
  constexpr int kCalls = 400;
  int aborted = 0;
  for (int i = 0; i < kCalls; ++i) {
    CallResult r = Call();
    if (r.status.code() == absl::StatusCode::kUnavailable) {
      ++aborted;
    } else {
      EXPECT_TRUE(r.status.ok()) << i << ": " << r.status;
    }
  }
  ExpectShare(aborted, kCalls, 0.5);
  EXPECT_EQ(b[0]->calls_received(), 20 + kCalls - aborted);
}

TEST_F(XdsDataPathTest, FaultDelayDelaysItsCalls) {
  Backends b = testing::StartBackends(1);
  constexpr absl::Duration kDelay = absl::Milliseconds(200);
  ServeOneCluster(b, OneHost(To(kCluster)),
                  MakeListener("delay { fixed_delay { nanos: 200000000 } "
                               "percentage { numerator: 100 } }"));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  for (int i = 0; i < 3; ++i) {
    const absl::Time start = absl::Now();
    CallResult r = Call();
    const absl::Duration took = absl::Now() - start;
    EXPECT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_GE(took, kDelay) << i;
  }
  EXPECT_EQ(b[0]->calls_received(), 3);
}

TEST_F(XdsDataPathTest, HeaderAbortIsAppliedWhenTheRequestAsks) {
  Backends b = testing::StartBackends(1);
  ServeOneCluster(
      b, OneHost(To(kCluster)),
      MakeListener("abort { header_abort {} percentage { numerator: 100 } }"));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  CallResult asked = Call(kSay, {{"x-envoy-fault-abort-grpc-request", "8"}});
  EXPECT_EQ(asked.status.code(), absl::StatusCode::kResourceExhausted)
      << asked.status;
  CallResult plain = Call();
  EXPECT_TRUE(plain.status.ok()) << plain.status;
  EXPECT_EQ(b[0]->calls_received(), 1);
}

TEST_F(XdsDataPathTest, RetryPolicyRetriesListedCodesOnAnotherEndpoint) {
  Backends b = testing::StartBackends(2);
  b[1]->set_status(grpc::StatusCode::UNAVAILABLE);
  ServeOneCluster(b, OneHost(To(kCluster, R"(path: "/test.Echo/Retried")",
                                R"(retry_policy { retry_on: "unavailable" )"
                                "num_retries { value: 2 } }") +
                             To(kCluster)));
  // Round robin tries the failing endpoint within the first calls (P2C
  // could settle on the good one at once); after a failure it is ejected
  // for a while, which leaves later calls nothing to retry.
  ChannelOptions round_robin;
  round_robin.balancer.kind = BalancerKind::kRoundRobin;
  ASSERT_NO_FATAL_FAILURE(MakeMesh(round_robin));
  for (int i = 0; i < 100; ++i) {
    CallResult r = Call("/test.Echo/Retried");
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.endpoint, b[0]->address()) << i;
  }
  EXPECT_GE(b[1]->calls_received(), 1) << "no call was retried";
  // A fresh balancer (no ejection yet) on the route without a policy.
  std::unique_ptr<Channel> other = NewChannel(round_robin);
  ASSERT_NE(other, nullptr);
  int failed = 0;
  for (int i = 0; i < 10; ++i) {
    CallResult r = other->CallRaw(kSay, "hello");
    if (r.status.code() == absl::StatusCode::kUnavailable) ++failed;
  }
  EXPECT_GE(failed, 1);
}

TEST_F(XdsDataPathTest, RetriesStayWithinTheRetryBudget) {
  Backends b = testing::StartBackends(2);
  for (auto& backend : b) backend->set_status(grpc::StatusCode::UNAVAILABLE);
  ServeOneCluster(b, OneHost(To(kCluster, "",
                                R"(retry_policy { retry_on: "unavailable" )"
                                "num_retries { value: 4 } }")));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  constexpr int kCalls = 200;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kCalls; ++i) {
    CallResult r = Call();
    EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  }
  const double elapsed = absl::ToDoubleSeconds(absl::Now() - start);
  const int64_t attempts = b[0]->calls_received() + b[1]->calls_received();
  // The default budget (20% of requests plus 10 retries a second, over a
  // 10 s window): every window since the start allows its share, so over
  // `elapsed` at most 0.2 × requests + 10 × (elapsed + 10) retries.
  const double bound = kCalls + 0.2 * kCalls + 10 * (elapsed + 10);
  EXPECT_LE(attempts, bound) << "elapsed " << elapsed << " s";
  EXPECT_GT(attempts, kCalls) << "no retry";
}

TEST_F(XdsDataPathTest, EndpointUpdatesAreFollowedWhileCallsFlow) {
  Backends b = testing::StartBackends(3);
  ServeOneCluster(b);
  Set(Cla(kCluster, {b[0].get(), b[1].get()}));  // 2 comes with the update
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  constexpr int kCalls = 600;
  constexpr int kUpdateAt = 200;
  int applied_at = -1;  // the calls from here on start after the update
  testing::Load load(*channel_, kCalls, 4);
  load.Run([&](int i) {
    if (i != kUpdateAt) return;
    ASSERT_NO_FATAL_FAILURE(Update(Cla(kCluster, {b[1].get(), b[2].get()})));
    applied_at = i;
  });
  ASSERT_EQ(applied_at, kUpdateAt);
  EXPECT_EQ(load.CountOk(), kCalls);
  int on_0_after = 0;
  for (int i = applied_at; i < kCalls; ++i) {
    on_0_after += load.results()[i].endpoint == b[0]->address();
  }
  EXPECT_EQ(on_0_after, 0);
  EXPECT_GT(load.CountOn(b[2]->address()), 0);
  EXPECT_EQ(b[0]->calls_received(), load.CountOn(b[0]->address()));
  EXPECT_GT(b[0]->calls_received(), 0);
}

}  // namespace
}  // namespace mesh

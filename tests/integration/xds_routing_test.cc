// mesh's xDS client routing calls: a scripted ADS server on 127.0.0.1
// serves Listener, RouteConfiguration, Cluster and ClusterLoadAssignment
// resources built here, and calls on real EchoBackends check that the
// routes decide where each call goes and how long it may take (docs/xds.md,
// "What each resource does in mesh"): weighted clusters, the virtual host
// chosen by domain, header, prefix, path and regex matches,
// max_stream_duration, and actions mesh cannot carry out. The backend
// policies (circuit breakers, drops, faults, retries, endpoint updates) are
// in xds_data_path_test.cc (the same fixture).
//
// The server answers every request with the resources set here (see
// XdsRoutingTest::Serve); statistical checks allow 6 standard deviations.
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

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
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

// The Listener for kTarget over RDS kRoutes; `hcm` (text) adds to its
// HttpConnectionManager.
Listener MakeListener(const std::string& hcm = "") {
  auto manager = Parse<HttpConnectionManager>(
      absl::StrCat(R"(rds { config_source { ads {} } route_config_name: ")",
                   kRoutes, R"(" } )", hcm));
  HttpFilter* router = manager.add_http_filters();
  router->set_name("router");
  router->mutable_typed_config()->PackFrom(Router());
  Listener listener;
  listener.set_name(kTarget);
  listener.mutable_api_listener()->mutable_api_listener()->PackFrom(manager);
  return listener;
}

// kRoutes with `vhosts` (text); Host: one virtual host with `routes` (text)
// for `domains` (a text format list: ["a", "b"]).
RouteConfiguration MakeRoutes(const std::string& vhosts) {
  return Parse<RouteConfiguration>(
      absl::StrCat("name: \"", kRoutes, "\" ", vhosts));
}
std::string Host(const std::string& name, const std::string& domains,
                 const std::string& routes) {
  return absl::StrCat("virtual_hosts { name: \"", name, "\" domains: ", domains,
                      " ", routes, " }");
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
  return MakeRoutes(Host("svc", R"(["*"])", routes));
}

// Within 6 standard deviations of a binomial(n, p) draw's mean.
void ExpectShare(int got, int n, double p) {
  const double mean = n * p;
  const double sigma = std::sqrt(n * p * (1 - p));
  EXPECT_NEAR(got, mean, 6 * sigma)
      << got << " of " << n << ", expected share " << p << " (6 sigma)";
}

class XdsRoutingTest : public ::testing::Test {
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
    for (const EchoBackend* b : backends) cluster_of_[b->address()] = name;
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
  // The cluster whose backend served `r`, or its status.
  std::string ServedBy(const CallResult& r) const {
    if (!r.status.ok()) return r.status.ToString();
    auto it = cluster_of_.find(r.endpoint);
    return it == cluster_of_.end() ? "unknown " + r.endpoint : it->second;
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
  std::map<std::string, std::string> cluster_of_;  // backend → cluster
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
};

TEST_F(XdsRoutingTest, WeightedClustersSplitCallsByWeight) {
  Backends b = testing::StartBackends(2);
  Set(MakeListener());
  Set(OneHost(R"(routes { match { prefix: "" } route { weighted_clusters {
      clusters { name: "a" weight { value: 3 } }
      clusters { name: "b" weight { value: 1 } }
      total_weight { value: 4 } } } })"));
  AddCluster("a", {b[0].get()});
  AddCluster("b", {b[1].get()});
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  constexpr int kCalls = 800;
  std::map<std::string, int> served;
  for (int i = 0; i < kCalls; ++i) ++served[ServedBy(Call())];
  EXPECT_EQ(served["a"] + served["b"], kCalls);
  ExpectShare(served["a"], kCalls, 0.75);
  EXPECT_EQ(b[0]->calls_received(), served["a"]);
  EXPECT_EQ(b[1]->calls_received(), served["b"]);
}

TEST_F(XdsRoutingTest, VirtualHostIsChosenByDomain) {
  Backends b = testing::StartBackends(4);
  const char* names[] = {"exact", "any", "suffix", "prefix"};
  for (int i = 0; i < 4; ++i) AddCluster(names[i], {b[i].get()});
  Set(MakeListener());
  // The catch-all comes first: the exact domain wins by kind, not order.
  Set(MakeRoutes(
      Host("any", R"(["*"])", To("any")) +
      Host("exact", R"(["other.test:7001", "SVC.test:7001"])", To("exact"))));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ServedBy(Call()), "exact") << i;
  // A suffix pattern beats a prefix pattern, whatever their order.
  ASSERT_NO_FATAL_FAILURE(
      Update(MakeRoutes(Host("prefix", R"(["svc.*"])", To("prefix")) +
                        Host("suffix", R"(["*.test:7001"])", To("suffix")))));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ServedBy(Call()), "suffix") << i;
  EXPECT_EQ(b[1]->calls_received(), 0);
  EXPECT_EQ(b[3]->calls_received(), 0);
}

TEST_F(XdsRoutingTest, HeaderPrefixPathAndRegexRoutesRouteTheirCalls) {
  Backends b = testing::StartBackends(6);
  const char* names[] = {"header", "prefix", "path",
                         "regex",  "nocase", "default"};
  for (int i = 0; i < 6; ++i) AddCluster(names[i], {b[i].get()});
  Set(MakeListener());
  Set(OneHost(
      To("header",
         R"(prefix: "" headers { name: "x-route" exact_match: "h" })") +
      To("prefix", R"(prefix: "/test.Echo/")") +
      To("path", R"(path: "/other.Svc/Exact")") +
      To("regex", R"(safe_regex { regex: "/regex[.]Svc/M[0-9]+" })") +
      To("nocase", R"(prefix: "/upper.svc/" case_sensitive { value: false })") +
      To("default")));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const std::pair<std::string, std::string> cases[] = {
      {kSay, "prefix"},
      {"/other.Svc/Exact", "path"},
      {"/other.Svc/Exactly", "default"},
      {"/regex.Svc/M42", "regex"},
      {"/regex.Svc/M42x", "default"},
      {"/UPPER.SVC/Do", "nocase"},
      {"/TEST.ECHO/Say", "default"},  // prefix is case-sensitive by default
  };
  for (const auto& [method, cluster] : cases) {
    EXPECT_EQ(ServedBy(Call(method)), cluster) << method;
  }
  // The header route comes first: it wins over the path routes.
  EXPECT_EQ(ServedBy(Call(kSay, {{"x-route", "h"}})), "header");
  EXPECT_EQ(ServedBy(Call("/other.Svc/Exact", {{"x-route", "h"}})), "header");
  EXPECT_EQ(ServedBy(Call(kSay, {{"x-route", "H"}})), "prefix");
}

TEST_F(XdsRoutingTest, RouteMaxStreamDurationIsTheCallsDeadline) {
  Backends b = testing::StartBackends(1);
  b[0]->set_delay(absl::Seconds(2));
  auto limit = [](const std::string& text) {
    return absl::StrCat("max_stream_duration { ", text, " }");
  };
  ServeOneCluster(
      b,
      OneHost(To(kCluster, R"(path: "/test.Echo/Route")",
                 limit("max_stream_duration { nanos: 200000000 }")) +
              To(kCluster, R"(path: "/test.Echo/HeaderMax")",
                 limit("max_stream_duration { seconds: 5 } "
                       "grpc_timeout_header_max { nanos: 200000000 }")) +
              To(kCluster, R"(path: "/test.Echo/Own")",
                 limit("max_stream_duration { seconds: 5 }")) +
              To(kCluster)),
      MakeListener("common_http_protocol_options { max_stream_duration { "
                   "nanos: 300000000 } }"));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  const std::pair<std::string, absl::Duration> expired[] = {
      {"/test.Echo/Route", absl::Milliseconds(200)},
      {"/test.Echo/HeaderMax", absl::Milliseconds(200)},
      {kSay, absl::Milliseconds(300)},  // the listener's
  };
  for (const auto& [method, deadline] : expired) {
    const absl::Time start = absl::Now();
    CallResult r = Call(method);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kDeadlineExceeded)
        << method << ": " << r.status;
    // gRPC keeps the deadline in whole milliseconds of its own clock: the
    // call may end a little before it by absl::Now() (2 ms seen once).
    EXPECT_GE(absl::Now() - start, deadline - absl::Milliseconds(5)) << method;
  }
  // The route's own 5 s, not the listener's 300 ms.
  CallResult own = Call("/test.Echo/Own");
  EXPECT_TRUE(own.status.ok()) << own.status;
}

TEST_F(XdsRoutingTest, AnUnsupportedActionFailsItsCallsNamingIt) {
  Backends b = testing::StartBackends(1);
  ServeOneCluster(b, OneHost(R"(routes { name: "moved" match { path:
                                 "/test.Echo/Moved" } redirect {} })" +
                             To(kCluster)));
  ASSERT_NO_FATAL_FAILURE(MakeMesh());
  CallResult moved = Call("/test.Echo/Moved");
  EXPECT_EQ(moved.status.code(), absl::StatusCode::kUnavailable)
      << moved.status;
  EXPECT_THAT(moved.status.message(), HasSubstr("redirect"));
  EXPECT_THAT(moved.status.message(), HasSubstr("'moved'"));
  EXPECT_TRUE(Call().status.ok());
  EXPECT_EQ(b[0]->calls_received(), 1);
}

}  // namespace
}  // namespace mesh

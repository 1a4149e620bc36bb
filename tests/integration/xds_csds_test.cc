// CSDS (envoy.service.status.v3.ClientStatusDiscoveryService) on a Mesh's
// tap port: a real gRPC client on 127.0.0.1 asks a Mesh whose xDS client is
// fed by a scripted ADS server (an AdsResponder) what the client holds, per
// resource: ACKed with version, time and contents; NACKed with the error
// while the good version stays; REQUESTED; DOES_NOT_EXIST after the
// resource timeout. A Mesh without xDS serves no CSDS; a peer that tap
// refuses is refused CSDS too.
#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "envoy/service/status/v3/csds.grpc.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "mesh/xds.h"
#include "src/discovery/common/builtin_source.h"
#include "src/discovery/xds/xds_client.h"
#include "tests/support/scripted_ads_server.h"
#include "tests/support/tap_fixtures.h"
#include "tests/support/test_support.h"
#include "tests/support/xds_fixtures.h"

namespace mesh {
namespace {

namespace csds = ::envoy::service::status::v3;
namespace admin = ::envoy::admin::v3;
using csds::ClientConfig;
using csds::ClientStatusRequest;
using csds::ClientStatusResponse;
using envoy::config::cluster::v3::Cluster;
using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::config::listener::v3::Listener;
using envoy::config::route::v3::RouteConfiguration;
using GenericXdsConfig = csds::ClientConfig::GenericXdsConfig;
using google::protobuf::util::MessageDifferencer;
using internal::xds::ResourceType;
using internal::xds::TypeUrl;
using testing::AdsResponder;
using testing::Backends;
using ::testing::HasSubstr;
using testing::ScriptedAdsServer;

const std::string kLds = TypeUrl(ResourceType::kListener);
const std::string kRds = TypeUrl(ResourceType::kRouteConfig);
const std::string kCds = TypeUrl(ResourceType::kCluster);
const std::string kEds = TypeUrl(ResourceType::kEndpoints);

constexpr char kTarget[] = "svc.test:7001";
constexpr char kRoutes[] = "svc-routes";
constexpr char kCluster[] = "svc-cluster";
constexpr char kCla[] = "svc-cla";
constexpr char kNobody[] = "nobody.test:7001";  // never served

absl::Time TimeOf(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

std::unique_ptr<csds::ClientStatusDiscoveryService::Stub> StubFor(
    const std::shared_ptr<grpc::Channel>& channel) {
  return csds::ClientStatusDiscoveryService::NewStub(channel);
}

std::shared_ptr<grpc::Channel> PlainChannel(const std::string& target) {
  return grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
}

// FetchClientStatus over `channel`, bounded by 10 s.
grpc::Status Fetch(const std::shared_ptr<grpc::Channel>& channel,
                   bool exclude_contents, ClientStatusResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  ClientStatusRequest request;
  request.set_exclude_resource_contents(exclude_contents);
  return StubFor(channel)->FetchClientStatus(&context, request, response);
}

// The client whose node id is `node_id` in `response`, or null. (The
// process may hold other clients: CSDS shows every one.)
const ClientConfig* ClientOf(const ClientStatusResponse& response,
                             const std::string& node_id) {
  const ClientConfig* found = nullptr;
  for (const ClientConfig& c : response.config()) {
    if (c.node().id() != node_id) continue;
    EXPECT_EQ(found, nullptr) << "two clients with node id " << node_id;
    found = &c;
  }
  return found;
}

// The resource `type_url` / `name` of `client`, or null.
const GenericXdsConfig* ResourceOf(const ClientConfig& client,
                                   const std::string& type_url,
                                   const std::string& name) {
  for (const GenericXdsConfig& r : client.generic_xds_configs()) {
    if (r.type_url() == type_url && r.name() == name) return &r;
  }
  return nullptr;
}

// `config` holds `want` (of its type) as xds_config.
template <typename T>
void ExpectContents(const GenericXdsConfig& config, const T& want) {
  ASSERT_TRUE(config.has_xds_config()) << config.name();
  EXPECT_EQ(config.xds_config().type_url(), config.type_url());
  T got;
  ASSERT_TRUE(config.xds_config().UnpackTo(&got)) << config.name();
  EXPECT_TRUE(MessageDifferencer::Equals(got, want))
      << config.name() << ": " << got.ShortDebugString();
}

class XdsCsdsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = ScriptedAdsServer::Start();
    responder_ = std::make_unique<AdsResponder>(*server_);
  }
  void TearDown() override {
    channel_.reset();
    mesh_.reset();
    responder_.reset();
    server_.reset();
  }

  // This test's node id: CSDS lists every client of the process, so each
  // test picks out its own by name.
  static std::string NodeId() {
    return absl::StrCat(
        "csds-",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  static testing::XdsMeshOptions Options(
      absl::Duration resource_timeout = absl::Seconds(15)) {
    testing::XdsMeshOptions options;
    options.node = absl::StrCat(R"({"id": ")", NodeId(),
                                R"(", "cluster": "csds-cluster",)",
                                R"( "metadata": {"GENERATOR": "grpc"}})");
    options.resource_timeout = resource_timeout;
    options.tap_address = "127.0.0.1:0";
    return options;
  }

  // mesh_ over the scripted server, serving tap (and so CSDS) on 127.0.0.1.
  void MakeMesh(absl::Duration resource_timeout = absl::Seconds(15)) {
    auto mesh =
        testing::MakeXdsMesh(server_->address(), Options(resource_timeout));
    ASSERT_TRUE(mesh.ok()) << mesh.status();
    mesh_ = *std::move(mesh);
  }

  // Serves kTarget (Listener kTarget → kRoutes → kCluster → kCla over
  // backends_), makes mesh_ and channel_ to it, and makes one call, so that
  // all four resources are ACKed (each at version "1").
  void ServeAndCall() {
    backends_ = testing::StartBackends(1);
    responder_->Set(listener_);
    responder_->Set(routes_);
    responder_->Set(cluster_);
    cla_ = testing::ClaOf(kCla, backends_);
    responder_->Set(cla_);
    ASSERT_NO_FATAL_FAILURE(MakeMesh());
    auto channel = mesh_->NewChannel(absl::StrCat("xds:///", kTarget));
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
    absl::Status ready = channel_->WaitForEndpoints(absl::Seconds(10));
    ASSERT_TRUE(ready.ok()) << ready;
    CallResult r = channel_->CallRaw("/test.Echo/Say", "hello");
    ASSERT_TRUE(r.status.ok()) << r.status;
  }

  // A channel to `target` on mesh_, kept until the test ends.
  void Watch(const std::string& target) {
    auto channel = mesh_->NewChannel(absl::StrCat("xds:///", target));
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
  }

  std::string TapTarget() const {
    return absl::StrCat("127.0.0.1:", mesh_->tap_port());
  }

  // Fetches this test's client from the tap port; fatal failures if the
  // call fails or the client is not listed.
  ClientConfig FetchMine(bool exclude_contents = false) {
    ClientStatusResponse response;
    grpc::Status s =
        Fetch(PlainChannel(TapTarget()), exclude_contents, &response);
    EXPECT_TRUE(s.ok()) << s.error_code() << ": " << s.error_message();
    const ClientConfig* mine = ClientOf(response, NodeId());
    EXPECT_NE(mine, nullptr) << response.ShortDebugString();
    return mine != nullptr ? *mine : ClientConfig();
  }

  // Fetches until resource `type_url` / `name` of this test's client is
  // there and `pred` holds of it, for at most 10 s; the last one seen
  // (nullopt, and a test failure, if it never is).
  std::optional<GenericXdsConfig> AwaitResource(
      const std::string& type_url, const std::string& name,
      const std::function<bool(const GenericXdsConfig&)>& pred) {
    std::optional<GenericXdsConfig> last;
    const std::shared_ptr<grpc::Channel> channel = PlainChannel(TapTarget());
    const bool ok = testing::WaitFor(
        [&] {
          ClientStatusResponse response;
          if (!Fetch(channel, false, &response).ok()) {
            return false;
          }
          const ClientConfig* mine = ClientOf(response, NodeId());
          if (mine == nullptr) return false;
          const GenericXdsConfig* r = ResourceOf(*mine, type_url, name);
          if (r == nullptr) return false;
          last = *r;
          return pred(*r);
        },
        absl::Seconds(10));
    if (!ok) {
      ADD_FAILURE() << "resource " << name << " of " << type_url
                    << " never as expected; last seen: "
                    << (last ? last->ShortDebugString() : "none");
      return std::nullopt;
    }
    return last;
  }

  static bool HasStatus(const GenericXdsConfig& r,
                        admin::ClientResourceStatus status) {
    return r.client_status() == status;
  }

  const Listener listener_ = testing::MakeListener(kTarget, kRoutes);
  const RouteConfiguration routes_ =
      testing::OneHostRoutes(kRoutes, testing::RouteTo(kCluster));
  const Cluster cluster_ = testing::MakeEdsCluster(kCluster, kCla);
  ClusterLoadAssignment cla_;
  Backends backends_;
  std::unique_ptr<ScriptedAdsServer> server_;
  std::unique_ptr<AdsResponder> responder_;
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
};

TEST_F(XdsCsdsTest, EachResourceOfAResolvedCallIsAckedWithVersionTimeAndBody) {
  const absl::Time before = absl::Now();
  ASSERT_NO_FATAL_FAILURE(ServeAndCall());
  const absl::Time after = absl::Now();
  const ClientConfig mine = FetchMine();
  EXPECT_EQ(mine.node().cluster(), "csds-cluster");
  EXPECT_EQ(mine.node().user_agent_name(), "mesh");
  EXPECT_EQ(mine.generic_xds_configs_size(), 4) << mine.ShortDebugString();
  struct Want {
    std::string type_url;
    std::string name;
    const google::protobuf::Message* body;
  };
  for (const Want& want :
       {Want{kLds, kTarget, &listener_}, Want{kRds, kRoutes, &routes_},
        Want{kCds, kCluster, &cluster_}, Want{kEds, kCla, &cla_}}) {
    SCOPED_TRACE(want.name);
    const GenericXdsConfig* r = ResourceOf(mine, want.type_url, want.name);
    ASSERT_NE(r, nullptr) << mine.ShortDebugString();
    EXPECT_EQ(r->client_status(), admin::ACKED);
    EXPECT_EQ(r->version_info(), "1");
    ASSERT_TRUE(r->has_last_updated());
    EXPECT_GE(TimeOf(r->last_updated()), before);
    EXPECT_LE(TimeOf(r->last_updated()), after);
    EXPECT_FALSE(r->has_error_state());
    EXPECT_EQ(r->config_status(), csds::UNKNOWN);  // a server's field
    ASSERT_TRUE(r->has_xds_config());
    EXPECT_EQ(r->xds_config().type_url(), want.type_url);
    std::unique_ptr<google::protobuf::Message> got(want.body->New());
    ASSERT_TRUE(got->ParseFromString(r->xds_config().value()));
    EXPECT_TRUE(MessageDifferencer::Equals(*got, *want.body))
        << got->ShortDebugString();
  }
}

TEST_F(XdsCsdsTest, ExcludingContentsLeavesOutTheResourcesAlone) {
  ASSERT_NO_FATAL_FAILURE(ServeAndCall());
  const ClientConfig mine = FetchMine(/*exclude_contents=*/true);
  ASSERT_EQ(mine.generic_xds_configs_size(), 4) << mine.ShortDebugString();
  for (const GenericXdsConfig& r : mine.generic_xds_configs()) {
    EXPECT_EQ(r.client_status(), admin::ACKED) << r.name();
    EXPECT_EQ(r.version_info(), "1") << r.name();
    EXPECT_TRUE(r.has_last_updated()) << r.name();
    EXPECT_FALSE(r.has_xds_config()) << r.name();
  }
}

TEST_F(XdsCsdsTest, ANackedUpdateShowsItsErrorAndTheGoodVersionStays) {
  ASSERT_NO_FATAL_FAILURE(ServeAndCall());
  const RouteConfiguration bad = testing::OneHostRoutes(
      kRoutes,
      absl::StrCat(
          R"(routes { match { safe_regex { regex: "/test.Echo/(" } } )",
          R"(route { cluster: ")", kCluster, R"(" } })"));
  const absl::Time sent = absl::Now();
  responder_->Set(bad);  // version "2"
  std::optional<GenericXdsConfig> r = AwaitResource(
      kRds, kRoutes,
      [](const GenericXdsConfig& c) { return HasStatus(c, admin::NACKED); });
  ASSERT_TRUE(r.has_value());
  // The rejected update: why, which version, when.
  ASSERT_TRUE(r->has_error_state());
  EXPECT_THAT(r->error_state().details(), HasSubstr("safe_regex"));
  EXPECT_THAT(r->error_state().details(), HasSubstr("/test.Echo/("));
  EXPECT_EQ(r->error_state().version_info(), "2");
  EXPECT_GE(TimeOf(r->error_state().last_update_attempt()), sent);
  // The accepted one, still in use.
  EXPECT_EQ(r->version_info(), "1");
  EXPECT_LT(TimeOf(r->last_updated()), sent);
  ExpectContents(*r, routes_);
  const ClientConfig mine = FetchMine();
  const GenericXdsConfig* listener = ResourceOf(mine, kLds, kTarget);
  ASSERT_NE(listener, nullptr);
  EXPECT_EQ(listener->client_status(), admin::ACKED);
  EXPECT_FALSE(listener->has_error_state());
  CallResult call = channel_->CallRaw("/test.Echo/Say", "hello");
  EXPECT_TRUE(call.status.ok()) << call.status;
  // A good update clears the error.
  RouteConfiguration fixed = routes_;
  fixed.mutable_virtual_hosts(0)->set_name("svc-fixed");
  responder_->Set(fixed);  // version "3"
  r = AwaitResource(kRds, kRoutes, [](const GenericXdsConfig& c) {
    return HasStatus(c, admin::ACKED);
  });
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->version_info(), "3");
  EXPECT_FALSE(r->has_error_state());
  ExpectContents(*r, fixed);
}

TEST_F(XdsCsdsTest, ANameAskedForAndNotAnsweredIsRequested) {
  ASSERT_NO_FATAL_FAILURE(MakeMesh());  // resource timeout 15 s
  ASSERT_NO_FATAL_FAILURE(Watch(kNobody));
  std::optional<GenericXdsConfig> r = AwaitResource(
      kLds, kNobody, [](const GenericXdsConfig&) { return true; });
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->client_status(), admin::REQUESTED);
  EXPECT_EQ(r->version_info(), "");
  EXPECT_FALSE(r->has_last_updated());
  EXPECT_FALSE(r->has_xds_config());
  EXPECT_FALSE(r->has_error_state());
}

TEST_F(XdsCsdsTest, ANameNeverSentDoesNotExistAfterTheResourceTimeout) {
  constexpr absl::Duration kTimeout = absl::Milliseconds(300);
  ASSERT_NO_FATAL_FAILURE(MakeMesh(kTimeout));
  const absl::Time start = absl::Now();
  ASSERT_NO_FATAL_FAILURE(Watch(kNobody));
  std::optional<GenericXdsConfig> r =
      AwaitResource(kLds, kNobody, [](const GenericXdsConfig& c) {
        return HasStatus(c, admin::DOES_NOT_EXIST);
      });
  ASSERT_TRUE(r.has_value());
  EXPECT_GE(absl::Now() - start, kTimeout);
  EXPECT_EQ(r->version_info(), "");
  EXPECT_FALSE(r->has_xds_config());
  EXPECT_FALSE(r->has_error_state());
}

TEST_F(XdsCsdsTest, StreamClientStatusAnswersEachRequestOnOneStream) {
  ASSERT_NO_FATAL_FAILURE(ServeAndCall());
  auto stub = StubFor(PlainChannel(TapTarget()));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  auto stream = stub->StreamClientStatus(&context);
  for (bool exclude : {false, true}) {
    SCOPED_TRACE(exclude ? "contents excluded" : "with contents");
    ClientStatusRequest request;
    request.set_exclude_resource_contents(exclude);
    ASSERT_TRUE(stream->Write(request));
    ClientStatusResponse response;
    ASSERT_TRUE(stream->Read(&response));
    const ClientConfig* mine = ClientOf(response, NodeId());
    ASSERT_NE(mine, nullptr);
    ASSERT_EQ(mine->generic_xds_configs_size(), 4);
    for (const GenericXdsConfig& r : mine->generic_xds_configs()) {
      EXPECT_EQ(r.client_status(), admin::ACKED) << r.name();
      EXPECT_EQ(r.has_xds_config(), !exclude) << r.name();
    }
  }
  ASSERT_TRUE(stream->WritesDone());
  grpc::Status s = stream->Finish();
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// Two xDS sources in one Mesh, one of them under two schemes: each client
// is listed once, and the Mesh serves the one CSDS service once.
TEST_F(XdsCsdsTest, EveryXdsClientIsListedOnce) {
  auto source = [this](const std::string& node_id) {
    XdsOptions xds;
    xds.bootstrap_json =
        absl::StrCat(R"({"xds_servers": [{"server_uri": ")", server_->address(),
                     R"(", "channel_creds": [{"type": "insecure"}],)",
                     R"( "server_features": ["xds_v3"]}],)",
                     R"( "node": {"id": ")", node_id, R"("}})");
    absl::StatusOr<std::shared_ptr<DiscoverySource>> s = NewXdsDiscovery(xds);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : nullptr;
  };
  const std::string first = NodeId() + "-a";
  const std::string second = NodeId() + "-b";
  MeshOptions options;
  options.discovery = source(first);
  options.discovery_by_scheme["xds"] = options.discovery;
  options.discovery_by_scheme["xdsb"] = source(second);
  options.tap_address = "127.0.0.1:0";
  ASSERT_NE(options.discovery, nullptr);
  ASSERT_NE(options.discovery_by_scheme["xdsb"], nullptr);
  ASSERT_NE(internal::AsBuiltin(options.discovery.get()), nullptr);
  EXPECT_EQ(internal::AsBuiltin(options.discovery.get())->StatusService(),
            internal::AsBuiltin(options.discovery_by_scheme["xdsb"].get())
                ->StatusService());
  absl::StatusOr<std::unique_ptr<Mesh>> mesh = Mesh::Create(options);
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  ClientStatusResponse response;
  grpc::Status s =
      Fetch(PlainChannel(absl::StrCat("127.0.0.1:", (*mesh)->tap_port())),
            false, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_NE(ClientOf(response, first), nullptr) << response.ShortDebugString();
  EXPECT_NE(ClientOf(response, second), nullptr) << response.ShortDebugString();
}

TEST_F(XdsCsdsTest, AMeshWithoutXdsServesNoCsdsAndStillTaps) {
  testing::TapMesh f("books.test:7000", 1);
  ASSERT_NE(f.mesh, nullptr);
  ClientStatusResponse response;
  grpc::Status s = Fetch(PlainChannel(f.tap_target()), false, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED)
      << s.error_message();
  auto channel = f.mesh->NewChannel("books.test:7000");
  ASSERT_TRUE(channel.ok()) << channel.status();
  testing::Traffic traffic(**channel);
  testing::Observed got =
      testing::Observe(f.tap_target(), testing::AllRequests(1));
  traffic.Stop();
  EXPECT_TRUE(got.status.ok()) << got.status.error_message();
  EXPECT_EQ(got.events.size(), 3u);  // one request: init, response, end
}

// The peer connects from 127.0.0.2 (through a relay): tap's rule refuses it,
// for both CSDS methods, and nothing of the client's state comes back.
TEST_F(XdsCsdsTest, APeerThatIsNotLocalIsRefused) {
  ASSERT_NO_FATAL_FAILURE(ServeAndCall());
  testing::RelayFrom127002 relay(mesh_->tap_port());
  // One connection through the relay, for both calls.
  std::shared_ptr<grpc::Channel> remote =
      PlainChannel(absl::StrCat("127.0.0.1:", relay.port()));
  ClientStatusResponse response;
  grpc::Status s = Fetch(remote, false, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("127.0.0.2"));
  EXPECT_EQ(response.config_size(), 0);

  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  auto stream = StubFor(remote)->StreamClientStatus(&context);
  stream->Write(ClientStatusRequest());  // may fail: the call is over
  EXPECT_FALSE(stream->Read(&response));
  s = stream->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
      << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("127.0.0.2"));
  // The same Mesh answers a local peer.
  EXPECT_EQ(FetchMine().generic_xds_configs_size(), 4);
}

}  // namespace
}  // namespace mesh

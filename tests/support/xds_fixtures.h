// What the tests of mesh's xDS client against a ScriptedAdsServer share:
// xDS resources built from a few words of text, a Mesh whose only source is
// an ADS server, an AdsResponder that keeps answering the client with the
// resources the test has set, and XdsTargetTest, a fixture serving one
// target through it.
//
//   auto server = ScriptedAdsServer::Start();
//   AdsResponder responder(*server);
//   responder.Set(MakeListener("svc.test:7001", "svc-routes"));
//   responder.Set(OneHostRoutes("svc-routes", RouteTo("svc-cluster")));
//   responder.Set(MakeEdsCluster("svc-cluster", "svc-cla"));
//   responder.Set(ClaOf("svc-cla", backends));
//   auto mesh = MakeXdsMesh(server->address());  // StatusOr
//
// Thread-compatible unless noted.
#ifndef MESH_TESTS_SUPPORT_XDS_FIXTURES_H_
#define MESH_TESTS_SUPPORT_XDS_FIXTURES_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/core/v3/core.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "mesh/channel.h"
#include "mesh/dns.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"
#include "tests/support/scripted_ads_server.h"
#include "tools/common/echo_backend.h"

namespace mesh::testing {

using Backends = std::vector<std::unique_ptr<tools::EchoBackend>>;

// `text` in protobuf text format as a T; a test failure naming the text if
// it does not parse (and a T holding what did).
template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message))
      << text;
  return message;
}

// --- resources ---------------------------------------------------------------

// The API Listener `name` whose HttpConnectionManager reads
// RouteConfiguration `route_config_name` over ADS and runs `filters`, then
// the router; `hcm` (text) adds other HttpConnectionManager fields.
envoy::config::listener::v3::Listener MakeListener(
    const std::string& name, const std::string& route_config_name,
    const std::vector<envoy::extensions::filters::network::
                          http_connection_manager::v3::HttpFilter>& filters =
        {},
    const std::string& hcm = "");

// A bootstrap (JSON) naming the ADS server at `server_address` over
// plaintext, for node "n": what a test that makes an XdsClient by hand
// loads.
std::string PlaintextBootstrap(const std::string& server_address);

// One route (text) sending calls that match `match` (text; empty: every
// call) to `cluster`, with `action` (text) added to its RouteAction and
// `extra` (text) to the Route.
std::string RouteTo(const std::string& cluster, const std::string& match = "",
                    const std::string& action = "",
                    const std::string& extra = "");

// RouteConfiguration `name` with one virtual host, "svc", for every domain
// ("*"), holding `routes` (text, such as RouteTo's).
envoy::config::route::v3::RouteConfiguration OneHostRoutes(
    const std::string& name, const std::string& routes);

// Cluster `name` of type EDS reading ClusterLoadAssignment `service_name`
// over ADS, with `extra` (text) fields; `extra` may set another `type`.
envoy::config::cluster::v3::Cluster MakeEdsCluster(
    const std::string& name, const std::string& service_name,
    const std::string& extra = "");

// A locality of a ClusterLoadAssignment.
struct Locality {
  std::string zone;
  uint32_t priority = 0;
  // Endpoints ("host:port") and their health.
  std::vector<std::pair<std::string, envoy::config::core::v3::HealthStatus>>
      endpoints;
};

// ClusterLoadAssignment `name` holding `localities`, each of weight 1.
envoy::config::endpoint::v3::ClusterLoadAssignment MakeCla(
    const std::string& name, const std::vector<Locality>& localities);

// ClusterLoadAssignment `name` with `backends`, all HEALTHY, in one
// locality (zone "z1", priority 0).
envoy::config::endpoint::v3::ClusterLoadAssignment ClaOf(
    const std::string& name,
    const std::vector<const tools::EchoBackend*>& backends);
envoy::config::endpoint::v3::ClusterLoadAssignment ClaOf(
    const std::string& name, const Backends& backends);

// --- the client --------------------------------------------------------------

struct XdsMeshOptions {
  // The bootstrap's "node" (a JSON object).
  std::string node =
      R"({"id": "mesh-test", "metadata": {"GENERATOR": "grpc"}})";
  // The server's "server_features" (a JSON list); empty: none.
  std::string server_features = R"(["xds_v3"])";
  // XdsOptions::resource_timeout; gRPC's 15 s by default.
  absl::Duration resource_timeout = absl::Seconds(15);
  // XdsOptions' reconnect backoff; short, so that a test that ends a stream
  // sees the next one soon (XdsOptions' own starts at 1 s).
  absl::Duration backoff_min = absl::Milliseconds(50);
  absl::Duration backoff_max = absl::Milliseconds(200);
  // MeshOptions::tap_address; empty: no tap server.
  std::string tap_address;
  // XdsOptions::honour_round_robin.
  bool honour_round_robin = false;
  // XdsOptions::dns: how DNS clusters resolve their hosts.
  DnsOptions dns;
};

// A Mesh whose only source is NewXdsDiscovery with a bootstrap naming the
// ADS server at `server_address` ("host:port", insecure). The status of
// NewXdsDiscovery or Mesh::Create if either fails.
absl::StatusOr<std::unique_ptr<Mesh>> MakeXdsMesh(
    const std::string& server_address, const XdsMeshOptions& options = {});

// A test failure unless `got` is within 6 standard deviations of the mean
// of a binomial(n, p) draw.
void ExpectShare(int got, int n, double p);

// --- the server --------------------------------------------------------------

// Plays a control plane that serves the resources set here until told
// otherwise: each request of the client that is not the answer to a
// response (an ACK or NACK with unchanged names) gets the resources of its
// type that it names, at the type's version; Set sends a changed resource
// at once if its type was asked for. Records every ACK and NACK.
//
// Thread-safe. Ownership: the test owns it; it borrows `server`, which must
// outlive it.
class AdsResponder {
 public:
  // Starts answering the requests `server` receives, on a thread.
  explicit AdsResponder(ScriptedAdsServer& server);
  // Stop().
  ~AdsResponder();
  AdsResponder(const AdsResponder&) = delete;
  AdsResponder& operator=(const AdsResponder&) = delete;

  // Stops answering; returns once the thread has ended. Idempotent.
  void Stop();

  // Serves the resource from now on under its name (a Listener's,
  // RouteConfiguration's or Cluster's name, a ClusterLoadAssignment's
  // cluster_name) and, once its type was asked for, sends it; returns the
  // nonce of that response ("" if not sent).
  std::string Set(const envoy::config::listener::v3::Listener& resource);
  std::string Set(const envoy::config::route::v3::RouteConfiguration& resource);
  std::string Set(const envoy::config::cluster::v3::Cluster& resource);
  std::string Set(
      const envoy::config::endpoint::v3::ClusterLoadAssignment& resource);

  // Set(resource), then AwaitApplied. Fatal test failures: as
  // AwaitApplied's.
  template <typename T>
  void Update(const T& resource) {
    AwaitApplied(Set(resource));
  }
  // Returns once the client has ACKed response `nonce` and applied it: an
  // EDS response sent after the ACK is ACKed too (the client handles
  // responses in order, each whole). Fatal test failures if `nonce` is ""
  // (not sent: not asked for yet), if the client NACKs, or if it does not
  // answer within 10 s.
  void AwaitApplied(const std::string& nonce);
  // Returns once the client has ACKed response `nonce`; fatal test failures
  // as AwaitApplied's.
  void AwaitAck(const std::string& nonce);
  // The error_detail of the client's NACK of response `nonce`, which
  // ExpectNoNacks then leaves out. Fatal test failures if `nonce` is "", if
  // the client ACKs, or if it does not answer within 10 s.
  void AwaitNack(const std::string& nonce, std::string* error);

  // A test failure for each NACK received so far.
  void ExpectNoNacks() const;

 private:
  struct Type {
    bool asked = false;
    std::vector<std::string> names;  // as last asked for
    std::map<std::string, std::shared_ptr<const google::protobuf::Message>>
        resources;
    int version = 0;
  };

  void Serve();
  std::string Put(const std::string& type_url, const std::string& name,
                  std::shared_ptr<const google::protobuf::Message> resource);
  // Sends the resources of `type_url` the client asks for; the nonce.
  std::string SendLocked(const std::string& type_url)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ScriptedAdsServer& server_;
  std::atomic<bool> stop_{false};
  mutable internal::Mutex mu_;
  std::map<std::string, Type> types_ ABSL_GUARDED_BY(mu_);
  // Every ACK ("") or NACK (its error) by response nonce.
  std::map<std::string, std::string> answers_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: starts once the rest is built
};

// A fixture: a ScriptedAdsServer answered by an AdsResponder, resources
// for target kTarget (Listener kTarget, RouteConfiguration kRoutes,
// clusters each with its ClusterLoadAssignment "<cluster>-cla"), and a Mesh
// over the server with channel_ to xds:///kTarget. TearDown fails the test
// on any NACK.
//
// Thread-compatible. Ownership: owns the server, responder, Mesh and
// channel_; TearDown destroys them, channel_ first, server last.
//
//   TEST_F(XdsTargetTest, Calls) {
//     Backends b = StartBackends(2);
//     ServeOneCluster(b);
//     ASSERT_NO_FATAL_FAILURE(MakeMesh());
//     EXPECT_TRUE(Call().status.ok());
//   }
class XdsTargetTest : public ::testing::Test {
 public:
  static constexpr char kTarget[] = "svc.test:7001";
  static constexpr char kRoutes[] = "svc-routes";
  static constexpr char kCluster[] = "svc-cluster";  // ServeOneCluster's
  static constexpr char kSay[] = "/test.Echo/Say";   // Call's default

 protected:
  void SetUp() override;
  void TearDown() override;

  // The responder's.
  template <typename T>
  std::string Set(const T& resource) {
    return responder_->Set(resource);
  }
  template <typename T>
  void Update(const T& resource) {
    responder_->Update(resource);
  }

  // kRoutes with one virtual host for every domain holding `routes` (text).
  static envoy::config::route::v3::RouteConfiguration OneHost(
      const std::string& routes);
  // "<cluster>-cla" with `backends` in one locality.
  static envoy::config::endpoint::v3::ClusterLoadAssignment Cla(
      const std::string& cluster,
      const std::vector<const tools::EchoBackend*>& backends);
  // Serves cluster `name` (EDS, `extra` text fields) with Cla(name,
  // `backends`).
  void AddCluster(const std::string& name,
                  const std::vector<const tools::EchoBackend*>& backends,
                  const std::string& extra = "");
  // The cluster (by AddCluster) whose backend served `r`, or its status.
  std::string ServedBy(const CallResult& r) const;
  // kTarget served by `listener`, `routes` and kCluster over `backends`.
  void ServeOneCluster(const Backends& backends,
                       const envoy::config::route::v3::RouteConfiguration&
                           routes = OneHost(RouteTo(kCluster)),
                       const envoy::config::listener::v3::Listener& listener =
                           MakeListener(kTarget, kRoutes));

  // mesh_ over the server, and channel_ to xds:///kTarget once the target
  // has endpoints (fatal test failures if not within 10 s).
  void MakeMesh(const ChannelOptions& options = {},
                const XdsMeshOptions& xds_options = {});
  // Another channel to xds:///kTarget; null (and a test failure) if the
  // Mesh refuses.
  std::unique_ptr<Channel> NewChannel(const ChannelOptions& options = {});
  // A call of `method` on channel_ with `metadata`.
  CallResult Call(const std::string& method = kSay, Metadata metadata = {});

  std::unique_ptr<ScriptedAdsServer> server_;
  std::unique_ptr<AdsResponder> responder_;
  std::map<std::string, std::string> cluster_of_;  // backend → cluster
  std::unique_ptr<Mesh> mesh_;
  std::unique_ptr<Channel> channel_;
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_XDS_FIXTURES_H_

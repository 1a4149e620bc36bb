// mesh-control-plane's ADS server on the wire, against a raw ADS client of
// our own (the generated stub, one request at a time): the chain's first
// answers and their versions and nonces, a push that carries only what
// changed, NACKs counted with the node and the error, a type it does not
// serve, bytes that are no DiscoveryRequest, Kill() with a stream open and
// a client that goes away. Every read is bounded.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/service/discovery/v3/discovery.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/base/mutex.h"
#include "tests/support/test_support.h"
#include "tools/mesh-control-plane/control_plane.h"
#include "tools/mesh-control-plane/xds_resources.h"

namespace mesh {
namespace {

namespace discovery = ::envoy::service::discovery::v3;
using controlplane::ClusterName;
using controlplane::Config;
using controlplane::ControlPlane;
using controlplane::EndpointSpec;
using controlplane::TypeUrl;
using controlplane::XdsType;
using ::envoy::config::endpoint::v3::ClusterLoadAssignment;
using ::envoy::config::listener::v3::Listener;
using ::testing::HasSubstr;

constexpr char kAdsMethod[] =
    "/envoy.service.discovery.v3.AggregatedDiscoveryService/"
    "StreamAggregatedResources";
const std::string kA = "a.test:7001";
const std::string kB = "b.test:7001";

EndpointSpec Endpoint(const std::string& address) {
  EndpointSpec e;
  e.address = address;
  return e;
}

Config TwoTargets() {
  Config config;
  config.targets[kA].endpoints = {Endpoint("127.0.0.1:7001")};
  config.targets[kB].endpoints = {Endpoint("127.0.0.1:7002")};
  return config;
}

discovery::DiscoveryRequest Request(XdsType type,
                                    const std::vector<std::string>& names,
                                    const std::string& version = "",
                                    const std::string& nonce = "") {
  discovery::DiscoveryRequest r;
  r.set_type_url(TypeUrl(type));
  for (const std::string& name : names) r.add_resource_names(name);
  r.set_version_info(version);
  r.set_response_nonce(nonce);
  return r;
}

discovery::DiscoveryRequest Ack(XdsType type,
                                const std::vector<std::string>& names,
                                const discovery::DiscoveryResponse& response) {
  return Request(type, names, response.version_info(), response.nonce());
}

// A raw ADS stream: requests written on the caller's thread, responses read
// on a thread of its own into a queue that Next() waits on, bounded. The
// call's deadline is only a safety net for a test that goes wrong.
class AdsClient {
 public:
  explicit AdsClient(int port)
      : stub_(discovery::AggregatedDiscoveryService::NewStub(
            grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                grpc::InsecureChannelCredentials()))) {
    context_.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
    stream_ = stub_->StreamAggregatedResources(&context_);
    reader_ = std::thread([this] {
      discovery::DiscoveryResponse response;
      while (stream_->Read(&response)) {
        internal::MutexLock lock(&mu_);
        responses_.push_back(std::move(response));
        response.Clear();
      }
      internal::MutexLock lock(&mu_);
      ended_ = true;
    });
  }
  ~AdsClient() {
    context_.TryCancel();
    Finish();
  }

  bool Send(const discovery::DiscoveryRequest& request) {
    return stream_->Write(request);
  }

  // The next response; nullopt if none came within `timeout` or the stream
  // ended.
  std::optional<discovery::DiscoveryResponse> Next(
      absl::Duration timeout = absl::Seconds(10)) {
    internal::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](AdsClient* c) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                               return !c->responses_.empty() || c->ended_;
                             },
                             this),
                         timeout);
    if (responses_.empty()) return std::nullopt;
    discovery::DiscoveryResponse r = std::move(responses_.front());
    responses_.pop_front();
    return r;
  }

  // Responses received and not taken by Next().
  size_t queued() {
    internal::MutexLock lock(&mu_);
    return responses_.size();
  }

  // Whether the server ended the stream within `timeout`.
  bool WaitForEnd(absl::Duration timeout = absl::Seconds(10)) {
    internal::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&ended_), timeout);
  }

  void Cancel() { context_.TryCancel(); }
  bool WritesDone() { return stream_->WritesDone(); }

  // The stream's status, once it ended (cancels it first if it had not).
  grpc::Status Finish() {
    if (!finished_) {
      if (!WaitForEnd(absl::Seconds(10))) context_.TryCancel();
      reader_.join();
      status_ = stream_->Finish();
      finished_ = true;
    }
    return status_;
  }

 private:
  std::unique_ptr<discovery::AggregatedDiscoveryService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<discovery::DiscoveryRequest,
                                           discovery::DiscoveryResponse>>
      stream_;
  std::thread reader_;
  internal::Mutex mu_;
  std::deque<discovery::DiscoveryResponse> responses_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ = false;
  grpc::Status status_;
};

class AdsServerTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(TwoTargets()); }

  void Start(Config config, bool verbose = false) {
    auto cp = ControlPlane::Start("127.0.0.1:0", std::move(config), verbose);
    ASSERT_TRUE(cp.ok()) << cp.status();
    cp_ = *std::move(cp);
  }

  // Waits (bounded) until `type`'s responses sent reach `n`.
  bool WaitForResponses(XdsType type, int64_t n) {
    return testing::WaitFor(
        [&] { return cp_->ads().responses_sent(type) == n; });
  }

  // Sends `request` and returns the response, which must be of its type.
  discovery::DiscoveryResponse Exchange(
      AdsClient& client, const discovery::DiscoveryRequest& request) {
    EXPECT_TRUE(client.Send(request));
    std::optional<discovery::DiscoveryResponse> r = client.Next();
    if (!r.has_value()) {
      ADD_FAILURE() << "no response to " << request.type_url();
      return {};
    }
    EXPECT_EQ(r->type_url(), request.type_url());
    return *std::move(r);
  }

  std::unique_ptr<ControlPlane> cp_;
};

TEST_F(AdsServerTest, TheChainIsServedAndAPushCarriesOnlyWhatChanged) {
  AdsClient client(cp_->port());
  const std::vector<std::string> listeners = {kA, kB};
  const std::vector<std::string> clusters = {ClusterName(kA), ClusterName(kB)};
  discovery::DiscoveryRequest first = Request(XdsType::kListener, listeners);
  first.mutable_node()->set_id("ads-test-chain");
  const std::vector<std::pair<XdsType, std::vector<std::string>>> chain = {
      {XdsType::kListener, listeners},
      {XdsType::kRoute, clusters},
      {XdsType::kCluster, clusters},
      {XdsType::kEndpoints, clusters}};
  int nonce = 0;
  for (const auto& [type, names] : chain) {
    SCOPED_TRACE(controlplane::ShortName(type));
    discovery::DiscoveryRequest request =
        type == XdsType::kListener ? first : Request(type, names);
    discovery::DiscoveryResponse r = Exchange(client, request);
    EXPECT_EQ(r.version_info(), "1");
    EXPECT_EQ(r.nonce(), std::to_string(++nonce));
    EXPECT_EQ(r.resources_size(), 2);
    for (const google::protobuf::Any& any : r.resources())
      EXPECT_EQ(any.type_url(), TypeUrl(type));
    EXPECT_TRUE(client.Send(Ack(type, names, r)));
  }
  for (XdsType type : controlplane::kAllXdsTypes) {
    ASSERT_TRUE(WaitForResponses(type, 1)) << controlplane::ShortName(type);
  }
  EXPECT_EQ(cp_->ads().open_streams(), 1);

  // b's endpoints change: one EDS response with b's assignment only.
  Config edited = TwoTargets();
  edited.targets[kB].endpoints.push_back(Endpoint("127.0.0.1:7003"));
  cp_->SetConfig(edited);
  std::optional<discovery::DiscoveryResponse> push = client.Next();
  ASSERT_TRUE(push.has_value());
  EXPECT_EQ(push->type_url(), TypeUrl(XdsType::kEndpoints));
  EXPECT_EQ(push->version_info(), "2");
  EXPECT_EQ(push->nonce(), "5");
  ASSERT_EQ(push->resources_size(), 1);
  ClusterLoadAssignment cla;
  ASSERT_TRUE(push->resources(0).UnpackTo(&cla));
  EXPECT_EQ(cla.cluster_name(), ClusterName(kB));
  ASSERT_EQ(cla.endpoints_size(), 1);
  EXPECT_EQ(cla.endpoints(0).lb_endpoints_size(), 2);
  // The server writes a push's types in chain order: by the time the EDS
  // one is counted, any other would have been.
  ASSERT_TRUE(WaitForResponses(XdsType::kEndpoints, 2));
  EXPECT_EQ(cp_->ads().responses_sent(XdsType::kListener), 1);
  EXPECT_EQ(cp_->ads().responses_sent(XdsType::kRoute), 1);
  EXPECT_EQ(cp_->ads().responses_sent(XdsType::kCluster), 1);
  EXPECT_EQ(cp_->ads().resources_sent(XdsType::kEndpoints), 3);
  EXPECT_EQ(client.queued(), 0u);
  EXPECT_TRUE(client.Send(Ack(XdsType::kEndpoints, clusters, *push)));

  // A new stream gets the catalog as it is now, from version 1 on for what
  // never changed.
  AdsClient second(cp_->port());
  discovery::DiscoveryResponse eds =
      Exchange(second, Request(XdsType::kEndpoints, {ClusterName(kA)}));
  EXPECT_EQ(eds.version_info(), "2");
  EXPECT_EQ(eds.nonce(), "1");
  discovery::DiscoveryResponse lds =
      Exchange(second, Request(XdsType::kListener, {kA}));
  EXPECT_EQ(lds.version_info(), "1");
  ASSERT_EQ(lds.resources_size(), 1);
  Listener listener;
  ASSERT_TRUE(lds.resources(0).UnpackTo(&listener));
  EXPECT_EQ(listener.name(), kA);
  EXPECT_TRUE(testing::WaitFor([&] { return cp_->ads().open_streams() == 2; }));
}

TEST_F(AdsServerTest, ANackIsCountedWithTheNodeAndTheError) {
  AdsClient client(cp_->port());
  const std::vector<std::string> names = {ClusterName(kA)};
  discovery::DiscoveryRequest first = Request(XdsType::kRoute, names);
  first.mutable_node()->set_id("ads-test-nack~10.0.0.1");
  discovery::DiscoveryResponse r = Exchange(client, first);
  ASSERT_EQ(r.nonce(), "1");
  discovery::DiscoveryRequest nack = Request(XdsType::kRoute, names, "", "1");
  nack.mutable_error_detail()->set_code(grpc::StatusCode::INVALID_ARGUMENT);
  nack.mutable_error_detail()->set_message("route regex \"(\" is invalid");
  ASSERT_TRUE(client.Send(nack));
  ASSERT_TRUE(testing::WaitFor([&] { return cp_->ads().nacks() == 1; }));
  std::string line = cp_->ads().last_nack();
  EXPECT_THAT(line, HasSubstr("ads-test-nack~10.0.0.1"));
  EXPECT_THAT(line, HasSubstr("route regex \"(\" is invalid"));
  EXPECT_THAT(line, HasSubstr("RDS"));
  EXPECT_THAT(line, HasSubstr(ClusterName(kA)));

  // Another route changing does not bring the NACKed one back: the CDS
  // answer that follows comes first, and no RDS response was sent.
  Config b_edited = TwoTargets();
  b_edited.targets[kB].profile.emplace().dst_overrides = {{kA, 1}};
  cp_->SetConfig(b_edited);
  discovery::DiscoveryResponse cds =
      Exchange(client, Request(XdsType::kCluster, names));
  EXPECT_EQ(cds.nonce(), "2");
  EXPECT_EQ(cp_->ads().responses_sent(XdsType::kRoute), 1);
  // Its own content changing does.
  Config a_edited = b_edited;
  a_edited.targets[kA].profile.emplace().dst_overrides = {{kB, 1}};
  cp_->SetConfig(a_edited);
  std::optional<discovery::DiscoveryResponse> again = client.Next();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->type_url(), TypeUrl(XdsType::kRoute));
  EXPECT_EQ(again->version_info(), "3");
  EXPECT_EQ(again->nonce(), "3");
  EXPECT_EQ(cp_->ads().nacks(), 1);
}

TEST_F(AdsServerTest, AnUnknownTypeIsIgnoredAndTheStreamServesOn) {
  // Verbose: every request and response logged too.
  Start(TwoTargets(), /*verbose=*/true);
  AdsClient client(cp_->port());
  discovery::DiscoveryRequest secret;
  secret.set_type_url(
      "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret");
  secret.add_resource_names("default");
  secret.mutable_node()->set_id("ads-test-unknown");
  ASSERT_TRUE(client.Send(secret));
  ASSERT_TRUE(client.Send(secret));
  // The LDS answer is the stream's first response.
  discovery::DiscoveryResponse lds =
      Exchange(client, Request(XdsType::kListener, {kA}));
  EXPECT_EQ(lds.nonce(), "1");
  EXPECT_EQ(lds.resources_size(), 1);
  ASSERT_TRUE(WaitForResponses(XdsType::kListener, 1));
  EXPECT_EQ(cp_->ads().responses_sent(XdsType::kRoute), 0);
  EXPECT_EQ(cp_->ads().responses_sent(XdsType::kCluster), 0);
  EXPECT_EQ(cp_->ads().responses_sent(XdsType::kEndpoints), 0);
  EXPECT_EQ(cp_->ads().nacks(), 0);
}

// Sends `bytes` as the one message of an ADS call; returns the call's
// status, or DEADLINE_EXCEEDED if it did not end within 10 s.
grpc::Status SendRawBytes(int port, const std::string& bytes) {
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  grpc::CompletionQueue cq;
  // One operation at a time, each awaited (bounded by the call's deadline
  // and, for a broken server, by this wait's own).
  auto await = [&cq](intptr_t tag) {
    void* got = nullptr;
    bool ok = false;
    auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(15);
    if (cq.AsyncNext(&got, &ok, deadline) != grpc::CompletionQueue::GOT_EVENT) {
      ADD_FAILURE() << "no event for tag " << tag;
      return false;
    }
    EXPECT_EQ(reinterpret_cast<intptr_t>(got), tag);
    return ok;
  };
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, kAdsMethod, &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  grpc::Status status(grpc::StatusCode::DEADLINE_EXCEEDED, "no status");
  if (await(1)) {
    grpc::Slice slice(bytes);
    grpc::ByteBuffer message(&slice, 1);
    call->Write(message, reinterpret_cast<void*>(2));
    await(2);
    grpc::ByteBuffer response;
    call->Read(&response, reinterpret_cast<void*>(3));
    EXPECT_FALSE(await(3)) << "a response to bytes that are no request";
    call->Finish(&status, reinterpret_cast<void*>(4));
    await(4);
  }
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

TEST_F(AdsServerTest, BytesThatAreNoRequestDoNotHurtTheServer) {
  // Not protobuf at all (a field of wire type 7); a string field that is not
  // UTF-8; a length running past the end.
  const std::vector<std::string> garbage = {
      std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x0f garbage", 19),
      std::string("\x1a\x02\xc3\x28\x22\x04", 6) + "type",
      std::string("\x0a\xff\xff\xff\x0f", 5) + "short"};
  for (const std::string& bytes : garbage) {
    discovery::DiscoveryRequest parsed;
    ASSERT_FALSE(parsed.ParseFromString(bytes)) << "not garbage after all";
  }
  for (const std::string& bytes : garbage) {
    // The server ends the call at once. (gRPC's sync API tells it only
    // that the stream has no more requests: it ends the call as it ends
    // one whose client is done writing.)
    grpc::Status status = SendRawBytes(cp_->port(), bytes);
    EXPECT_NE(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << status.error_message();
  }
  EXPECT_TRUE(testing::WaitFor([&] { return cp_->ads().open_streams() == 0; }));
  EXPECT_EQ(cp_->ads().nacks(), 0);
  for (XdsType type : controlplane::kAllXdsTypes)
    EXPECT_EQ(cp_->ads().responses_sent(type), 0);

  // A proper client is served as ever.
  AdsClient client(cp_->port());
  discovery::DiscoveryResponse lds =
      Exchange(client, Request(XdsType::kListener, {kA}));
  EXPECT_EQ(lds.version_info(), "1");
  EXPECT_EQ(lds.nonce(), "1");
  EXPECT_EQ(lds.resources_size(), 1);
}

TEST_F(AdsServerTest, KillEndsAnOpenStreamWithUnavailable) {
  AdsClient client(cp_->port());
  discovery::DiscoveryResponse lds =
      Exchange(client, Request(XdsType::kListener, {kA}));
  ASSERT_EQ(lds.nonce(), "1");
  ASSERT_TRUE(client.Send(Ack(XdsType::kListener, {kA}, lds)));
  ASSERT_TRUE(testing::WaitFor([&] { return cp_->ads().open_streams() == 1; }));
  absl::Time start = absl::Now();
  cp_->Kill();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(cp_->ads().open_streams(), 0);
  ASSERT_TRUE(client.WaitForEnd(absl::Seconds(10)));
  EXPECT_FALSE(client.Next(absl::ZeroDuration()).has_value());
  grpc::Status status = client.Finish();
  // "control plane stopping", or "Socket closed" when the server's
  // shutdown closes the connection first: UNAVAILABLE either way.
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << status.error_message();
  cp_->Kill();  // idempotent
}

TEST_F(AdsServerTest, AClientThatGoesAwayClosesItsStream) {
  AdsClient cancelled(cp_->port());
  AdsClient half_closed(cp_->port());
  AdsClient staying(cp_->port());
  const std::vector<std::string> names = {ClusterName(kA)};
  for (AdsClient* client : {&cancelled, &half_closed, &staying}) {
    discovery::DiscoveryResponse eds =
        Exchange(*client, Request(XdsType::kEndpoints, names));
    EXPECT_EQ(eds.nonce(), "1");
    EXPECT_TRUE(client->Send(Ack(XdsType::kEndpoints, names, eds)));
  }
  ASSERT_TRUE(testing::WaitFor([&] { return cp_->ads().open_streams() == 3; }));
  cancelled.Cancel();
  EXPECT_TRUE(testing::WaitFor([&] { return cp_->ads().open_streams() == 2; }));
  EXPECT_EQ(cancelled.Finish().error_code(), grpc::StatusCode::CANCELLED);
  // A client done writing is done: the server ends its stream.
  half_closed.WritesDone();
  EXPECT_TRUE(half_closed.WaitForEnd());
  EXPECT_TRUE(half_closed.Finish().ok());
  EXPECT_TRUE(testing::WaitFor([&] { return cp_->ads().open_streams() == 1; }));
  // The server keeps pushing to the one left.
  Config edited = TwoTargets();
  edited.targets[kA].endpoints[0].weight = 5;
  cp_->SetConfig(edited);
  std::optional<discovery::DiscoveryResponse> push = staying.Next();
  ASSERT_TRUE(push.has_value());
  EXPECT_EQ(push->type_url(), TypeUrl(XdsType::kEndpoints));
  EXPECT_EQ(push->version_info(), "2");
  EXPECT_EQ(push->nonce(), "2");
  ASSERT_TRUE(WaitForResponses(XdsType::kEndpoints, 4));
}

}  // namespace
}  // namespace mesh

// Generated stubs over Mesh::NewGrpcChannel, against real TestEcho servers on
// 127.0.0.1: sync, callback and CompletionQueue calls, deadlines, TryCancel,
// metadata both ways, error statuses with details, tap, and a Mesh destroyed
// with calls in flight.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "meshtest/echo.grpc.pb.h"
#include "src/base/mutex.h"
#include "tests/support/prometheus_text.h"
#include "tests/support/test_echo_server.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

using meshtest::EchoRequest;
using meshtest::EchoResponse;
using meshtest::TestEcho;
using ::testing::HasSubstr;

constexpr char kTarget[] = "echo.test:7000";

std::string Str(const grpc::string_ref& s) {
  return std::string(s.data(), s.size());
}

std::multimap<std::string, std::string> Strings(
    const std::multimap<grpc::string_ref, grpc::string_ref>& m) {
  std::multimap<std::string, std::string> out;
  for (const auto& [k, v] : m) out.emplace(Str(k), Str(v));
  return out;
}

// One message written and its echo read on an open bidi stream: the
// endpoint that answered, or "" (with a failure) if it did not.
std::string Exchange(
    grpc::ClientReaderWriter<EchoRequest, EchoResponse>& stream) {
  EchoRequest request;
  EchoResponse response;
  if (!stream.Write(request) || !stream.Read(&response)) {
    ADD_FAILURE() << "no echo on the stream";
    return "";
  }
  return response.served_by();
}

class GrpcChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3; ++i)
      servers_.push_back(testing::TestEchoServer::Start());
    std::vector<Endpoint> endpoints;
    for (const auto& s : servers_) endpoints.push_back({s->address()});
    ASSERT_TRUE(mesh_.discovery->SetEndpoints(kTarget, endpoints).ok());
    auto channel = mesh_.mesh->NewGrpcChannel(kTarget);
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *channel;
    stub_ = TestEcho::NewStub(channel_);
  }

  int TotalCalls() const {
    int n = 0;
    for (const auto& s : servers_) n += s->calls();
    return n;
  }
  // One route for every call, retrying UNAVAILABLE up to 3 attempts.
  void RetryUnavailable() {
    ServiceConfig config;
    RetryPolicy policy;
    policy.max_attempts = 3;
    policy.retry_on = {absl::StatusCode::kUnavailable};
    config.routes.push_back(RouteBuilder("all").Retryable(policy).Build());
    ASSERT_TRUE(mesh_.discovery->SetServiceConfig(kTarget, config).ok());
  }

  // Sets `config` for kTarget and waits (bounded) until it applies.
  void ConfigureAndWait(const ServiceConfig& config) {
    auto channel = mesh_.mesh->NewChannel(kTarget);
    ASSERT_TRUE(channel.ok()) << channel.status();
    mesh_.Configure(**channel, kTarget, config);
  }

  // The sum of the metric `name`'s samples with the labels `subset` (-1:
  // none).
  double Gauge(const std::string& name,
               const testing::PrometheusLabels& subset = {}) {
    auto text = testing::ParsePrometheusText(mesh_.mesh->Metrics());
    if (!text.ok()) {
      ADD_FAILURE() << text.status();
      return -1;
    }
    return text->Value(name, subset).value_or(-1);
  }
  double EndpointGauge(const std::string& name, const std::string& address) {
    return Gauge(name, {{"endpoint", address}});
  }

  int TotalCancellations() const {
    int n = 0;
    for (const auto& s : servers_) n += s->cancellations_seen();
    return n;
  }

  std::vector<std::unique_ptr<testing::TestEchoServer>> servers_;
  testing::StaticMesh mesh_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<TestEcho::Stub> stub_;
};

TEST_F(GrpcChannelTest, SyncUnaryCallsSpreadOverEveryEndpoint) {
  std::map<std::string, int> served;
  for (int i = 0; i < 60; ++i) {
    grpc::ClientContext context;
    EchoRequest request;
    request.set_message("hello " + std::to_string(i));
    EchoResponse response;
    grpc::Status status = stub_->Unary(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.message(), request.message());
    ++served[response.served_by()];
  }
  for (const auto& s : servers_) {
    EXPECT_GT(served[s->address()], 0) << s->address();
    EXPECT_EQ(served[s->address()], s->calls()) << s->address();
  }
  // The outer channel never even tried to connect: mesh carried every call.
  EXPECT_EQ(channel_->GetState(false), GRPC_CHANNEL_IDLE);
}

TEST_F(GrpcChannelTest, CallbackUnary) {
  constexpr int kCalls = 20;
  grpc::ClientContext contexts[kCalls];
  EchoRequest requests[kCalls];
  EchoResponse responses[kCalls];
  grpc::Status statuses[kCalls];
  internal::Notification done[kCalls];
  for (int i = 0; i < kCalls; ++i) {
    requests[i].set_message("cb " + std::to_string(i));
    stub_->async()->Unary(&contexts[i], &requests[i], &responses[i],
                          [&, i](grpc::Status s) {
                            statuses[i] = std::move(s);
                            done[i].Notify();
                          });
  }
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(done[i].WaitForNotificationWithTimeout(absl::Seconds(10)));
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    EXPECT_EQ(responses[i].message(), "cb " + std::to_string(i));
  }
}

TEST_F(GrpcChannelTest, CompletionQueueUnary) {
  grpc::CompletionQueue cq;
  constexpr int kCalls = 10;
  grpc::ClientContext contexts[kCalls];
  EchoResponse responses[kCalls];
  grpc::Status statuses[kCalls];
  std::unique_ptr<grpc::ClientAsyncResponseReader<EchoResponse>>
      readers[kCalls];
  for (int i = 0; i < kCalls; ++i) {
    EchoRequest request;
    request.set_message("cq " + std::to_string(i));
    readers[i] = stub_->AsyncUnary(&contexts[i], request, &cq);
    readers[i]->Finish(&responses[i], &statuses[i],
                       reinterpret_cast<void*>(static_cast<intptr_t>(i)));
  }
  for (int n = 0; n < kCalls; ++n) {
    void* tag;
    bool ok = false;
    ASSERT_EQ(cq.AsyncNext(&tag, &ok,
                           absl::ToChronoTime(absl::Now() + absl::Seconds(10))),
              grpc::CompletionQueue::GOT_EVENT);
    EXPECT_TRUE(ok);
  }
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    EXPECT_EQ(responses[i].message(), "cq " + std::to_string(i));
  }
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
}

TEST_F(GrpcChannelTest, ContextDeadlineEndsTheCallDeadlineExceeded) {
  grpc::ClientContext context;
  context.set_deadline(
      absl::ToChronoTime(absl::Now() + absl::Milliseconds(200)));
  EchoRequest request;
  request.set_delay_ms(20000);
  EchoResponse response;
  absl::Time start = absl::Now();
  grpc::Status status = stub_->Unary(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << status.error_message();
  // Ended by the deadline, not by the server's 20 s.
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(GrpcChannelTest, TryCancelEndsTheCallAndTheServerSeesIt) {
  grpc::ClientContext context;
  EchoRequest request;
  request.set_delay_ms(20000);
  EchoResponse response;
  grpc::Status status;
  internal::Notification done;
  stub_->async()->Unary(&context, &request, &response, [&](grpc::Status s) {
    status = std::move(s);
    done.Notify();
  });
  ASSERT_TRUE(testing::WaitFor([&] { return TotalCalls() == 1; }));
  context.TryCancel();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED)
      << status.error_message();
  EXPECT_TRUE(testing::WaitFor([&] { return TotalCancellations() == 1; }));
}

TEST_F(GrpcChannelTest, SyncCallCancelledFromAnotherThread) {
  grpc::ClientContext context;
  EchoRequest request;
  request.set_delay_ms(20000);
  EchoResponse response;
  std::thread canceller([&] {
    if (testing::WaitFor([&] { return TotalCalls() == 1; })) {
      context.TryCancel();
    }
  });
  grpc::Status status = stub_->Unary(&context, request, &response);
  canceller.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED)
      << status.error_message();
  EXPECT_TRUE(testing::WaitFor([&] { return TotalCancellations() == 1; }));
}

TEST_F(GrpcChannelTest, MetadataPassesBothWays) {
  grpc::ClientContext context;
  context.AddMetadata("echo-color", "blue");
  context.AddMetadata("trail-size", "7");
  context.AddMetadata("echo-blob-bin", std::string("\x00\x01\xff", 3));
  EchoRequest request;
  request.set_message("m");
  EchoResponse response;
  ASSERT_TRUE(stub_->Unary(&context, request, &response).ok());
  auto initial = Strings(context.GetServerInitialMetadata());
  auto trailing = Strings(context.GetServerTrailingMetadata());
  EXPECT_EQ(initial.count("echo-color"), 1u);
  EXPECT_EQ(initial.find("echo-color")->second, "blue");
  ASSERT_EQ(initial.count("echo-blob-bin"), 1u);
  EXPECT_EQ(initial.find("echo-blob-bin")->second,
            std::string("\x00\x01\xff", 3));
  ASSERT_EQ(trailing.count("trail-size"), 1u);
  EXPECT_EQ(trailing.find("trail-size")->second, "7");
}

TEST_F(GrpcChannelTest, ErrorStatusKeepsCodeMessageDetailsAndTrailers) {
  grpc::ClientContext context;
  context.AddMetadata("trail-why", "policy");
  EchoRequest request;
  request.set_fail_code(grpc::StatusCode::FAILED_PRECONDITION);
  request.set_fail_message("shelf is locked");
  EchoResponse response;
  grpc::Status status = stub_->Unary(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), "shelf is locked");
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(status.error_details()));
  EXPECT_EQ(details.code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(details.message(), "shelf is locked");
  auto trailing = Strings(context.GetServerTrailingMetadata());
  ASSERT_EQ(trailing.count("trail-why"), 1u);
  EXPECT_EQ(trailing.find("trail-why")->second, "policy");
}

TEST_F(GrpcChannelTest, NoEndpointsFailsUnavailableNamingTheTarget) {
  ChannelOptions options;
  options.fail_fast_timeout = absl::ZeroDuration();
  auto channel = mesh_.mesh->NewGrpcChannel("nowhere.test:7000", options);
  ASSERT_TRUE(channel.ok());
  auto stub = TestEcho::NewStub(*channel);
  ASSERT_TRUE(mesh_.discovery->SetEndpoints("nowhere.test:7000", {}).ok());
  grpc::ClientContext context;
  EchoResponse response;
  grpc::Status status = stub->Unary(&context, EchoRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("nowhere.test:7000"));
}

TEST_F(GrpcChannelTest, SyncServerStream) {
  grpc::ClientContext context;
  context.AddMetadata("echo-h", "x");
  context.AddMetadata("trail-t", "y");
  EchoRequest request;
  request.set_message("s");
  request.set_responses(25);
  auto reader = stub_->ServerStream(&context, request);
  EchoResponse response;
  int n = 0;
  std::string served_by;
  while (reader->Read(&response)) {
    EXPECT_EQ(response.index(), n);
    if (n == 0) served_by = response.served_by();
    EXPECT_EQ(response.served_by(), served_by);  // one endpoint per stream
    ++n;
  }
  grpc::Status status = reader->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(n, 25);
  auto initial = Strings(context.GetServerInitialMetadata());
  auto trailing = Strings(context.GetServerTrailingMetadata());
  ASSERT_EQ(initial.count("echo-h"), 1u);
  EXPECT_EQ(initial.find("echo-h")->second, "x");
  ASSERT_EQ(trailing.count("trail-t"), 1u);
  EXPECT_EQ(trailing.find("trail-t")->second, "y");
}

TEST_F(GrpcChannelTest, FinishWithoutReadingToTheEndWaitsAsGrpcDoes) {
  // gRPC's own stream gives the status only once every message has been
  // read: a Finish that leaves messages unread ends at the deadline. Mesh's
  // stream too, although its transport call ended long before. (The
  // deadline leaves the two reads time under TSan on a busy machine; 300 ms
  // did not.)
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
  EchoRequest request;
  request.set_responses(200);
  auto reader = stub_->ServerStream(&context, request);
  EchoResponse response;
  ASSERT_TRUE(reader->Read(&response));
  ASSERT_TRUE(reader->Read(&response));
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("unread"));
}

TEST_F(GrpcChannelTest, AbandonedStreamIsCancelledAndReleasesItsEndpoint) {
  {
    grpc::ClientContext context;
    auto stream = stub_->Bidi(&context);
    ASSERT_FALSE(Exchange(*stream).empty());
    // Destroyed without Finish: gRPC cancels a call whose context goes.
  }
  // No endpoint keeps a stream pending.
  EXPECT_TRUE(testing::WaitFor([&] { return Gauge("endpoint_pending") == 0; }));
}

TEST_F(GrpcChannelTest, SyncClientStream) {
  grpc::ClientContext context;
  EchoResponse response;
  auto writer = stub_->ClientStream(&context, &response);
  for (int i = 0; i < 8; ++i) {
    EchoRequest request;
    request.set_message(std::to_string(i));
    ASSERT_TRUE(writer->Write(request));
  }
  ASSERT_TRUE(writer->WritesDone());
  grpc::Status status = writer->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.index(), 8);
  EXPECT_EQ(response.message(), "01234567");
}

TEST_F(GrpcChannelTest, SyncBidiStream) {
  grpc::ClientContext context;
  auto stream = stub_->Bidi(&context);
  for (int i = 0; i < 20; ++i) {
    EchoRequest request;
    request.set_message("b" + std::to_string(i));
    ASSERT_TRUE(stream->Write(request));
    EchoResponse response;
    ASSERT_TRUE(stream->Read(&response));
    EXPECT_EQ(response.message(), "b" + std::to_string(i));
    EXPECT_EQ(response.index(), i);
  }
  ASSERT_TRUE(stream->WritesDone());
  EchoResponse extra;
  EXPECT_FALSE(stream->Read(&extra));
  grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(GrpcChannelTest, StreamErrorStatusKeepsDetails) {
  grpc::ClientContext context;
  auto stream = stub_->Bidi(&context);
  EchoRequest ok;
  ok.set_message("fine");
  ASSERT_TRUE(stream->Write(ok));
  EchoResponse response;
  ASSERT_TRUE(stream->Read(&response));
  EchoRequest bad;
  bad.set_fail_code(grpc::StatusCode::ABORTED);
  bad.set_fail_message("conflict");
  stream->Write(bad);
  EXPECT_FALSE(stream->Read(&response));
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_EQ(status.error_message(), "conflict");
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(status.error_details()));
  EXPECT_EQ(details.message(), "conflict");
}

// A callback bidi reactor that sends `total` messages, the next once the
// last one's write is done and its echo read (gRPC allows one write
// outstanding).
class PingPong final
    : public grpc::ClientBidiReactor<EchoRequest, EchoResponse> {
 public:
  PingPong(TestEcho::Stub* stub, int total) : total_(total) {
    stub->async()->Bidi(&context_, this);
    Send();
    StartRead(&response_);
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    if (ok) Step(/*wrote=*/true);
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;
    if (Step(/*wrote=*/false)) StartRead(&response_);
  }
  void OnDone(const grpc::Status& status) override {
    status_ = status;
    done_.Notify();
  }
  bool Wait() {
    return done_.WaitForNotificationWithTimeout(absl::Seconds(20));
  }
  const grpc::Status& status() const { return status_; }
  int received() {
    internal::MutexLock lock(&mu_);
    return received_;
  }

 private:
  // Counts a write done or an echo read; sends the next message when both
  // of the current one have come. True while more echoes are due.
  bool Step(bool wrote) {
    bool send = false;
    bool close = false;
    bool more;
    {
      internal::MutexLock lock(&mu_);
      (wrote ? written_ : received_)++;
      if (written_ == received_ && written_ == sent_) {
        if (sent_ == total_) {
          close = true;
        } else {
          send = true;
        }
      }
      more = received_ < total_;
    }
    if (send) Send();
    if (close) StartWritesDone();
    return more;
  }
  void Send() {
    {
      internal::MutexLock lock(&mu_);
      ++sent_;
      request_.set_message("p" + std::to_string(sent_));
    }
    StartWrite(&request_);
  }
  const int total_;
  grpc::ClientContext context_;
  EchoRequest request_;
  EchoResponse response_;
  internal::Mutex mu_;
  int sent_ = 0;
  int written_ = 0;
  int received_ = 0;
  grpc::Status status_;
  internal::Notification done_;
};

TEST_F(GrpcChannelTest, CallbackBidiReactor) {
  PingPong ping(stub_.get(), 50);
  ASSERT_TRUE(ping.Wait());
  EXPECT_TRUE(ping.status().ok()) << ping.status().error_message();
  EXPECT_EQ(ping.received(), 50);
}

TEST_F(GrpcChannelTest, CompletionQueueServerStream) {
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  EchoRequest request;
  request.set_responses(4);
  auto tag = [](int i) {
    return reinterpret_cast<void*>(static_cast<intptr_t>(i));
  };
  auto next = [&](void** t, bool* ok) {
    return cq.AsyncNext(t, ok,
                        absl::ToChronoTime(absl::Now() + absl::Seconds(10))) ==
           grpc::CompletionQueue::GOT_EVENT;
  };
  auto reader = stub_->AsyncServerStream(&context, request, &cq, tag(1));
  void* t;
  bool ok;
  ASSERT_TRUE(next(&t, &ok));
  ASSERT_TRUE(ok);
  EchoResponse response;
  int n = 0;
  for (;;) {
    reader->Read(&response, tag(2));
    ASSERT_TRUE(next(&t, &ok));
    if (!ok) break;
    EXPECT_EQ(response.index(), n++);
  }
  grpc::Status status;
  reader->Finish(&status, tag(3));
  ASSERT_TRUE(next(&t, &ok));
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(n, 4);
  cq.Shutdown();
  while (cq.Next(&t, &ok)) {
  }
}

TEST_F(GrpcChannelTest, StreamsSpreadOverEndpoints) {
  std::map<std::string, int> served;
  for (int i = 0; i < 30; ++i) {
    grpc::ClientContext context;
    EchoRequest request;
    request.set_responses(1);
    auto reader = stub_->ServerStream(&context, request);
    EchoResponse response;
    ASSERT_TRUE(reader->Read(&response));
    ++served[response.served_by()];
    EXPECT_FALSE(reader->Read(&response));
    ASSERT_TRUE(reader->Finish().ok());
  }
  for (const auto& s : servers_)
    EXPECT_GT(served[s->address()], 0) << s->address();
}

// Five more messages on an open bidi stream, each answered by `endpoint`,
// then its end, OK.
void FinishOn(grpc::ClientReaderWriter<EchoRequest, EchoResponse>& stream,
              const std::string& endpoint) {
  for (int i = 0; i < 5; ++i) {
    EchoRequest request;
    request.set_message("more" + std::to_string(i));
    ASSERT_TRUE(stream.Write(request));
    EchoResponse response;
    ASSERT_TRUE(stream.Read(&response));
    EXPECT_EQ(response.served_by(), endpoint);
  }
  stream.WritesDone();
  EXPECT_TRUE(stream.Finish().ok());
}

TEST_F(GrpcChannelTest, StreamKeepsItsEndpointWhenItLeavesTheSet) {
  grpc::ClientContext context;
  auto stream = stub_->Bidi(&context);
  EchoRequest request;
  request.set_message("first");
  ASSERT_TRUE(stream->Write(request));
  EchoResponse response;
  ASSERT_TRUE(stream->Read(&response));
  const std::string endpoint = response.served_by();
  // Discovery drops the stream's endpoint: new calls go elsewhere, the
  // open stream stays where it is.
  std::vector<Endpoint> others;
  for (const auto& s : servers_) {
    if (s->address() != endpoint) others.push_back({s->address()});
  }
  ASSERT_TRUE(mesh_.discovery->SetEndpoints(kTarget, others).ok());
  for (int i = 0; i < 5; ++i) {
    grpc::ClientContext unary_context;
    EchoResponse unary_response;
    ASSERT_TRUE(
        stub_->Unary(&unary_context, EchoRequest(), &unary_response).ok());
    if (unary_response.served_by() == endpoint) {
      // The update may still be on its way: allowed only at first.
      ASSERT_LT(i, 1);
    }
  }
  FinishOn(*stream, endpoint);
}

TEST_F(GrpcChannelTest, StreamKeepsItsEndpointWhenItIsEjected) {
  // Round robin, so that the failing calls below reach the stream's
  // endpoint (P2C would avoid it: the stream keeps it busy).
  ChannelOptions options;
  options.balancer.kind = BalancerKind::kRoundRobin;
  auto channel = mesh_.mesh->NewGrpcChannel(kTarget, options);
  ASSERT_TRUE(channel.ok());
  stub_ = TestEcho::NewStub(*channel);
  grpc::ClientContext context;
  auto stream = stub_->Bidi(&context);
  const std::string endpoint = Exchange(*stream);
  ASSERT_FALSE(endpoint.empty());
  testing::TestEchoServer* server = nullptr;
  for (const auto& s : servers_) {
    if (s->address() == endpoint) server = s.get();
  }
  ASSERT_NE(server, nullptr);
  // An UNAVAILABLE answer ejects the endpoint that gave it: calls that
  // fail only there, until one lands there.
  bool ejected = false;
  for (int i = 0; i < 10 && !ejected; ++i) {
    int before = server->calls();
    grpc::ClientContext c;
    EchoRequest failing;
    failing.set_fail_code(grpc::StatusCode::UNAVAILABLE);
    failing.set_fail_on(endpoint);
    EchoResponse r;
    grpc::Status status = stub_->Unary(&c, failing, &r);
    ejected = server->calls() > before;
    EXPECT_EQ(status.ok(), !ejected);
  }
  ASSERT_TRUE(ejected);
  for (int i = 0; i < 10; ++i) {
    grpc::ClientContext c;
    EchoResponse r;
    ASSERT_TRUE(stub_->Unary(&c, EchoRequest(), &r).ok());
    EXPECT_NE(r.served_by(), endpoint);
  }
  FinishOn(*stream, endpoint);
}

TEST_F(GrpcChannelTest, StreamToADeadEndpointIsRetriedElsewhere) {
  // A port nothing listens on: streams picked there never reach a server,
  // so they are retried on the live endpoints (nothing was received).
  int dead_port;
  {
    auto probe = testing::TestEchoServer::Start();
    dead_port =
        std::stoi(probe->address().substr(probe->address().rfind(':') + 1));
  }
  std::vector<Endpoint> endpoints = {
      {"127.0.0.1:" + std::to_string(dead_port)}};
  for (const auto& s : servers_) endpoints.push_back({s->address()});
  ASSERT_TRUE(mesh_.discovery->SetEndpoints(kTarget, endpoints).ok());
  for (int i = 0; i < 20; ++i) {
    grpc::ClientContext context;
    EchoRequest request;
    request.set_responses(2);
    auto reader = stub_->ServerStream(&context, request);
    EchoResponse response;
    int n = 0;
    while (reader->Read(&response)) ++n;
    grpc::Status status = reader->Finish();
    ASSERT_TRUE(status.ok()) << i << ": " << status.error_message();
    EXPECT_EQ(n, 2);
  }
}

TEST_F(GrpcChannelTest, StreamRefusedBeforeAnyAnswerIsRetriedWithItsWrites) {
  // servers_[0] ends each bidi stream UNAVAILABLE at its first message,
  // before answering anything; the route retries UNAVAILABLE. A stream
  // picked there goes on elsewhere with every message written so far, and
  // its half-close, sent again in order.
  const std::string refuser = servers_[0]->address();
  RetryUnavailable();
  int streams = 0;
  // Bounded: P2C picks the refuser for some stream long before 100 (each
  // pick misses it with probability 1/3).
  while (servers_[0]->calls() == 0 && streams < 100) {
    ++streams;
    grpc::ClientContext context;
    auto stream = stub_->Bidi(&context);
    for (int i = 0; i < 3; ++i) {
      EchoRequest request;
      request.set_message("m" + std::to_string(i));
      request.set_fail_code(grpc::StatusCode::UNAVAILABLE);
      request.set_fail_on(refuser);
      stream->Write(request);  // may see the refused attempt end: no check
    }
    stream->WritesDone();
    std::vector<std::string> echoed;
    std::string served_by;
    EchoResponse response;
    while (stream->Read(&response)) {
      echoed.push_back(response.message());
      served_by = response.served_by();
    }
    grpc::Status status = stream->Finish();
    ASSERT_TRUE(status.ok()) << streams << ": " << status.error_message();
    EXPECT_THAT(echoed, ::testing::ElementsAre("m0", "m1", "m2"));
    EXPECT_NE(served_by, refuser);
  }
  EXPECT_GT(servers_[0]->calls(), 0) << "no stream was ever picked there";
}

TEST_F(GrpcChannelTest, StreamThatReceivedAnAnswerIsNotRetried) {
  // The same retrying route; every server fails the stream at its second
  // message, after echoing the first: the app has seen an answer, so the
  // failure is the stream's end, on the one endpoint that served it.
  RetryUnavailable();
  grpc::ClientContext context;
  auto stream = stub_->Bidi(&context);
  std::string endpoint = Exchange(*stream);
  EchoRequest failing;
  failing.set_fail_code(grpc::StatusCode::UNAVAILABLE);
  failing.set_fail_message("second message refused");
  stream->Write(failing);
  EchoResponse response;
  EXPECT_FALSE(stream->Read(&response));
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "second message refused");
  EXPECT_EQ(TotalCalls(), 1) << "the stream was sent again";
}

TEST_F(GrpcChannelTest, StreamsAreCountedInRouteMetrics) {
  for (int i = 0; i < 3; ++i) {
    grpc::ClientContext context;
    EchoRequest request;
    request.set_responses(2);
    auto reader = stub_->ServerStream(&context, request);
    EchoResponse response;
    while (reader->Read(&response)) {
    }
    ASSERT_TRUE(reader->Finish().ok());
  }
  std::string metrics = mesh_.mesh->Metrics();
  EXPECT_THAT(metrics,
              HasSubstr("route_request_total{authority=\"" +
                        std::string(kTarget) + "\",route=\"[default]\"} 3"));
}

TEST_F(GrpcChannelTest, UnknownSchemeIsRefusedNamingIt) {
  auto channel = mesh_.mesh->NewGrpcChannel("nosuch:///echo:7000");
  ASSERT_FALSE(channel.ok());
  EXPECT_EQ(channel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(channel.status().message(), HasSubstr("'nosuch'"));
}

TEST_F(GrpcChannelTest, TryCancelEndsAStream) {
  grpc::ClientContext context;
  auto stream = stub_->Bidi(&context);
  ASSERT_FALSE(Exchange(*stream).empty());
  context.TryCancel();
  EchoResponse response;
  EXPECT_FALSE(stream->Read(&response));
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(GrpcChannelTest, StreamDeadline) {
  grpc::ClientContext context;
  context.set_deadline(
      absl::ToChronoTime(absl::Now() + absl::Milliseconds(200)));
  auto stream = stub_->Bidi(&context);
  EchoResponse response;
  // The server answers nothing until written to: the deadline ends it.
  EXPECT_FALSE(stream->Read(&response));
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
}

// The route's timeout is a stream's deadline: a stream with no deadline of
// its own ends DEADLINE_EXCEEDED when its route's 300 ms run out (the
// safety deadline is 20 s).
TEST_F(GrpcChannelTest, RouteTimeoutIsTheStreamsDeadline) {
  ServiceConfig config;
  config.routes.push_back(RouteBuilder("bidi")
                              .GrpcMethod("meshtest.TestEcho", "Bidi")
                              .Timeout(absl::Milliseconds(300))
                              .Build());
  ConfigureAndWait(config);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  const absl::Time start = absl::Now();
  auto stream = stub_->Bidi(&context);
  EchoResponse response;
  // The server answers nothing until written to: the route's timeout ends it.
  EXPECT_FALSE(stream->Read(&response));
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

// A route's traffic split sends streams to its backend too: every stream
// of the split route is served by the other destination's one server.
TEST_F(GrpcChannelTest, RouteSplitSendsStreamsToItsBackend) {
  auto other = testing::TestEchoServer::Start();
  ASSERT_TRUE(
      mesh_.discovery->SetEndpoints("other.test:7000", {{other->address()}})
          .ok());
  ServiceConfig config;
  Route split = RouteBuilder("split")
                    .GrpcMethod("meshtest.TestEcho", "ServerStream")
                    .Build();
  split.backends = {WeightedBackend("other.test:7000", 1)};
  config.routes.push_back(split);
  ConfigureAndWait(config);
  for (int i = 0; i < 5; ++i) {
    grpc::ClientContext context;
    EchoRequest request;
    request.set_responses(2);
    auto reader = stub_->ServerStream(&context, request);
    EchoResponse response;
    int read = 0;
    while (reader->Read(&response)) {
      EXPECT_EQ(response.served_by(), other->address());
      ++read;
    }
    ASSERT_TRUE(reader->Finish().ok());
    EXPECT_EQ(read, 2);
  }
  EXPECT_EQ(other->calls(), 5);
  EXPECT_EQ(TotalCalls(), 0);
}

// A stream is pending on its endpoint while open, and the endpoint's
// latency sample is its first answer: a stream that then lives 2 s more
// (the server holds its second answer) leaves the estimate well below that
// (a sample at its end would replace the estimate with ~2 s at once). The
// first answer may take a few hundred ms (a new connection, under TSan and
// load: 357 ms was seen), hence the margin.
TEST_F(GrpcChannelTest, StreamIsPendingWhileOpenAndSampledAtItsFirstAnswer) {
  grpc::ClientContext context;
  auto stream = stub_->Bidi(&context);
  const std::string endpoint = Exchange(*stream);
  ASSERT_FALSE(endpoint.empty());
  for (const auto& s : servers_) {
    EXPECT_EQ(EndpointGauge("endpoint_pending", s->address()),
              s->address() == endpoint ? 1 : 0)
        << s->address();
  }
  EchoRequest held;
  held.set_delay_ms(2000);
  ASSERT_TRUE(stream->Write(held));
  EchoResponse response;
  ASSERT_TRUE(stream->Read(&response));
  stream->WritesDone();
  ASSERT_TRUE(stream->Finish().ok());
  EXPECT_TRUE(testing::WaitFor(
      [&] { return EndpointGauge("endpoint_pending", endpoint) == 0; }));
  EXPECT_LT(EndpointGauge("endpoint_rtt_estimate_ms", endpoint), 1000);
}

TEST_F(GrpcChannelTest, TapSeesStreams) {
  TapOptions options;
  options.match = TapMatch::PathExact("/meshtest.TestEcho/ServerStream");
  auto tap = mesh_.mesh->Tap(options);
  ASSERT_TRUE(tap.ok()) << tap.status();
  grpc::ClientContext context;
  EchoRequest request;
  request.set_message("tap");
  request.set_responses(3);
  auto reader = stub_->ServerStream(&context, request);
  EchoResponse response;
  size_t bytes = 0;
  while (reader->Read(&response)) bytes += response.ByteSizeLong();
  ASSERT_TRUE(reader->Finish().ok());
  std::vector<TapEvent> events;
  while (events.size() < 3) {
    std::optional<TapEvent> event = (*tap)->Next(absl::Seconds(10));
    ASSERT_TRUE(event.has_value());
    events.push_back(*event);
  }
  EXPECT_EQ(events[0].kind, TapEvent::Kind::kRequestInit);
  EXPECT_EQ(events[1].kind, TapEvent::Kind::kResponseInit);
  EXPECT_EQ(events[1].http_status, 200u);
  EXPECT_EQ(events[2].kind, TapEvent::Kind::kResponseEnd);
  EXPECT_EQ(events[2].response_messages, 3u);
  EXPECT_EQ(events[2].response_bytes, bytes);
  EXPECT_EQ(events[2].grpc_status, 0u);
  EXPECT_EQ(events[2].destination, response.served_by());
}

TEST_F(GrpcChannelTest, MeshDestroyedWithStreamsOpenEndsEachOne) {
  constexpr int kStreams = 4;
  grpc::ClientContext contexts[kStreams];
  std::vector<
      std::unique_ptr<grpc::ClientReaderWriter<EchoRequest, EchoResponse>>>
      streams;
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(stub_->Bidi(&contexts[i]));
    EchoRequest request;
    ASSERT_TRUE(streams.back()->Write(request));
    EchoResponse response;
    ASSERT_TRUE(streams.back()->Read(&response));
  }
  mesh_.mesh.reset();
  for (auto& stream : streams) {
    EchoResponse response;
    EXPECT_FALSE(stream->Read(&response));
    grpc::Status status = stream->Finish();
    EXPECT_THAT(status.error_code(),
                ::testing::AnyOf(grpc::StatusCode::CANCELLED,
                                 grpc::StatusCode::UNAVAILABLE));
  }
}

TEST_F(GrpcChannelTest, GenericStubCallsOfUnknownMethodsAreRefused) {
  grpc::GenericStub generic(channel_);
  grpc::ClientContext context;
  grpc::Slice slice(std::string("raw"));
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  internal::Notification done;
  generic.UnaryCall(&context, "/unknown.Service/Do", grpc::StubOptions(),
                    &request, &response, [&](grpc::Status s) {
                      status = std::move(s);
                      done.Notify();
                    });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(status.error_message(), HasSubstr("mesh::Channel::CallRaw"));
  EXPECT_EQ(TotalCalls(), 0);
}

TEST_F(GrpcChannelTest, TapSeesStubCalls) {
  TapOptions options;
  options.match = TapMatch::PathExact("/meshtest.TestEcho/Unary");
  auto tap = mesh_.mesh->Tap(options);
  ASSERT_TRUE(tap.ok()) << tap.status();
  grpc::ClientContext context;
  EchoRequest request;
  request.set_message("tapped");
  EchoResponse response;
  ASSERT_TRUE(stub_->Unary(&context, request, &response).ok());
  std::vector<TapEvent::Kind> kinds;
  std::string destination;
  while (kinds.size() < 3) {
    std::optional<TapEvent> event = (*tap)->Next(absl::Seconds(10));
    ASSERT_TRUE(event.has_value());
    kinds.push_back(event->kind);
    destination = event->destination;
  }
  EXPECT_EQ(kinds, (std::vector<TapEvent::Kind>{TapEvent::Kind::kRequestInit,
                                                TapEvent::Kind::kResponseInit,
                                                TapEvent::Kind::kResponseEnd}));
  EXPECT_EQ(destination, response.served_by());
}

TEST_F(GrpcChannelTest, MeshDestroyedWithCallsInFlightEndsEachOne) {
  constexpr int kCalls = 6;
  grpc::ClientContext contexts[kCalls];
  EchoRequest request;
  request.set_delay_ms(20000);
  EchoResponse responses[kCalls];
  grpc::Status statuses[kCalls];
  internal::Notification done[kCalls];
  for (int i = 0; i < kCalls; ++i) {
    stub_->async()->Unary(&contexts[i], &request, &responses[i],
                          [&, i](grpc::Status s) {
                            statuses[i] = std::move(s);
                            done[i].Notify();
                          });
  }
  ASSERT_TRUE(testing::WaitFor([&] { return TotalCalls() == kCalls; }));
  mesh_.mesh.reset();
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(done[i].WaitForNotificationWithTimeout(absl::Seconds(10)));
    EXPECT_THAT(statuses[i].error_code(),
                ::testing::AnyOf(grpc::StatusCode::CANCELLED,
                                 grpc::StatusCode::UNAVAILABLE));
  }
  // Later calls on the channel fail at once.
  grpc::ClientContext context;
  EchoResponse response;
  grpc::Status status = stub_->Unary(&context, EchoRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
}

// The same calls through mesh::Channel's own API: cancellation, absolute
// deadlines, response metadata on typed calls, error details kept.
class ChannelCallTest : public GrpcChannelTest {
 protected:
  void SetUp() override {
    GrpcChannelTest::SetUp();
    auto c = mesh_.mesh->NewChannel(kTarget);
    ASSERT_TRUE(c.ok()) << c.status();
    mesh_channel_ = *std::move(c);
  }
  std::unique_ptr<Channel> mesh_channel_;
};

constexpr char kUnary[] = "/meshtest.TestEcho/Unary";

TEST_F(ChannelCallTest, CancelEndsTheCallInFlightAndTheServerSeesIt) {
  EchoRequest request;
  request.set_delay_ms(20000);
  CallOptions options;
  options.cancel = std::make_shared<Cancellation>();
  CallResult result;
  internal::Notification done;
  mesh_channel_->CallRawAsync(kUnary, request.SerializeAsString(), options,
                              [&](CallResult r) {
                                result = std::move(r);
                                done.Notify();
                              });
  ASSERT_TRUE(testing::WaitFor([&] { return TotalCalls() == 1; }));
  options.cancel->Cancel();
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(result.status.code(), absl::StatusCode::kCancelled)
      << result.status;
  EXPECT_TRUE(testing::WaitFor([&] { return TotalCancellations() == 1; }));
}

TEST_F(ChannelCallTest, CancelEndsACallWaitingForEndpoints) {
  ChannelOptions channel_options;
  channel_options.fail_fast_timeout = absl::Seconds(60);
  auto channel = mesh_.mesh->NewChannel("later.test:7000", channel_options);
  ASSERT_TRUE(channel.ok());
  ASSERT_TRUE(mesh_.discovery->SetEndpoints("later.test:7000", {}).ok());
  CallOptions options;
  options.cancel = std::make_shared<Cancellation>();
  CallResult result;
  internal::Notification done;
  (*channel)->CallRawAsync(kUnary, "", options, [&](CallResult r) {
    result = std::move(r);
    done.Notify();
  });
  EXPECT_FALSE(done.HasBeenNotified());  // waiting for endpoints
  options.cancel->Cancel();
  // Cancel ran the waiting call's end on this thread.
  ASSERT_TRUE(done.HasBeenNotified());
  EXPECT_EQ(result.status.code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(result.status.message(), HasSubstr("cancelled by the caller"));
}

TEST_F(ChannelCallTest, AlreadyCancelledCallSendsNothing) {
  CallOptions options;
  options.cancel = std::make_shared<Cancellation>();
  options.cancel->Cancel();
  CallResult r = mesh_channel_->CallRaw(kUnary, "", options);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(TotalCalls(), 0);
}

TEST_F(ChannelCallTest, AbsoluteDeadlineBoundsTheCall) {
  EchoRequest request;
  request.set_delay_ms(20000);
  CallOptions options;
  options.deadline = absl::Now() + absl::Milliseconds(200);
  CallResult r =
      mesh_channel_->CallRaw(kUnary, request.SerializeAsString(), options);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDeadlineExceeded) << r.status;
  // A deadline already past sends nothing.
  int before = TotalCalls();
  options.deadline = absl::Now() - absl::Seconds(1);
  r = mesh_channel_->CallRaw(kUnary, request.SerializeAsString(), options);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(TotalCalls(), before);
}

TEST_F(ChannelCallTest, TypedCallReturnsMetadataAndEndpoint) {
  EchoRequest request;
  request.set_message("typed");
  EchoResponse response;
  CallOptions options;
  options.metadata = {{"echo-k", "v"}, {"trail-t", "u"}};
  ResponseInfo info;
  ASSERT_TRUE(
      mesh_channel_->Call(kUnary, request, &response, options, &info).ok());
  EXPECT_EQ(response.message(), "typed");
  EXPECT_EQ(info.endpoint, response.served_by());
  EXPECT_THAT(
      info.headers,
      ::testing::Contains(std::pair<std::string, std::string>("echo-k", "v")));
  EXPECT_THAT(
      info.trailers,
      ::testing::Contains(std::pair<std::string, std::string>("trail-t", "u")));
}

TEST_F(ChannelCallTest, ErrorDetailsAreKeptAsThePayload) {
  EchoRequest request;
  request.set_fail_code(static_cast<int>(absl::StatusCode::kResourceExhausted));
  request.set_fail_message("quota");
  EchoResponse response;
  absl::Status status = mesh_channel_->Call(kUnary, request, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(), "quota");
  std::optional<absl::Cord> payload;
  if (auto p = status.GetPayload(kGrpcStatusDetailsUrl)) payload = *p;
  ASSERT_TRUE(payload.has_value());
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(std::string(*payload)));
  EXPECT_EQ(details.message(), "quota");
}

// Collects a stream's events; reads on until the end when `auto_read`.
class Collector final : public StreamObserver {
 public:
  void Attach(ClientStream* stream, bool auto_read) {
    stream_ = stream;
    auto_read_ = auto_read;
  }
  void OnHeaders(const Metadata& headers) override {
    internal::MutexLock lock(&mu_);
    headers_ = headers;
  }
  void OnReadDone(bool ok, std::string message) override {
    {
      internal::MutexLock lock(&mu_);
      if (ok) messages_.push_back(std::move(message));
      if (!ok) read_end_ = true;
    }
    if (ok && auto_read_) stream_->Read();
  }
  void OnWriteDone(bool ok) override {
    internal::MutexLock lock(&mu_);
    (ok ? writes_ok_ : writes_failed_)++;
  }
  void OnClose(const CallResult& result) override {
    {
      internal::MutexLock lock(&mu_);
      result_ = result;
    }
    closed_.Notify();
  }
  bool IsClosed() const { return closed_.HasBeenNotified(); }
  bool WaitClosed() {
    return closed_.WaitForNotificationWithTimeout(absl::Seconds(20));
  }
  bool WaitMessages(size_t n) {
    internal::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return messages_.size() >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(20));
  }
  bool WaitWrites(int n) {
    internal::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return writes_ok_ + writes_failed_ >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(20));
  }
  std::vector<EchoResponse> Responses() {
    internal::MutexLock lock(&mu_);
    std::vector<EchoResponse> out;
    for (const std::string& m : messages_) {
      EchoResponse r;
      EXPECT_TRUE(r.ParseFromString(m));
      out.push_back(r);
    }
    return out;
  }
  CallResult result() {
    internal::MutexLock lock(&mu_);
    return result_;
  }
  Metadata headers() {
    internal::MutexLock lock(&mu_);
    return headers_;
  }
  int writes_ok() {
    internal::MutexLock lock(&mu_);
    return writes_ok_;
  }

 private:
  ClientStream* stream_ = nullptr;
  bool auto_read_ = false;
  internal::Mutex mu_;
  Metadata headers_;
  std::vector<std::string> messages_;
  bool read_end_ = false;
  int writes_ok_ = 0;
  int writes_failed_ = 0;
  CallResult result_;
  internal::Notification closed_;
};

std::string Request(const std::string& message, int responses = 0) {
  EchoRequest r;
  r.set_message(message);
  r.set_responses(responses);
  return r.SerializeAsString();
}

TEST_F(ChannelCallTest, ServerStreamThroughChannel) {
  Collector collector;
  CallOptions options;
  options.metadata = {{"echo-s", "1"}};
  auto stream = mesh_channel_->StartStream("/meshtest.TestEcho/ServerStream",
                                           options, &collector);
  collector.Attach(stream.get(), /*auto_read=*/true);
  stream->Write(Request("tick", 5));
  stream->WritesDone();
  stream->Read();
  ASSERT_TRUE(collector.WaitClosed());
  CallResult result = collector.result();
  EXPECT_TRUE(result.status.ok()) << result.status;
  std::vector<EchoResponse> responses = collector.Responses();
  ASSERT_EQ(responses.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(responses[i].index(), i);
    EXPECT_EQ(responses[i].served_by(), result.endpoint);
  }
  EXPECT_THAT(
      collector.headers(),
      ::testing::Contains(std::pair<std::string, std::string>("echo-s", "1")));
  EXPECT_EQ(collector.writes_ok(), 1);
}

TEST_F(ChannelCallTest, BidiStreamEchoesEachMessage) {
  Collector collector;
  auto stream =
      mesh_channel_->StartStream("/meshtest.TestEcho/Bidi", {}, &collector);
  collector.Attach(stream.get(), /*auto_read=*/true);
  stream->Read();
  for (int i = 0; i < 10; ++i) {
    stream->Write(Request("m" + std::to_string(i)));
    ASSERT_TRUE(collector.WaitWrites(i + 1));
    ASSERT_TRUE(collector.WaitMessages(i + 1));
  }
  stream->WritesDone();
  ASSERT_TRUE(collector.WaitClosed());
  EXPECT_TRUE(collector.result().status.ok()) << collector.result().status;
  std::vector<EchoResponse> responses = collector.Responses();
  ASSERT_EQ(responses.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(responses[i].message(), "m" + std::to_string(i));
  }
}

// The route's idle timeout: a stream that keeps sending stays open past it;
// once nothing moves for that long it is cancelled (the server sees it) and
// ends DEADLINE_EXCEEDED naming the timeout. A unary call is idle from its
// request to its response; neither is retried.
TEST_F(ChannelCallTest, TheIdleTimeoutEndsAStreamThatStopsMovingOnly) {
  ServiceConfig config;
  RetryPolicy policy;
  policy.max_attempts = 3;
  policy.retry_on = {absl::StatusCode::kDeadlineExceeded,
                     absl::StatusCode::kCancelled};
  Route route = RouteBuilder("all").Retryable(policy).Build();
  route.idle_timeout = absl::Milliseconds(300);
  config.routes.push_back(route);
  ConfigureAndWait(config);
  Collector collector;
  auto stream =
      mesh_channel_->StartStream("/meshtest.TestEcho/Bidi", {}, &collector);
  collector.Attach(stream.get(), /*auto_read=*/true);
  stream->Read();
  const absl::Time start = absl::Now();
  // 8 messages 100 ms apart: 800 ms in all, never 300 ms without one.
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(stream->Write(Request("m" + std::to_string(i))));
    ASSERT_TRUE(collector.WaitMessages(i + 1));
    absl::SleepFor(absl::Milliseconds(100));  // the pace of the test's sender
  }
  EXPECT_FALSE(collector.IsClosed());
  EXPECT_GT(absl::Now() - start, absl::Milliseconds(600));
  // Now nothing moves: the stream ends.
  ASSERT_TRUE(collector.WaitClosed());
  EXPECT_EQ(collector.result().status.code(),
            absl::StatusCode::kDeadlineExceeded)
      << collector.result().status;
  EXPECT_THAT(collector.result().status.message(),
              HasSubstr("passed the route's idle timeout of 300ms"));
  EXPECT_TRUE(testing::WaitFor([&] { return TotalCancellations() == 1; }));
  EXPECT_EQ(TotalCalls(), 1);  // not retried

  // A unary call answered after 2 s: idle from its request on.
  EchoRequest slow;
  slow.set_delay_ms(2000);
  const absl::Time unary_start = absl::Now();
  CallResult r = mesh_channel_->CallRaw(kUnary, slow.SerializeAsString());
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDeadlineExceeded) << r.status;
  EXPECT_THAT(r.status.message(), HasSubstr("idle timeout of 300ms"));
  EXPECT_LT(absl::Now() - unary_start, absl::Seconds(2));
  EXPECT_EQ(TotalCalls(), 2);  // not retried
}

TEST_F(ChannelCallTest, CancelledStreamEndsCancelled) {
  Collector collector;
  auto stream =
      mesh_channel_->StartStream("/meshtest.TestEcho/Bidi", {}, &collector);
  collector.Attach(stream.get(), /*auto_read=*/true);
  stream->Read();
  stream->Write(Request("one"));
  ASSERT_TRUE(collector.WaitMessages(1));
  stream->Cancel();
  ASSERT_TRUE(collector.WaitClosed());
  EXPECT_EQ(collector.result().status.code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace mesh

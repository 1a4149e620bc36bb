// Generated stubs over Mesh::NewGrpcChannel, against real TestEcho servers on
// 127.0.0.1: sync, callback and CompletionQueue calls, deadlines, TryCancel,
// metadata both ways, error statuses with details, tap, and a Mesh destroyed
// with calls in flight.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "meshtest/echo.grpc.pb.h"
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
  // The outer channel never connected anywhere: mesh carried every call.
  EXPECT_NE(channel_->GetState(false), GRPC_CHANNEL_READY);
}

TEST_F(GrpcChannelTest, CallbackUnary) {
  constexpr int kCalls = 20;
  grpc::ClientContext contexts[kCalls];
  EchoRequest requests[kCalls];
  EchoResponse responses[kCalls];
  grpc::Status statuses[kCalls];
  absl::Notification done[kCalls];
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
  absl::Notification done;
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

TEST_F(GrpcChannelTest, StreamingMethodsAreRefusedSayingSo) {
  grpc::ClientContext context;
  EchoRequest request;
  request.set_responses(3);
  auto reader = stub_->ServerStream(&context, request);
  EchoResponse response;
  EXPECT_FALSE(reader->Read(&response));
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(status.error_message(), HasSubstr("unary calls only"));
  EXPECT_EQ(TotalCalls(), 0);
}

TEST_F(GrpcChannelTest, GenericStubCallsOfUnknownMethodsAreRefused) {
  grpc::GenericStub generic(channel_);
  grpc::ClientContext context;
  grpc::Slice slice(std::string("raw"));
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  absl::Notification done;
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
  absl::Notification done[kCalls];
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
  absl::Notification done;
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
  absl::Notification done;
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

}  // namespace
}  // namespace mesh

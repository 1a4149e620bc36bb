// Synchronous calls run on their caller's thread: GrpcTransport::SendAndWait
// against a real server (answers, deadlines, cancels, Shutdown, many
// threads), and Channel::CallRaw / Call sending their attempts through it
// on the calling thread while CallRawAsync goes through Send.
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "meshtest/echo.pb.h"
#include "src/transport/grpc_transport.h"
#include "tests/support/fake_transports.h"
#include "tests/support/test_echo_server.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

using meshtest::EchoRequest;
using meshtest::EchoResponse;

constexpr char kUnary[] = "/meshtest.TestEcho/Unary";
constexpr char kTarget[] = "echo.test:7000";

TransportRequest UnaryRequest(const EchoRequest& message) {
  TransportRequest request;
  request.path = kUnary;
  request.authority = kTarget;
  message.SerializeToString(&request.body);
  return request;
}

EchoRequest Saying(std::string text, int delay_ms = 0) {
  EchoRequest message;
  message.set_message(std::move(text));
  message.set_delay_ms(delay_ms);
  return message;
}

struct TransportFixture {
  std::unique_ptr<testing::TestEchoServer> server =
      testing::TestEchoServer::Start();
  internal::GrpcTransport transport{GrpcTransportOptions{}};
  Endpoint endpoint{server->address()};
};

TEST(SendAndWaitTest, AnswersWithTheServersBodyHeadersAndTrailers) {
  TransportFixture f;
  TransportRequest request = UnaryRequest(Saying("hello"));
  request.headers = {{"echo-a", "1"}, {"trail-b", "2"}};
  TransportResponse response =
      f.transport.SendAndWait(f.endpoint, std::move(request));
  ASSERT_TRUE(response.status.ok()) << response.status;
  EchoResponse answer;
  ASSERT_TRUE(answer.ParseFromString(response.body));
  EXPECT_EQ(answer.message(), "hello");
  EXPECT_EQ(response.http_status, 200);
  EXPECT_THAT(response.headers,
              ::testing::Contains(::testing::Pair("echo-a", "1")));
  EXPECT_THAT(response.trailers,
              ::testing::Contains(::testing::Pair("trail-b", "2")));
}

TEST(SendAndWaitTest, TheServersErrorComesBackWithItsDetails) {
  TransportFixture f;
  EchoRequest message = Saying("x");
  message.set_fail_code(static_cast<int>(absl::StatusCode::kNotFound));
  message.set_fail_message("no such book");
  TransportResponse response =
      f.transport.SendAndWait(f.endpoint, UnaryRequest(message));
  EXPECT_EQ(response.status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(response.status.message(), "no such book");
  EXPECT_TRUE(response.status.GetPayload(kGrpcStatusDetailsUrl).has_value());
  EXPECT_FALSE(response.never_sent);
}

TEST(SendAndWaitTest, TheDeadlineEndsTheWait) {
  TransportFixture f;
  TransportRequest request = UnaryRequest(Saying("slow", 10000));
  request.deadline = absl::Now() + absl::Milliseconds(200);
  TransportResponse response =
      f.transport.SendAndWait(f.endpoint, std::move(request));
  EXPECT_EQ(response.status.code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(SendAndWaitTest, ACancelFromAnotherThreadEndsTheCallAndTellsTheServer) {
  TransportFixture f;
  auto cancel = std::make_shared<Cancellation>();
  TransportRequest request = UnaryRequest(Saying("slow", 10000));
  request.cancel = cancel;
  auto answer = std::async(std::launch::async, [&] {
    return f.transport.SendAndWait(f.endpoint, std::move(request));
  });
  ASSERT_TRUE(testing::WaitFor([&] { return f.server->calls() == 1; },
                               absl::Seconds(10)));
  cancel->Cancel();
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_EQ(answer.get().status.code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(testing::WaitFor(
      [&] { return f.server->cancellations_seen() == 1; }, absl::Seconds(10)));
}

TEST(SendAndWaitTest, ShutdownEndsAWaitingCallAndWaitsForIt) {
  TransportFixture f;
  auto answer = std::async(std::launch::async, [&] {
    return f.transport.SendAndWait(f.endpoint,
                                   UnaryRequest(Saying("slow", 10000)));
  });
  ASSERT_TRUE(testing::WaitFor([&] { return f.server->calls() == 1; },
                               absl::Seconds(10)));
  f.transport.Shutdown();
  // Shutdown returned once the call had left the transport, answered.
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_EQ(answer.get().status.code(), absl::StatusCode::kCancelled);
  TransportResponse after = f.transport.SendAndWait(
      f.endpoint, UnaryRequest(Saying("after shutdown")));
  EXPECT_EQ(after.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(after.never_sent);
}

TEST(SendAndWaitTest, AnAddressThatDoesNotParseIsNeverSent) {
  TransportFixture f;
  TransportResponse response = f.transport.SendAndWait(
      Endpoint("not-an-address"), UnaryRequest(Saying("x")));
  EXPECT_FALSE(response.status.ok());
  EXPECT_TRUE(response.never_sent);
  EXPECT_EQ(f.server->calls(), 0);
}

TEST(SendAndWaitTest, ManyThreadsEachWithTheirOwnQueue) {
  TransportFixture f;
  constexpr int kThreads = 8, kCalls = 40;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < kThreads; ++t) {
    // Each thread ends after its calls, its queue shut down and drained.
    threads.emplace_back([&f, &ok, t] {
      for (int i = 0; i < kCalls; ++i) {
        std::string text = std::to_string(t) + "/" + std::to_string(i);
        TransportResponse r =
            f.transport.SendAndWait(f.endpoint, UnaryRequest(Saying(text)));
        EchoResponse answer;
        if (r.status.ok() && answer.ParseFromString(r.body) &&
            answer.message() == text) {
          ++ok;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kCalls);
}

// A Mesh whose transport records how each request was sent, passing it on
// to a real GrpcTransport.
struct MeshFixture {
  MeshFixture() {
    discovery = StaticDiscovery::Create();
    MeshOptions options;
    options.discovery = discovery;
    options.transport_factory = [wire = wire] {
      return std::make_unique<testing::FakeTransport>(
          wire,
          std::make_unique<internal::GrpcTransport>(GrpcTransportOptions{}));
    };
    mesh = *Mesh::Create(options);
    EXPECT_TRUE(discovery->SetEndpoints(kTarget, {{server->address()}}).ok());
    channel = *mesh->NewChannel(kTarget);
  }
  std::vector<std::thread::id> WaitingThreads() {
    std::lock_guard<std::mutex> lock(wire->mu);
    return wire->waiting_threads;
  }
  int AsyncSends() {
    std::lock_guard<std::mutex> lock(wire->mu);
    return wire->async_sends;
  }

  std::unique_ptr<testing::TestEchoServer> server =
      testing::TestEchoServer::Start();
  std::shared_ptr<testing::FakeWire> wire =
      std::make_shared<testing::FakeWire>();
  std::shared_ptr<StaticDiscovery> discovery;
  std::unique_ptr<Mesh> mesh;
  std::unique_ptr<Channel> channel;
};

TEST(SyncCallTest, CallRawSendsAndWaitsOnTheCallersThread) {
  MeshFixture f;
  std::string body;
  Saying("raw").SerializeToString(&body);
  CallResult result = f.channel->CallRaw(kUnary, body);
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.endpoint, f.server->address());
  EXPECT_THAT(f.WaitingThreads(),
              ::testing::ElementsAre(std::this_thread::get_id()));
  EXPECT_EQ(f.AsyncSends(), 0);
}

TEST(SyncCallTest, CallWithMessagesSendsAndWaitsOnTheCallersThread) {
  MeshFixture f;
  EchoResponse answer;
  ASSERT_TRUE(f.channel->Call(kUnary, Saying("typed"), &answer).ok());
  EXPECT_EQ(answer.message(), "typed");
  EXPECT_THAT(f.WaitingThreads(),
              ::testing::ElementsAre(std::this_thread::get_id()));
  EXPECT_EQ(f.AsyncSends(), 0);
}

TEST(SyncCallTest, AsyncCallsGoThroughSend) {
  MeshFixture f;
  std::string body;
  Saying("async").SerializeToString(&body);
  std::promise<CallResult> done;
  f.channel->CallRawAsync(kUnary, body, {},
                          [&](CallResult r) { done.set_value(std::move(r)); });
  auto answer = done.get_future();
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_TRUE(answer.get().status.ok());
  EXPECT_TRUE(f.WaitingThreads().empty());
  EXPECT_EQ(f.AsyncSends(), 1);
}

TEST(SyncCallTest, ACallerCancelEndsASyncCallInFlight) {
  MeshFixture f;
  std::string body;
  Saying("slow", 10000).SerializeToString(&body);
  CallOptions options;
  options.cancel = std::make_shared<Cancellation>();
  auto answer = std::async(std::launch::async, [&] {
    return f.channel->CallRaw(kUnary, body, options);
  });
  ASSERT_TRUE(testing::WaitFor([&] { return f.server->calls() == 1; },
                               absl::Seconds(10)));
  options.cancel->Cancel();
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_EQ(answer.get().status.code(), absl::StatusCode::kCancelled);
}

TEST(SyncCallTest, DestroyingTheMeshEndsASyncCallInFlight) {
  MeshFixture f;
  std::string body;
  Saying("slow", 10000).SerializeToString(&body);
  auto answer = std::async(std::launch::async,
                           [&] { return f.channel->CallRaw(kUnary, body); });
  ASSERT_TRUE(testing::WaitFor([&] { return f.server->calls() == 1; },
                               absl::Seconds(10)));
  f.mesh.reset();
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_EQ(answer.get().status.code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace mesh

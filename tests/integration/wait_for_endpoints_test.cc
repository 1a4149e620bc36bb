// Calls made while discovery has not answered, or while a destination
// exists with no endpoints, wait for endpoints — within their deadline and
// ChannelOptions::fail_fast_timeout, holding no thread — and are sent in
// arrival order when endpoints come (a service that started and called at
// once used to see UNAVAILABLE). A destination that does not exist fails
// its calls at once. Real gRPC backends on 127.0.0.1.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"
#include "tests/support/fake_transports.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kTarget[] = "books.test:7000";
constexpr char kMethod[] = "/test.Echo/Say";

// Results of async calls, by index.
class Results {
 public:
  explicit Results(int n) : results_(n) {}
  absl::AnyInvocable<void(CallResult)> For(int i) {
    return [this, i](CallResult r) {
      internal::MutexLock lock(&mu_);
      results_[i] = std::move(r);
      ++done_;
    };
  }
  int done() {
    internal::MutexLock lock(&mu_);
    return done_;
  }
  bool WaitAll(absl::Duration timeout = absl::Seconds(20)) {
    internal::MutexLock lock(&mu_);
    auto all = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return done_ == static_cast<int>(results_.size());
    };
    return mu_.AwaitWithTimeout(absl::Condition(&all), timeout);
  }
  CallResult at(int i) {
    internal::MutexLock lock(&mu_);
    return results_[i];
  }

 private:
  internal::Mutex mu_;
  std::vector<CallResult> results_ ABSL_GUARDED_BY(mu_);
  int done_ ABSL_GUARDED_BY(mu_) = 0;
};

class WaitForEndpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    discovery_ = StaticDiscovery::Create();
    MeshOptions options;
    options.discovery = discovery_;
    // The gRPC transport, recording the order in which requests are sent.
    options.transport_factory = [this] {
      return std::make_unique<testing::FakeTransport>(sent_,
                                                      NewGrpcTransport());
    };
    mesh_ = *Mesh::Create(options);
  }

  std::unique_ptr<Channel> NewChannel(absl::Duration fail_fast) {
    ChannelOptions options;
    options.fail_fast_timeout = fail_fast;
    return *mesh_->NewChannel(kTarget, options);
  }

  std::vector<std::string> Sent() { return sent_->Bodies(); }

  std::shared_ptr<StaticDiscovery> discovery_;
  const std::shared_ptr<testing::FakeWire> sent_ =
      std::make_shared<testing::FakeWire>();
  std::unique_ptr<Mesh> mesh_;
};

TEST_F(WaitForEndpointsTest, CallsBeforeTheFirstAnswerWaitAndGoInOrder) {
  auto backends = testing::StartBackends(2);
  auto channel = NewChannel(absl::Seconds(60));
  const int kCalls = 300;
  Results results(kCalls);
  int threads_before = testing::ThreadsOfThisProcess();
  for (int i = 0; i < kCalls; ++i) {
    channel->CallRawAsync(kMethod, absl::StrCat(i), {}, results.For(i));
  }
  // None failed at once (they used to: "discovery has not answered yet"),
  // and none holds a thread while it waits.
  EXPECT_EQ(results.done(), 0);
  EXPECT_LT(testing::ThreadsOfThisProcess() - threads_before, 10);
  EXPECT_TRUE(Sent().empty());

  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  ASSERT_TRUE(results.WaitAll());
  for (int i = 0; i < kCalls; ++i) {
    CallResult r = results.at(i);
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status;
    EXPECT_EQ(r.body, absl::StrCat(i));
  }
  // Released in the order they arrived.
  std::vector<std::string> sent = Sent();
  ASSERT_EQ(sent.size(), static_cast<size_t>(kCalls));
  for (int i = 0; i < kCalls; ++i) EXPECT_EQ(sent[i], absl::StrCat(i));
}

TEST_F(WaitForEndpointsTest, ADestinationThatExistsEmptyHoldsCallsUntilFilled) {
  auto backends = testing::StartBackends(1);
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = NewChannel(absl::Seconds(60));
  ASSERT_TRUE(channel->CallRaw(kMethod, "x").status.ok());
  ASSERT_TRUE(
      discovery_->Update(kTarget, EndpointUpdate::NoEndpoints(true)).ok());
  Results results(20);
  for (int i = 0; i < 20; ++i) {
    channel->CallRawAsync(kMethod, "y", {}, results.For(i));
  }
  EXPECT_EQ(results.done(), 0);
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  ASSERT_TRUE(results.WaitAll());
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(results.at(i).status.ok()) << i;
  EXPECT_EQ(backends[0]->calls_received(), 21);
}

TEST_F(WaitForEndpointsTest, FailFastNamesTheReasonAndTheTimeout) {
  auto channel = NewChannel(absl::Milliseconds(200));
  CallResult r = channel->CallRaw(kMethod, "x");
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("no endpoints for target 'books.test:7000' (discovery "
                        "has not answered yet); waited 200ms for endpoints "
                        "(ChannelOptions::fail_fast_timeout)"));
  // A deadline shorter than the fail-fast timeout ends the wait first.
  auto patient = NewChannel(absl::Seconds(60));
  CallOptions short_deadline;
  short_deadline.timeout = absl::Milliseconds(100);
  r = patient->CallRaw(kMethod, "x", short_deadline);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("deadline passed while waiting for endpoints: no "
                        "endpoints for target 'books.test:7000'"));
  // Zero: no wait at all; the call fails inside CallRawAsync.
  auto impatient = NewChannel(absl::ZeroDuration());
  auto inline_done = std::make_shared<std::atomic<bool>>(false);
  impatient->CallRawAsync(kMethod, "x", {}, [inline_done](CallResult result) {
    EXPECT_EQ(result.status.code(), absl::StatusCode::kUnavailable);
    inline_done->store(true);
  });
  EXPECT_TRUE(inline_done->load());
}

TEST_F(WaitForEndpointsTest, ADestinationThatDoesNotExistFailsAtOnce) {
  ASSERT_TRUE(
      discovery_->Update(kTarget, EndpointUpdate::NoEndpoints(false)).ok());
  auto channel = NewChannel(absl::Seconds(60));
  ASSERT_EQ(channel->WaitForEndpoints(absl::Seconds(10)).code(),
            absl::StatusCode::kUnavailable);
  auto inline_done = std::make_shared<std::atomic<bool>>(false);
  channel->CallRawAsync(kMethod, "x", {}, [inline_done](CallResult r) {
    EXPECT_THAT(std::string(r.status.message()),
                HasSubstr("target 'books.test:7000' does not exist"));
    inline_done->store(true);
  });
  EXPECT_TRUE(inline_done->load());

  // Calls already waiting when the answer "does not exist" comes fail then.
  const std::string other = "later.test:7000";
  auto waiting = *mesh_->NewChannel(other);
  Results results(5);
  for (int i = 0; i < 5; ++i) {
    waiting->CallRawAsync(kMethod, "x", {}, results.For(i));
  }
  EXPECT_EQ(results.done(), 0);
  ASSERT_TRUE(
      discovery_->Update(other, EndpointUpdate::NoEndpoints(false)).ok());
  ASSERT_TRUE(results.WaitAll());
  for (int i = 0; i < 5; ++i) {
    EXPECT_THAT(std::string(results.at(i).status.message()),
                HasSubstr("'later.test:7000' does not exist"));
  }
}

// A traffic split's backend whose discovery answers late: early calls wait
// for it instead of failing "no backend of the traffic split has
// endpoints".
TEST_F(WaitForEndpointsTest, SplitBackendsAnsweringLateHoldTheFirstCalls) {
  auto backends = testing::StartBackends(1);
  ServiceConfig split;
  split.backends = {{"v1.books.test:7000", 1}};
  ASSERT_TRUE(discovery_->SetServiceConfig(kTarget, split).ok());
  auto channel = NewChannel(absl::Seconds(60));
  ASSERT_TRUE(
      testing::WaitFor([&] { return channel->service_config().has_value(); }));
  Results results(50);
  for (int i = 0; i < 50; ++i) {
    channel->CallRawAsync(kMethod, "x", {}, results.For(i));
  }
  EXPECT_EQ(results.done(), 0);
  ASSERT_TRUE(
      discovery_
          ->SetEndpoints("v1.books.test:7000", testing::EndpointsOf(backends))
          .ok());
  ASSERT_TRUE(results.WaitAll());
  for (int i = 0; i < 50; ++i) {
    EXPECT_TRUE(results.at(i).status.ok()) << results.at(i).status;
  }
  EXPECT_EQ(backends[0]->calls_received(), 50);
}

// Calls waiting on a split backend that a new config removes: a new call
// drops that backend, its destination goes, and the waiting calls pick
// again under the new split, at once. (Each released call once rebuilt the
// old backend's destination — a new discovery subscription — in a loop.)
TEST(WaitForEndpointsSplitTest,
     CallsWaitingOnARemovedBackendFollowTheNewSplit) {
  auto backends = testing::StartBackends(1);
  testing::CountedStaticMesh m;
  auto& statics = m.statics;
  auto& counting = m.counting;
  auto& mesh = m.mesh;
  ServiceConfig to_v3;
  to_v3.backends = {{"v3.books.test:7000", 1}};  // never answered
  ASSERT_TRUE(statics->SetServiceConfig(kTarget, to_v3).ok());
  ChannelOptions patient;
  patient.fail_fast_timeout = absl::Seconds(60);
  auto channel = *mesh->NewChannel(kTarget, patient);
  ASSERT_TRUE(
      testing::WaitFor([&] { return channel->service_config().has_value(); }));
  Results results(20);
  for (int i = 0; i < 20; ++i) {
    channel->CallRawAsync(kMethod, "x", {}, results.For(i));
  }
  EXPECT_EQ(results.done(), 0);
  const int subscribes_before = counting->subscribes();  // apex and v3

  ASSERT_TRUE(
      statics
          ->SetEndpoints("v1.books.test:7000", testing::EndpointsOf(backends))
          .ok());
  ServiceConfig to_v1;
  to_v1.backends = {{"v1.books.test:7000", 1}};
  ASSERT_TRUE(statics->SetServiceConfig(kTarget, to_v1).ok());
  ASSERT_TRUE(testing::WaitFor([&] {
    return channel->service_config()->backends[0].authority ==
           "v1.books.test:7000";
  }));
  ASSERT_TRUE(channel->CallRaw(kMethod, "x").status.ok());
  ASSERT_TRUE(results.WaitAll(absl::Seconds(20)));
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(results.at(i).status.ok()) << results.at(i).status;
  }
  EXPECT_EQ(backends[0]->calls_received(), 21);
  // v1 subscribed once; v3 not again.
  EXPECT_EQ(counting->subscribes(), subscribes_before + 1);
}

// A call matched to a route whose split names a backend that never
// answers waits on that backend. A new config drops the route and the
// backend: the backend's destination ends and releases the call, which
// picks once more under the route it was matched with (the backend gets a
// one-off leg, not waited on) and fails at once, naming it — rather than
// waiting on a new destination for that backend, releasing it, and so on,
// starting the backend's discovery over each time.
TEST(WaitForEndpointsSplitTest, ACallWaitingOnARoutesBackendThatGoesEndsOnce) {
  testing::CountedStaticMesh m;
  auto& statics = m.statics;
  auto& counting = m.counting;
  ServiceConfig with_route;
  Route route = RouteBuilder("say").GrpcMethod("test.Echo", "Say").Build();
  route.backends = {{"v3.books.test:7000", 1}};  // never answered
  with_route.routes.push_back(route);
  ASSERT_TRUE(statics->SetServiceConfig(kTarget, with_route).ok());
  ChannelOptions patient;
  patient.fail_fast_timeout = absl::Seconds(60);
  auto channel = *m.mesh->NewChannel(kTarget, patient);
  ASSERT_TRUE(
      testing::WaitFor([&] { return channel->service_config().has_value(); }));
  ASSERT_TRUE(testing::WaitFor([&] { return counting->subscribes() == 2; }))
      << "the route's backend is subscribed with the config";
  Results results(1);
  channel->CallRawAsync(kMethod, "x", {}, results.For(0));
  EXPECT_EQ(results.done(), 0);
  const int subscribes_before = counting->subscribes();

  ASSERT_TRUE(statics->SetServiceConfig(kTarget, ServiceConfig{}).ok());
  ASSERT_TRUE(results.WaitAll(absl::Seconds(20)));
  EXPECT_EQ(results.at(0).status.code(), absl::StatusCode::kUnavailable)
      << results.at(0).status;
  EXPECT_THAT(std::string(results.at(0).status.message()),
              HasSubstr("v3.books.test:7000"));
  // One one-off subscription at most for the last pick.
  EXPECT_LE(counting->subscribes(), subscribes_before + 1);
}

TEST_F(WaitForEndpointsTest, DestroyingTheMeshEndsWaitingCalls) {
  auto channel = NewChannel(absl::Seconds(600));
  Results results(10);
  for (int i = 0; i < 10; ++i) {
    channel->CallRawAsync(kMethod, "x", {}, results.For(i));
  }
  EXPECT_EQ(results.done(), 0);
  mesh_.reset();  // returns once the waiting calls' callbacks have run
  EXPECT_EQ(results.done(), 10);
  for (int i = 0; i < 10; ++i) {
    absl::StatusCode code = results.at(i).status.code();
    EXPECT_TRUE(code == absl::StatusCode::kCancelled ||
                code == absl::StatusCode::kUnavailable)
        << results.at(i).status;
  }
}

TEST_F(WaitForEndpointsTest, AChannelDestroyedWhileItsCallsWaitStillEndsThem) {
  auto backends = testing::StartBackends(1);
  Results results(10);
  {
    auto channel = NewChannel(absl::Seconds(60));
    for (int i = 0; i < 10; ++i) {
      channel->CallRawAsync(kMethod, "x", {}, results.For(i));
    }
  }
  EXPECT_EQ(results.done(), 0);
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  ASSERT_TRUE(results.WaitAll());
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(results.at(i).status.ok());
}

// A source driven by hand: the test calls the one observer of kTarget.
class HandSource final : public DiscoverySource {
 public:
  std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) override {
    internal::MutexLock lock(&mu_);
    if (target == kTarget) observer_ = observer;
    return std::make_unique<Sub>(this);
  }
  // Runs `f` on the observer (under the source's lock: calls serialized).
  void Deliver(const std::function<void(EndpointObserver&)>& f) {
    internal::MutexLock lock(&mu_);
    ASSERT_NE(observer_, nullptr);
    f(*observer_);
  }

 private:
  class Sub final : public DiscoverySubscription {
   public:
    explicit Sub(HandSource* source) : source_(source) {}
    ~Sub() override {
      internal::MutexLock lock(&source_->mu_);
      source_->observer_ = nullptr;
    }

   private:
    HandSource* const source_;
  };
  internal::Mutex mu_;
  EndpointObserver* observer_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// NoEndpoints carries why there are none (DNS: the name does not exist):
// calls name it, the waiting ones too; an error reported before it (a
// stream that dropped, a rejected update) is not taken for the reason; a
// later update without a reason leaves the old one out.
TEST(WaitForEndpointsReasonTest, TheReasonOfNoEndpointsIsNamed) {
  auto source = std::make_shared<HandSource>();
  MeshOptions options;
  options.discovery = source;
  auto mesh = *Mesh::Create(options);
  ChannelOptions patient;
  patient.fail_fast_timeout = absl::Seconds(60);
  auto channel = *mesh->NewChannel(kTarget, patient);
  Results results(5);
  for (int i = 0; i < 5; ++i) {
    channel->CallRawAsync(kMethod, "x", {}, results.For(i));
  }
  EXPECT_EQ(results.done(), 0);
  source->Deliver([](EndpointObserver& o) {
    o.OnDiscoveryError(absl::UnavailableError("stream ended; reconnecting"));
    o.OnEndpointUpdate(EndpointUpdate::NoEndpoints(
        false, "DNS name 'gone.test' does not exist"));
  });
  ASSERT_TRUE(results.WaitAll());
  for (int i = 0; i < 5; ++i) {
    EXPECT_THAT(std::string(results.at(i).status.message()),
                HasSubstr("target 'books.test:7000' does not exist (DNS name "
                          "'gone.test' does not exist)"))
        << i;
    EXPECT_THAT(std::string(results.at(i).status.message()),
                Not(HasSubstr("reconnecting")))
        << i;
  }
  // An error, then the same answer without a reason: neither the old
  // reason nor the error is told as why.
  source->Deliver([](EndpointObserver& o) {
    o.OnDiscoveryError(absl::UnavailableError("rejected an update"));
    o.OnEndpointUpdate(EndpointUpdate::NoEndpoints(false));
  });
  CallResult r = channel->CallRaw(kMethod, "x");
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(r.status.message()), Not(HasSubstr("gone.test")));
  EXPECT_THAT(std::string(r.status.message()),
              Not(HasSubstr("rejected an update")));
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("target 'books.test:7000' does not exist"));
}

}  // namespace
}  // namespace mesh

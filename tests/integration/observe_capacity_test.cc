// The Observe server under many subscribers: at most
// MeshOptions::tap_max_subscriptions live at once (one more is refused
// RESOURCE_EXHAUSTED naming the cap), and an open stream holds no thread,
// even when its client never reads (1,000 subscriptions once took a process
// from 16 to 1,017 threads). Real gRPC clients of Tap.Observe on 127.0.0.1.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "linkerd/tap.grpc.pb.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"
#include "tests/support/tap_fixtures.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

namespace tap = ::io::linkerd::proxy::tap;
using ::mesh::testing::AllRequests;
using ::testing::HasSubstr;

constexpr char kTarget[] = "books.test:7000";

// An Observe stream whose client never reads. Destroying it cancels the
// stream and waits for its end.
class IdleObserver final : public grpc::ClientReadReactor<tap::TapEvent> {
 public:
  IdleObserver(tap::Tap::Stub* stub, const tap::ObserveRequest& request)
      : request_(request) {
    stub->async()->Observe(&context_, &request_, this);
    StartCall();
  }
  ~IdleObserver() override {
    context_.TryCancel();
    done_.WaitForNotification();
  }
  void OnDone(const grpc::Status& status) override {
    status_ = status;
    done_.Notify();
  }
  // The stream's status once it has ended (bounded wait).
  bool Ended(absl::Duration timeout) {
    return done_.WaitForNotificationWithTimeout(timeout);
  }
  const grpc::Status& status() const { return status_; }

 private:
  grpc::ClientContext context_;
  const tap::ObserveRequest request_;
  internal::Notification done_;
  grpc::Status status_;
};

// The observers that already ended, with their statuses: when the hub does
// not fill up, says whether streams were refused or dropped.
std::string EndedOnes(
    const std::vector<std::unique_ptr<IdleObserver>>& observers) {
  std::string out;
  for (size_t i = 0; i < observers.size(); ++i) {
    if (!observers[i]->Ended(absl::ZeroDuration())) continue;
    absl::StrAppend(&out, " #", i, ": ", observers[i]->status().error_code(),
                    " ", observers[i]->status().error_message(), ";");
  }
  return out.empty() ? " none ended" : out;
}

struct Fixture : testing::TapMesh {
  explicit Fixture(uint32_t cap) : TapMesh(kTarget, 2, Options(cap)) {
    channel = *mesh->NewChannel(kTarget);
    stub = tap::Tap::NewStub(
        grpc::CreateChannel(tap_target(), grpc::InsecureChannelCredentials()));
  }
  static MeshOptions Options(uint32_t cap) {
    MeshOptions options;
    options.tap_max_subscriptions = cap;
    return options;
  }
  // Generous: 100 streams opening on a loaded 2-core machine under ASan
  // took over 10 s once. Passing tests wait only as long as they need.
  static constexpr absl::Duration kOpenTimeout = absl::Seconds(60);

  // True once the hub holds `cap` live subscriptions, or matches of
  // kTapMaxTotalMatchNodes nodes: an in-process one is refused then (one
  // made while below is dropped at once).
  bool AtCap() {
    TapOptions options;
    return !mesh->Tap(options).ok();
  }
  std::unique_ptr<Channel> channel;
  std::unique_ptr<tap::Tap::Stub> stub;
};

// Opens `n` observers of `request` and waits (bounded) until the hub is at
// its cap. AtCap's probe holds a slot for a moment: a stream that arrives
// then is refused RESOURCE_EXHAUSTED, as it should be, and is opened anew
// (at most `n` times); any other end fails the wait at once.
::testing::AssertionResult FillUp(
    Fixture& f, const tap::ObserveRequest& request, int n,
    std::vector<std::unique_ptr<IdleObserver>>* idle) {
  for (int i = 0; i < n; ++i) {
    idle->push_back(std::make_unique<IdleObserver>(f.stub.get(), request));
  }
  int reopened = 0;
  bool other_end = false;
  bool full = testing::WaitFor(
      [&] {
        if (f.AtCap()) return true;
        for (auto& o : *idle) {
          if (!o->Ended(absl::ZeroDuration())) continue;
          if (o->status().error_code() !=
                  grpc::StatusCode::RESOURCE_EXHAUSTED ||
              reopened >= n) {
            other_end = true;
            return true;
          }
          ++reopened;
          o = std::make_unique<IdleObserver>(f.stub.get(), request);
        }
        return false;
      },
      Fixture::kOpenTimeout);
  if (full && !other_end) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "the hub did not fill up; reopened " << reopened
         << " refused by the probe; observers ended:" << EndedOnes(*idle);
}

TEST(ObserveCapacityTest, OneSubscriptionPastTheCapIsRefusedNamingIt) {
  Fixture f(/*cap=*/20);
  std::vector<std::unique_ptr<IdleObserver>> idle;
  ASSERT_TRUE(FillUp(f, AllRequests(1000000), 20, &idle));
  TapOptions in_process;
  absl::Status refused = f.mesh->Tap(in_process).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.message()),
              HasSubstr("MeshOptions::tap_max_subscriptions is 20"));

  IdleObserver one_more(f.stub.get(), AllRequests(1));
  ASSERT_TRUE(one_more.Ended(absl::Seconds(10)));
  EXPECT_EQ(one_more.status().error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(one_more.status().error_message(),
              HasSubstr("20 subscriptions are live"));

  // One leaves: there is room again.
  idle.pop_back();
  ASSERT_TRUE(testing::WaitFor([&] { return !f.AtCap(); }));
}

// Streams whose matches together reach kTapMaxTotalMatchNodes: one more
// is refused RESOURCE_EXHAUSTED naming the bound, whatever the cap.
TEST(ObserveCapacityTest, MatchesPastTheTotalNodeBoundAreRefusedNamingIt) {
  Fixture f(/*cap=*/100);
  tap::ObserveRequest widest = AllRequests(1000000);
  auto* any = widest.mutable_match()->mutable_any();
  for (uint32_t i = 0; i + 1 < kTapMaxMatchNodes; ++i) {
    any->add_matches()->mutable_http()->mutable_path()->set_prefix("/");
  }
  std::vector<std::unique_ptr<IdleObserver>> idle;
  // Full once an in-process subscription of one node is refused.
  ASSERT_TRUE(
      FillUp(f, widest, kTapMaxTotalMatchNodes / kTapMaxMatchNodes, &idle));
  IdleObserver one_more(f.stub.get(), AllRequests(1));
  ASSERT_TRUE(one_more.Ended(absl::Seconds(10)));
  EXPECT_EQ(one_more.status().error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(one_more.status().error_message(),
              HasSubstr("matches have 4096 nodes and this one 1; together "
                        "they may have at most 4096 (kTapMaxTotalMatchNodes)"));
  idle.pop_back();
  ASSERT_TRUE(testing::WaitFor([&] { return !f.AtCap(); }));
}

TEST(ObserveCapacityTest, StreamsThatNeverReadHoldNoThreadAndCostNoCall) {
  Fixture f(/*cap=*/100);
  const int threads_before = testing::ThreadsOfThisProcess();
  std::vector<std::unique_ptr<IdleObserver>> idle;
  ASSERT_TRUE(FillUp(f, AllRequests(1000000), 100, &idle));
  // Every call is tapped by all 100; their buffers fill and drop.
  const int kCalls = 300;
  for (int i = 0; i < kCalls; ++i) {
    CallResult r = f.channel->CallRaw("/test.Echo/One", "x");
    ASSERT_TRUE(r.status.ok()) << r.status;
  }
  // A thread per stream would be 100 more.
  EXPECT_LT(testing::ThreadsOfThisProcess() - threads_before, 20);
  // Destroying the Mesh returns with 100 streams open and unread (within
  // the server's 2 s grace), and the clients can still leave.
  f.mesh.reset();
  idle.clear();
}

}  // namespace
}  // namespace mesh

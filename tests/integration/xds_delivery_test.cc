// How mesh's xDS client delivers to its watchers, against a scripted ADS
// server on 127.0.0.1: never under its own lock, so an observer may call
// back into the client, and a slow observer holds up neither the stream
// (the next response is read and ACKed meanwhile) nor anything but the
// deliveries queued behind it; a subscription destroyed from inside its
// own delivery gets nothing more; its clocks run on the timer thread lent
// to it.
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "mesh/discovery.h"
#include "src/base/mutex.h"
#include "src/base/timer_thread.h"
#include "src/discovery/xds/bootstrap.h"
#include "src/discovery/xds/xds_client.h"
#include "tests/support/scripted_ads_server.h"
#include "tests/support/self_dropping_observer.h"
#include "tests/support/xds_fixtures.h"
#include "tests/support/xds_script_fixture.h"

namespace mesh {
namespace {

using envoy::config::core::v3::HealthStatus;
using envoy::service::discovery::v3::DiscoveryRequest;
using testing::kCds;
using testing::kEds;
using testing::kLds;
using testing::kRds;
using testing::MakeCla;
using testing::MakeEdsCluster;
using testing::MakeResponse;
using testing::Names;
using testing::ScriptedAdsServer;

// Records what one watch is told; its update may be made to block until
// Release (and says when it is blocked). Thread-safe.
class Recorder final : public EndpointObserver {
 public:
  explicit Recorder(bool block = false) : block_(block) {}

  void OnEndpointUpdate(const EndpointUpdate& update) override {
    internal::MutexLock lock(&mu_);
    ++updates_;
    endpoints_ = update.endpoints.size();
    if (!block_) return;
    blocked_ = true;
    mu_.Await(absl::Condition(&released_));
    blocked_ = false;
  }

  // Waits up to `timeout` for an update holding `n` endpoints.
  bool WaitForEndpoints(size_t n, absl::Duration timeout) {
    internal::MutexLock lock(&mu_);
    auto has = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return updates_ > 0 && endpoints_ == n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&has), timeout);
  }
  bool WaitUntilBlocked(absl::Duration timeout) {
    internal::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&blocked_), timeout);
  }
  bool blocked() {
    internal::MutexLock lock(&mu_);
    return blocked_;
  }
  int updates() {
    internal::MutexLock lock(&mu_);
    return updates_;
  }
  void Release() {
    internal::MutexLock lock(&mu_);
    released_ = true;
  }

 private:
  const bool block_;
  internal::Mutex mu_;
  int updates_ ABSL_GUARDED_BY(mu_) = 0;
  size_t endpoints_ ABSL_GUARDED_BY(mu_) = 0;
  bool blocked_ ABSL_GUARDED_BY(mu_) = false;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
};

// ClusterLoadAssignment `name` with `n` endpoints 127.0.0.1:1000+i.
envoy::config::endpoint::v3::ClusterLoadAssignment Cla(const std::string& name,
                                                       int n) {
  testing::Locality locality{"z1", 0, {}};
  for (int i = 0; i < n; ++i) {
    locality.endpoints.push_back(
        {absl::StrCat("127.0.0.1:", 1000 + i), HealthStatus::HEALTHY});
  }
  return MakeCla(name, {locality});
}

class XdsDeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = ScriptedAdsServer::Start();
    auto bootstrap = internal::xds::LoadXdsBootstrap(
        testing::PlaintextBootstrap(server_->address()), "");
    ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
    client_ = std::make_shared<internal::xds::XdsClient>(*std::move(bootstrap),
                                                         XdsOptions());
  }

  void TearDown() override {
    client_->Shutdown();
    server_.reset();
  }

  // The client's next request of `type_url` naming exactly `names`.
  std::optional<DiscoveryRequest> AwaitAsk(
      const std::string& type_url, const std::vector<std::string>& names) {
    return server_->WaitForRequest(
        type_url, [&](const DiscoveryRequest& r) { return Names(r) == names; });
  }

  // Sends `resources` as version `version` of `type_url`; true once the
  // client ACKs it within `timeout`.
  bool SendAndAwaitAck(const std::string& type_url, const std::string& version,
                       const testing::Resources& resources,
                       absl::Duration timeout = absl::Seconds(10)) {
    std::string nonce;
    if (!server_->Send(MakeResponse(type_url, version, resources), &nonce)) {
      return false;
    }
    return server_
        ->WaitForRequest(
            type_url,
            [&](const DiscoveryRequest& r) {
              return r.response_nonce() == nonce && r.version_info() == version;
            },
            timeout)
        .has_value();
  }

  std::unique_ptr<ScriptedAdsServer> server_;
  std::shared_ptr<internal::xds::XdsClient> client_;
};

// A target's config observer that, from inside the delivery, watches the
// cluster its routes name: once "they must not call back into the client"
// (the call would have waited for the lock the delivery ran under).
class WatchingConfigObserver final : public ServiceConfigObserver {
 public:
  WatchingConfigObserver(internal::xds::XdsClient* client, Recorder* cluster)
      : client_(client), cluster_(cluster) {}
  void OnServiceConfig(const ServiceConfig& config) override {
    (void)config;
    internal::MutexLock lock(&mu_);
    if (watch_ == nullptr) {
      watch_ = client_->WatchCluster(testing::kCluster, cluster_);
    }
  }
  void Drop() {
    std::unique_ptr<DiscoverySubscription> watch;
    {
      internal::MutexLock lock(&mu_);
      watch = std::move(watch_);
    }
  }

 private:
  internal::xds::XdsClient* const client_;
  Recorder* const cluster_;
  internal::Mutex mu_;
  std::unique_ptr<DiscoverySubscription> watch_ ABSL_GUARDED_BY(mu_);
};

TEST_F(XdsDeliveryTest, AnObserverMayWatchAClusterFromInsideItsDelivery) {
  Recorder endpoints;
  WatchingConfigObserver config(client_.get(), &endpoints);
  auto target = client_->WatchTarget(testing::kTarget, &config, nullptr);

  ASSERT_TRUE(AwaitAsk(kLds, {testing::kTarget}));
  auto listener = testing::MakeListener();
  ASSERT_TRUE(SendAndAwaitAck(kLds, "1", {&listener}));
  ASSERT_TRUE(AwaitAsk(kRds, {testing::kRoutes}));
  auto routes = testing::DefaultRoutes();
  ASSERT_TRUE(SendAndAwaitAck(kRds, "1", {&routes}));
  ASSERT_TRUE(AwaitAsk(kCds, {testing::kCluster}));
  auto cluster = MakeEdsCluster(testing::kCluster, testing::kCla);
  ASSERT_TRUE(SendAndAwaitAck(kCds, "1", {&cluster}));
  ASSERT_TRUE(AwaitAsk(kEds, {testing::kCla}));
  auto cla = Cla(testing::kCla, 3);
  ASSERT_TRUE(SendAndAwaitAck(kEds, "1", {&cla}));

  // The watch made inside the config's delivery got the cluster's endpoints.
  EXPECT_TRUE(endpoints.WaitForEndpoints(3, absl::Seconds(10)));
  config.Drop();
  target.reset();
}

TEST_F(XdsDeliveryTest, ASlowObserverHoldsUpNeitherTheStreamNorItsAcks) {
  Recorder slow(/*block=*/true);
  Recorder other;
  auto a = client_->WatchCluster("a", &slow);
  auto b = client_->WatchCluster("b", &other);
  // Whatever fails, the blocked delivery ends before the watches go.
  absl::Cleanup release = [&slow] { slow.Release(); };
  ASSERT_TRUE(AwaitAsk(kCds, {"a", "b"}));
  auto cluster_a = MakeEdsCluster("a", "a-cla");
  auto cluster_b = MakeEdsCluster("b", "b-cla");
  ASSERT_TRUE(SendAndAwaitAck(kCds, "1", {&cluster_a, &cluster_b}));
  ASSERT_TRUE(AwaitAsk(kEds, {"a-cla", "b-cla"}));

  // A's endpoints: its observer blocks inside the delivery.
  auto cla_a = Cla("a-cla", 100);
  ASSERT_TRUE(SendAndAwaitAck(kEds, "1", {&cla_a}));
  ASSERT_TRUE(slow.WaitUntilBlocked(absl::Seconds(10)));

  // B's endpoints come in the next response: it is read and ACKed while A's
  // observer still blocks (before, the stream read nothing more until the
  // observer returned).
  auto cla_b = Cla("b-cla", 2);
  EXPECT_TRUE(SendAndAwaitAck(kEds, "2", {&cla_a, &cla_b}, absl::Seconds(5)));
  EXPECT_TRUE(slow.blocked());
  // B's delivery is queued behind A's: in order, one at a time.
  EXPECT_EQ(other.updates(), 0);

  slow.Release();
  EXPECT_TRUE(other.WaitForEndpoints(2, absl::Seconds(10)));
  EXPECT_EQ(slow.updates(), 1);  // version 2 left A's assignment as it was
}

TEST_F(XdsDeliveryTest, ASubscriptionDroppedInsideItsDeliveryGetsNothingMore) {
  testing::SelfDroppingObserver dropping;
  Recorder witness;  // a second watch of the same cluster, kept
  dropping.Set(client_->WatchCluster("a", &dropping));
  auto kept = client_->WatchCluster("a", &witness);
  ASSERT_TRUE(AwaitAsk(kCds, {"a"}));
  auto cluster = MakeEdsCluster("a", "a-cla");
  ASSERT_TRUE(SendAndAwaitAck(kCds, "1", {&cluster}));
  ASSERT_TRUE(AwaitAsk(kEds, {"a-cla"}));
  auto one = Cla("a-cla", 1);
  ASSERT_TRUE(SendAndAwaitAck(kEds, "1", {&one}));
  ASSERT_TRUE(dropping.WaitUntilDone().has_value());
  ASSERT_TRUE(witness.WaitForEndpoints(1, absl::Seconds(10)));

  // A new assignment reaches the kept watch only.
  auto two = Cla("a-cla", 2);
  ASSERT_TRUE(SendAndAwaitAck(kEds, "2", {&two}));
  ASSERT_TRUE(witness.WaitForEndpoints(2, absl::Seconds(10)));
  EXPECT_EQ(dropping.updates(), 1);
  kept.reset();
}

// Records the thread of the delivery that says its cluster has no
// assignment (kNoEndpoints, does not exist).
class MissingRecorder final : public EndpointObserver {
 public:
  void OnEndpointUpdate(const EndpointUpdate& update) override {
    if (update.kind != EndpointUpdate::Kind::kNoEndpoints || update.exists) {
      return;
    }
    internal::MutexLock lock(&mu_);
    thread_ = std::this_thread::get_id();
  }
  std::optional<std::thread::id> WaitForMissing(absl::Duration timeout) {
    internal::MutexLock lock(&mu_);
    auto has = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return thread_.has_value();
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&has), timeout)) {
      return std::nullopt;
    }
    return thread_;
  }

 private:
  internal::Mutex mu_;
  std::optional<std::thread::id> thread_ ABSL_GUARDED_BY(mu_);
};

// The thread a TimerThread runs its tasks on.
std::thread::id ThreadOf(internal::TimerThread& timers) {
  std::thread::id id;
  internal::Notification learned;
  timers.RunAfter(absl::ZeroDuration(), [&] {
    id = std::this_thread::get_id();
    learned.Notify();
  });
  EXPECT_TRUE(learned.WaitForNotificationWithTimeout(absl::Seconds(30)));
  return id;
}

// A Mesh lends its timer thread to its sources: the client's clocks run on
// the first thread lent (a source serving two Meshes keeps the first), even
// once the Mesh has closed it, and the delivery a clock causes runs there
// too.
TEST_F(XdsDeliveryTest, ItsClocksRunOnTheFirstTimerThreadLentToIt) {
  client_->Shutdown();
  auto bootstrap = internal::xds::LoadXdsBootstrap(
      testing::PlaintextBootstrap(server_->address()), "");
  ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
  XdsOptions options;
  options.resource_timeout = absl::Milliseconds(100);
  client_ = std::make_shared<internal::xds::XdsClient>(*std::move(bootstrap),
                                                       options);
  auto first = std::make_shared<internal::TimerThread>();
  auto second = std::make_shared<internal::TimerThread>();
  client_->LendTimers(first);
  client_->LendTimers(second);
  const std::thread::id lent = ThreadOf(*first);

  MissingRecorder missing;
  auto watch = client_->WatchCluster("a", &missing);
  ASSERT_TRUE(AwaitAsk(kCds, {"a"}));
  auto cluster = MakeEdsCluster("a", "a-cla");
  ASSERT_TRUE(SendAndAwaitAck(kCds, "1", {&cluster}));
  ASSERT_TRUE(AwaitAsk(kEds, {"a-cla"}));
  // The thread's owner closes it (a Mesh shutting down): the client's
  // clock, armed before the ask was sent, is not handed back with the
  // owner's own tasks, and still runs there.
  EXPECT_TRUE(first->Close().empty());
  // Never answered: its clock (100 ms) finds the assignment missing.
  std::optional<std::thread::id> thread =
      missing.WaitForMissing(absl::Seconds(10));
  ASSERT_TRUE(thread.has_value());
  EXPECT_EQ(*thread, lent);
  watch.reset();
}

}  // namespace
}  // namespace mesh

// What an xDS update of one cluster waits for while another cluster's
// large update is applied. mesh's XdsClient watches clusters A and B of a
// scripted ADS server on 127.0.0.1. A's observer is a Destination with one
// channel's P2C balancer attached (what a channel's leg does with an
// update). Each round sends:
//   1. B's small assignment alone (nothing else in flight): the ACK's floor;
//   2. A's assignment of 10,000 endpoints (half of them new), and once it
//      is ACKed — its apply now running on the thread that read it — B's
//      small assignment again: the time from sending it to its ACK, and
//      whether A's apply was still running when that ACK came.
// Goal (the control-path issue): B ACKed within 5 ms while A's update is
// applied (it used to wait behind the client's lock).
//
//   mesh_xds_ack_bench [--rounds 30] [--endpoints 10000]
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/latency_stats.h"
#include "mesh/discovery.h"
#include "src/balance/balancer.h"
#include "src/base/mutex.h"
#include "src/base/timer_thread.h"
#include "src/channel/destination.h"
#include "src/discovery/xds/bootstrap.h"
#include "src/discovery/xds/xds_client.h"
#include "src/metrics/metrics_registry.h"
#include "src/tap/tap_hub.h"
#include "tests/support/fake_transports.h"
#include "tests/support/scripted_ads_server.h"
#include "tests/support/xds_fixtures.h"

namespace mesh::bench {
namespace {

using envoy::config::endpoint::v3::ClusterLoadAssignment;
using envoy::service::discovery::v3::DiscoveryRequest;
using internal::xds::ResourceType;
using internal::xds::TypeUrl;
using testing::ScriptedAdsServer;

const std::string kCds = TypeUrl(ResourceType::kCluster);
const std::string kEds = TypeUrl(ResourceType::kEndpoints);

// `n` endpoints 10.x.y.z:7001 from the `first`th on.
ClusterLoadAssignment Assignment(const std::string& name, int first, int n) {
  testing::Locality locality{"z1", 0, {}};
  for (int i = first; i < first + n; ++i) {
    locality.endpoints.push_back(
        {absl::StrCat("10.", (i >> 16) & 255, ".", (i >> 8) & 255, ".", i & 255,
                      ":7001"),
         envoy::config::core::v3::HEALTHY});
  }
  return testing::MakeCla(name, {locality});
}

// Forwards to `inner` (if not null), saying whether an update is being
// applied and how long the last one took.
class TimedObserver final : public EndpointObserver {
 public:
  explicit TimedObserver(EndpointObserver* inner) : inner_(inner) {}

  void OnBackendPolicy(const BackendPolicy& policy) override {
    if (inner_ != nullptr) inner_->OnBackendPolicy(policy);
  }
  void OnEndpointUpdate(const EndpointUpdate& update) override {
    {
      internal::MutexLock lock(&mu_);
      applying_ = true;
    }
    const absl::Time start = absl::Now();
    if (inner_ != nullptr) inner_->OnEndpointUpdate(update);
    internal::MutexLock lock(&mu_);
    applying_ = false;
    last_apply_ = absl::Now() - start;
    ++updates_;
  }
  void OnDiscoveryError(const absl::Status& status) override {
    if (inner_ != nullptr) inner_->OnDiscoveryError(status);
  }

  bool applying() const {
    internal::MutexLock lock(&mu_);
    return applying_;
  }
  absl::Duration last_apply() const {
    internal::MutexLock lock(&mu_);
    return last_apply_;
  }
  // Whether `n` updates have been applied within `timeout`.
  bool WaitForUpdates(int n, absl::Duration timeout) {
    internal::MutexLock lock(&mu_);
    wanted_ = n;
    return mu_.AwaitWithTimeout(
        absl::Condition(
            +[](TimedObserver* o) ABSL_NO_THREAD_SAFETY_ANALYSIS {
              return o->updates_ >= o->wanted_;
            },
            this),
        timeout);
  }

 private:
  EndpointObserver* const inner_;
  mutable internal::Mutex mu_;
  bool applying_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration last_apply_ ABSL_GUARDED_BY(mu_);
  int updates_ ABSL_GUARDED_BY(mu_) = 0;
  int wanted_ ABSL_GUARDED_BY(mu_) = 0;
};

// Sends `cla` as `version` and waits for its ACK; the time it took.
double SendAndTimeAck(ScriptedAdsServer& server, const std::string& version,
                      const ClusterLoadAssignment& cla) {
  std::string nonce;
  const absl::Time start = absl::Now();
  if (!server.Send(testing::MakeResponse(kEds, version, {&cla}), &nonce)) {
    Die("the client's stream is gone");
  }
  std::optional<DiscoveryRequest> ack = server.WaitForRequest(
      kEds,
      [&nonce](const DiscoveryRequest& r) {
        return r.response_nonce() == nonce;
      },
      absl::Seconds(30));
  const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  if (!ack) Die(absl::StrCat("no answer to EDS version ", version));
  if (ack->has_error_detail()) {
    Die(absl::StrCat("EDS version ", version,
                     " NACKed: ", ack->error_detail().message()));
  }
  return ms;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) {
  using namespace mesh::bench;  // NOLINT: a program's main
  namespace xds = mesh::internal::xds;
  struct {
    int rounds = 30;
    int endpoints = 10'000;
  } f;
  ParseFlagsOrDie(argc, argv,
                  {{"rounds", "N", IntFlag(&f.rounds, 1)},
                   {"endpoints", "N", IntFlag(&f.endpoints, 2)}});

  auto server = ScriptedAdsServer::Start();
  auto bootstrap = xds::LoadXdsBootstrap(
      mesh::testing::PlaintextBootstrap(server->address()), "");
  if (!bootstrap.ok()) Die(bootstrap.status().ToString());
  auto client = std::make_shared<xds::XdsClient>(*std::move(bootstrap),
                                                 mesh::XdsOptions());

  // A's observer: a cluster's Destination with one channel's balancer.
  mesh::internal::Destination destination(
      "xds cluster a", "",
      mesh::testing::NewInlineTransport(mesh::testing::EchoAnswer()),
      std::make_shared<mesh::internal::TapHub>(),
      std::make_shared<mesh::internal::MetricsRegistry>(),
      std::make_shared<mesh::internal::TimerThread>());
  auto balancer = mesh::internal::Balancer::Create(mesh::BalancerOptions{});
  if (!balancer.ok()) Die(balancer.status().ToString());
  destination.Attach(balancer->get());
  TimedObserver a(&destination);
  TimedObserver b(nullptr);  // B's apply is not what is measured
  auto watch_a = client->WatchCluster("a", &a);
  auto watch_b = client->WatchCluster("b", &b);

  if (!server->WaitForRequest(kCds)) Die("no CDS request");
  const auto cluster_a = mesh::testing::MakeEdsCluster("a", "a-cla");
  const auto cluster_b = mesh::testing::MakeEdsCluster("b", "b-cla");
  std::string nonce;
  server->Send(mesh::testing::MakeResponse(kCds, "1", {&cluster_a, &cluster_b}),
               &nonce);
  if (!server->WaitForRequest(kEds, [](const DiscoveryRequest& r) {
        return r.resource_names_size() == 2;
      })) {
    Die("no EDS request for both clusters");
  }

  const int half = f.endpoints / 2;
  const ClusterLoadAssignment big[2] = {Assignment("a-cla", 0, f.endpoints),
                                        Assignment("a-cla", half, f.endpoints)};
  const ClusterLoadAssignment small[2] = {Assignment("b-cla", 0, 3),
                                          Assignment("b-cla", 3, 3)};
  // A starts from the second set, so that every timed update replaces half.
  SendAndTimeAck(*server, "0", big[1]);
  if (!a.WaitForUpdates(1, absl::Seconds(30))) Die("A's first update");

  std::vector<double> floor_ms, during_ms, a_apply_ms;
  int overlapped = 0, version = 1, b_updates = 0;
  for (int round = 0; round < f.rounds; ++round) {
    floor_ms.push_back(
        SendAndTimeAck(*server, absl::StrCat(version++), small[b_updates % 2]));
    if (!b.WaitForUpdates(++b_updates, absl::Seconds(30))) Die("B's update");

    SendAndTimeAck(*server, absl::StrCat(version++), big[round % 2]);
    during_ms.push_back(
        SendAndTimeAck(*server, absl::StrCat(version++), small[b_updates % 2]));
    // Only rounds where A's apply was still running count as "during".
    const bool during = a.applying();
    if (during) ++overlapped;
    if (!a.WaitForUpdates(round + 2, absl::Seconds(30))) Die("A's update");
    if (!b.WaitForUpdates(++b_updates, absl::Seconds(30))) Die("B's update");
    a_apply_ms.push_back(absl::ToDoubleMilliseconds(a.last_apply()));
    if (!during) during_ms.pop_back();
  }
  watch_a.reset();
  watch_b.reset();
  client->Shutdown();
  destination.Detach(balancer->get());
  destination.Shutdown();

  // Nearest-rank percentiles, as the other latency tables.
  const LatencyStats floor = LatencyStats::From("floor", floor_ms, 0);
  const LatencyStats during = LatencyStats::From("during", during_ms, 0);
  const LatencyStats apply = LatencyStats::From("apply", a_apply_ms, 0);
  std::printf(
      "| what (%d rounds) | p50 (ms) | max (ms) |\n|---|---:|---:|\n"
      "| B's ACK, nothing else in flight | %.2f | %.2f |\n"
      "| B's ACK while A's %d-endpoint update is applied (%d rounds of %d "
      "overlapped) | %.2f | %.2f |\n"
      "| A's apply (Destination and balancer) | %.2f | %.2f |\n",
      f.rounds, floor.Percentile(50), floor.Max(), f.endpoints, overlapped,
      f.rounds, during.Percentile(50), during.Max(), apply.Percentile(50),
      apply.Max());
  return 0;
}

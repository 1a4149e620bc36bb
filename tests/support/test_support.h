// Shared helpers for the integration tests: a fleet of real EchoBackends on
// loopback, a bounded wait-for-condition, a load of async calls, and a
// discovery source that counts its subscriptions.
//
// Thread-compatible unless noted.
#ifndef MESH_TESTS_SUPPORT_TEST_SUPPORT_H_
#define MESH_TESTS_SUPPORT_TEST_SUPPORT_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "mesh/channel.h"
#include "mesh/discovery.h"
#include "mesh/endpoint.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"
#include "tools/common/echo_backend.h"
#include "tools/common/process_stats.h"

namespace mesh::testing {

// Starts `n` EchoBackends on 127.0.0.1; aborts the test binary if one
// cannot listen (the machine is broken, not the code under test).
std::vector<std::unique_ptr<tools::EchoBackend>> StartBackends(int n);

// EchoBackends on each of `hosts` (loopback addresses: "127.0.0.2", "::1")
// at one port, which `*port` gets, keyed by host. The first picks a free
// port; if another host has it taken (a parallel test's server), all start
// over on a new one, 20 times at most. Empty if no port worked.
std::map<std::string, std::unique_ptr<tools::EchoBackend>> StartOnOnePort(
    const std::vector<std::string>& hosts, int* port);

// One Endpoint per backend, weight 1.
std::vector<Endpoint> EndpointsOf(
    const std::vector<std::unique_ptr<tools::EchoBackend>>& backends);

// The process's thread count (tools/common/process_stats.h).
using ::mesh::tools::ThreadsOfThisProcess;

// A Mesh over a StaticDiscovery, for tests that set endpoints and configs
// in code.
struct StaticMesh {
  StaticMesh();
  // Sets `config` for `target` and waits (bounded) until `channel` has one.
  void Configure(Channel& channel, const std::string& target,
                 const ServiceConfig& config);
  std::shared_ptr<StaticDiscovery> discovery;
  std::unique_ptr<Mesh> mesh;
};

// Polls `condition` every millisecond until it holds or `timeout` passes;
// returns its last value. For conditions with no event to wait on.
bool WaitFor(const std::function<bool()>& condition,
             absl::Duration timeout = absl::Seconds(10));

// Keeps `concurrency` async calls of `method` in flight until `total` have
// been started, then waits (bounded, 30 s) for all of them. Records each
// result in start order. Thread-compatible.
class Load {
 public:
  struct Outcome {
    absl::StatusCode code;
    std::string endpoint;
  };

  Load(Channel& channel, int total, int concurrency,
       std::string method = "/test.Echo/Say");

  // Runs `between(i)` on this thread before starting call i.
  void Run(const std::function<void(int)>& between = nullptr);

  int completed();
  const std::vector<Outcome>& results() const { return results_; }
  // Calls among results() that ended on `endpoint`, and that ended OK.
  int CountOn(const std::string& endpoint) const;
  int CountOk() const;

 private:
  Channel& channel_;
  const int total_;
  const int concurrency_;
  const std::string method_;
  internal::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int completed_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Outcome> results_;
};

// Forwards to another source and counts live subscriptions. Thread-safe.
class CountingDiscovery final : public DiscoverySource {
 public:
  explicit CountingDiscovery(std::shared_ptr<DiscoverySource> inner)
      : inner_(std::move(inner)) {}
  std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) override;
  std::unique_ptr<DiscoverySubscription> SubscribeConfig(
      const std::string& target, ServiceConfigObserver* observer) override;
  int subscribes() const { return subscribes_.load(); }
  int live() const { return live_->load(); }
  int config_subscribes() const { return config_subscribes_.load(); }
  int config_live() const { return config_live_->load(); }

 private:
  std::shared_ptr<DiscoverySource> inner_;
  std::atomic<int> subscribes_{0};
  std::shared_ptr<std::atomic<int>> live_ =
      std::make_shared<std::atomic<int>>(0);
  std::atomic<int> config_subscribes_{0};
  std::shared_ptr<std::atomic<int>> config_live_ =
      std::make_shared<std::atomic<int>>(0);
};

// A Mesh over a StaticDiscovery whose subscriptions are counted: `statics`
// to set endpoints and configs, `counting` to see what the Mesh subscribes.
struct CountedStaticMesh {
  CountedStaticMesh();
  std::shared_ptr<StaticDiscovery> statics;
  std::shared_ptr<CountingDiscovery> counting;
  std::unique_ptr<Mesh> mesh;
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_TEST_SUPPORT_H_

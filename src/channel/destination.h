// Destination is what a Mesh keeps per target: the discovery subscription,
// the endpoint set it maintains, the transport, and the balancers of the
// channels that call the target. Channels share it; it ends (unsubscribes,
// shuts its transport down) when the last channel lets go or the Mesh shuts
// down.
//
// Memory per endpoint: the set keeps one shared copy of each endpoint (a
// DestinationEndpoint); the channels' balancers hold that copy rather than
// their own, the lookup index for EndpointMetricsFor is 4-byte positions into
// the set's list, and an endpoint's metrics are made on its first call
// (endpoint_metrics_index.h).
//
// Thread-safe.
#ifndef MESH_SRC_CHANNEL_DESTINATION_H_
#define MESH_SRC_CHANNEL_DESTINATION_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "mesh/balancer.h"
#include "mesh/discovery.h"
#include "mesh/service_config.h"
#include "mesh/transport.h"
#include "src/balance/balancer.h"
#include "src/base/mutex.h"
#include "src/base/snapshot_cell.h"
#include "src/base/timer_thread.h"
#include "src/channel/backend_policy_state.h"
#include "src/channel/compiled_routes.h"
#include "src/channel/describe.h"
#include "src/channel/endpoint_admission.h"
#include "src/channel/endpoint_metrics_index.h"
#include "src/channel/pick_waiter.h"
#include "src/channel/waiter_queue.h"
#include "src/metrics/metrics_registry.h"
#include "src/model/endpoint_set.h"
#include "src/route/retry_budget.h"
#include "src/route/route_table.h"
#include "src/route/traffic_split.h"
#include "src/tap/tap_transport.h"

namespace mesh::internal {

class Destination final : public EndpointObserver,
                          public ServiceConfigObserver {
 public:
  // Sends through `transport`, with the tap hook of `tap_hub` around it
  // while anyone taps; records into `metrics` (shared by the Mesh's
  // destinations).
  // Route tables are built within `route_limits`. Calls waiting for
  // endpoints are released on `timers` (the Mesh's control thread).
  // `target` is the Mesh's key for it (a channel's target, a split
  // backend's authority, or "[scheme ]cluster NAME"); `authority` what its
  // calls carry as :authority (empty for a cluster: the channel's own).
  Destination(std::string target, std::string authority,
              std::unique_ptr<Transport> transport,
              std::shared_ptr<TapHub> tap_hub,
              std::shared_ptr<MetricsRegistry> metrics,
              std::shared_ptr<TimerThread> timers,
              const RouteLimits& route_limits = {},
              const DestinationTls& tls = {});
  ~Destination() override;

  // Subscribes to `name` of `source`: a target's endpoints and configs, or
  // a cluster's endpoints. Call once, right after construction.
  void Start(DiscoverySource& source, const std::string& name, bool cluster);
  // Stops discovery and shuts the transport down (in-flight calls end
  // CANCELLED). Idempotent.
  void Shutdown();

  // A balancer that follows this destination's endpoints; it gets the
  // current set at once. REQUIRES: Detach before the balancer dies.
  void Attach(Balancer* balancer);
  void Detach(Balancer* balancer);

  // UNAVAILABLE explaining why there is no endpoint to pick (not answered
  // yet, does not exist, empty), naming the target.
  absl::Status NoEndpointsStatus() const;

  // Waits until the destination has endpoints (OK), or discovery said it has
  // none for good or `timeout` passed (NoEndpointsStatus()).
  absl::Status WaitForEndpoints(absl::Duration timeout) const;

  // For a call whose pick found no endpoint. kReady: there are endpoints
  // now (pick again). kNever: there will be none (the target does not
  // exist, is not a mesh service, or the mesh is shutting down): fail now.
  // kQueued: discovery has not answered yet, or the destination exists with
  // no endpoints; `waiter` is fired, in arrival order with the others, on
  // the timer thread as soon as that changes either way.
  // kFull: the backend's queue (BackendPolicy::queue_capacity) is full.
  enum class WaitResult { kReady, kNever, kQueued, kFull };
  WaitResult AddWaiter(std::shared_ptr<PickWaiter> waiter);

  // Whether calls must wait for the first service config (the source's
  // RoutesRequired) and none has come yet. Lock-free.
  bool AwaitsRoutes() const {
    return routes_required_ && !has_config_.load(std::memory_order_acquire);
  }
  // For a call that AwaitsRoutes: kReady (a config came meanwhile), kNever
  // (shut down), or kQueued: `waiter` fires on the timer thread at the
  // first config, config error or shutdown.
  WaitResult AddRoutesWaiter(std::shared_ptr<PickWaiter> waiter);
  // Waits up to `timeout` for the first config (or a config error, or
  // shutdown): true if one has come.
  bool WaitForRoutes(absl::Duration timeout) const;
  // A call could not connect to one of the endpoints: the source may look
  // again early (DiscoverySubscription::RefreshSoon), passed on at most
  // every 100 ms. Any thread; does not block on the network.
  void OnConnectFailure();
  // The backend policy's state: drops, the circuit breaker, active faults,
  // the balancer options for its legs.
  BackendPolicyState& backend_policy() { return backend_policy_; }

  // UNAVAILABLE saying why there are no routes yet (the last config error,
  // or none yet), naming the target.
  absl::Status NoRoutesStatus() const;

  // Everything Mesh::Describe() shows for this destination.
  DestinationView View() const;

  // The route table compiled from the last service config (a table with only
  // the default route before one arrives), the retry budget and the traffic
  // split that go with it. Immutable once published; lock-free: one
  // snapshot read and one shared_ptr copy, whatever the number of routes.
  using Routes = CompiledRoutes;
  std::shared_ptr<const Routes> routes() const;

  // The metrics of one of this destination's current endpoints, made on the
  // endpoint's first call; null for an address not in the set. Lock-free
  // once made: one snapshot read and a hash lookup (the first call of an
  // endpoint takes the registry's lock, then metrics_mu_).
  std::shared_ptr<EndpointMetrics> EndpointMetricsFor(
      const std::string& address) const {
    return metrics_index_.For(address);
  }

  // Each channel's balancer state of each endpoint, for the metrics.
  void CollectGauges(std::vector<EndpointGauges>* out) const;

  // Counts the changes a channel's picker is built from: service configs
  // and backend policies applied. Read before the state a picker is built
  // from, so a picker that recorded it is current while it is unchanged.
  // Lock-free.
  uint64_t change_epoch() const {
    return change_epoch_.load(std::memory_order_acquire);
  }
  // Runs `on_change` on the timer thread after each such change, until
  // RemoveChangeListener(id). It must not block, and should hold only weak
  // references to what it rebuilds (a queued run may outlive its owner).
  uint64_t AddChangeListener(absl::AnyInvocable<void()> on_change);
  void RemoveChangeListener(uint64_t id);

  // The last service config from discovery; nullopt until one arrives.
  std::optional<ServiceConfig> service_config() const;

  const std::string& target() const { return target_; }
  // The :authority of its calls; empty for a cluster (the channel's own).
  const std::string& authority() const { return authority_; }
  // The transport for one request (see TapSwitch).
  Transport& transport() { return transports_.ForRequest(); }

  // (With require_identity, endpoints without an identity are left out
  // first.)
  void OnEndpointUpdate(const EndpointUpdate& update) override;
  void OnDiscoveryError(const absl::Status& status) override;
  void OnBackendPolicy(const BackendPolicy& policy) override;
  void OnServiceConfig(const ServiceConfig& config) override;
  void OnServiceConfigError(const absl::Status& status) override;
  void OnServiceConfigRemoved(const absl::Status& why) override;

 private:
  // Applies an update to the set, the balancers and the transport.
  void ApplyEndpointUpdate(const EndpointUpdate& update);

  using Set = BasicEndpointSet<DestinationEndpoint>;
  using List = Set::List;
  // Takes the queued waiters if the destination has endpoints or a final
  // answer now.
  WaiterQueue::List TakeSettledWaiters() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool SettledLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fires `waiters` in order, on the timer thread (inline once it is
  // closed). Takes no lock of ours.
  void Release(WaiterQueue::List waiters);
  // Hands the set's current endpoints to `balancer`, shared (no copy).
  void Feed(Balancer* balancer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a change and tells the listeners, on the timer thread.
  void Changed();
  // Compiles `config` into the next generation of routes.
  Routes RoutesFor(const ServiceConfig& config,
                   std::vector<std::string>* dropped);

  // Fixed at construction (routes_required_ and source_kind_ by Start).
  const std::string target_;
  const std::string authority_;
  bool routes_required_ = false;
  std::string source_kind_;
  std::atomic<bool> has_config_{false};
  BackendPolicyState backend_policy_;
  const std::shared_ptr<TimerThread> timers_;
  const RouteLimits route_limits_;
  const DestinationTls tls_;
  const TapSwitch transports_;
  const std::shared_ptr<MetricsRegistry> metrics_;
  EndpointMetricsIndex metrics_index_;

  // Read by every call without a lock (immutable snapshots, an atomic).
  // config_generation_ before routes_: the constructor's first RoutesFor
  // counts a generation while routes_ is initialised.
  std::atomic<uint64_t> config_generation_{0};
  SnapshotCell<std::shared_ptr<const Routes>> routes_;  // under mu_

  // Guards the endpoint set, the balancers fed from it, the service config
  // and the calls waiting for endpoints.
  mutable Mutex mu_;
  Set set_ ABSL_GUARDED_BY(mu_);
  std::vector<Balancer*> balancers_ ABSL_GUARDED_BY(mu_);
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  // The last NoEndpoints update's reason (EndpointUpdate::reason); empty
  // after any other update.
  std::string no_endpoints_reason_ ABSL_GUARDED_BY(mu_);
  // With require_identity: what the last update left out ("2 endpoint(s)
  // without a TLS identity left out ..."), for NoEndpointsStatus and the
  // log (once per distinct text); empty when nothing was.
  std::string identity_left_out_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<ServiceConfig> config_ ABSL_GUARDED_BY(mu_);
  absl::Status last_config_error_ ABSL_GUARDED_BY(mu_);
  // The source said the config is gone (OnServiceConfigRemoved) and none
  // came since: calls that await routes fail at once.
  bool config_removed_ ABSL_GUARDED_BY(mu_) = false;
  // Calls waiting for endpoints, in arrival order (some may have fired
  // already, by timeout or through another destination).
  WaiterQueue waiters_ ABSL_GUARDED_BY(mu_);
  // Calls waiting for the first config (routes_required_).
  WaiterQueue routes_waiters_ ABSL_GUARDED_BY(mu_);

  std::atomic<uint64_t> change_epoch_{0};
  // The change listeners, shared with the tasks that run them.
  using Listener = std::shared_ptr<absl::AnyInvocable<void()>>;
  Mutex listeners_mu_;
  uint64_t next_listener_ ABSL_GUARDED_BY(listeners_mu_) = 1;
  std::vector<std::pair<uint64_t, Listener>> listeners_
      ABSL_GUARDED_BY(listeners_mu_);

  // When OnConnectFailure last passed one on (Clock::Real() nanoseconds).
  std::atomic<int64_t> last_refresh_ns_{0};
  // Guards the discovery subscriptions (taken apart from mu_: a source may
  // deliver while one is being made or dropped).
  mutable Mutex subscription_mu_;
  std::unique_ptr<DiscoverySubscription> subscription_
      ABSL_GUARDED_BY(subscription_mu_);
  std::unique_ptr<DiscoverySubscription> config_subscription_
      ABSL_GUARDED_BY(subscription_mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_DESTINATION_H_

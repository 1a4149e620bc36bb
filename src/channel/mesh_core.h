// MeshCore is the shared state behind mesh::Mesh: options, the destinations
// in use (shared by channels, dropped when unused) and the shutdown flag.
// Channels hold it by shared_ptr so they may outlive the Mesh.
//
// Thread-safe.
#ifndef MESH_SRC_CHANNEL_MESH_CORE_H_
#define MESH_SRC_CHANNEL_MESH_CORE_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "mesh/mesh.h"
#include "src/admin/admin_server.h"
#include "src/base/mutex.h"
#include "src/base/timer_thread.h"
#include "src/channel/destination.h"
#include "src/tap/observe_server.h"
#include "src/tap/tap_hub.h"
#include "src/tls/identity_store.h"
#include "src/tls/identity_watch.h"

namespace mesh::internal {

class MeshCore {
 public:
  explicit MeshCore(MeshOptions options);

  // The destination for `target` (a channel's target, or a split backend's
  // authority), shared with other channels; created and subscribed, with the
  // source its scheme picks, on first use. INVALID_ARGUMENT for a scheme no
  // source serves; FAILED_PRECONDITION after Shutdown.
  absl::StatusOr<std::shared_ptr<Destination>> GetDestination(
      const std::string& target);
  // The destination for `cluster` of the source that serves `target`
  // (WeightedBackend::cluster), shared like the others.
  absl::StatusOr<std::shared_ptr<Destination>> GetClusterDestination(
      const std::string& target, const std::string& cluster);

  // The workload's identity; null without MeshOptions::identity.
  const std::shared_ptr<IdentityStore>& identity() const { return identity_; }

  // A JSON array with one object per destination in use (Mesh::Describe).
  std::string Describe();

  // Route and endpoint metrics in the Prometheus text format (Mesh::Metrics).
  std::string Metrics();

  // Reads and checks MeshOptions::identity, if set, and schedules its
  // refresh on the timer thread; INVALID_ARGUMENT naming what is wrong.
  // Call once, before use.
  absl::Status StartIdentity();
  // Starts the Observe server if MeshOptions::tap_address is set; the error
  // names that field. Call once, before use.
  absl::Status StartTapServer();
  TapHub& tap_hub() { return *tap_hub_; }
  int tap_port() const { return tap_port_; }
  // Starts the admin page if MeshOptions::admin_address is set; the error
  // names that field. Call once, before use.
  absl::Status StartAdminServer();
  // "ip:port" of the admin page; empty without one.
  std::string admin_address() const;

  // Runs `task` on the mesh's timer thread after `delay` (a retry's
  // backoff); false, leaving `task` with the caller, after Shutdown.
  bool RunLater(absl::Duration delay, absl::AnyInvocable<void()>& task);
  const std::shared_ptr<TimerThread>& timers() const { return timers_; }

  // Ends every destination's calls and discovery, and runs the retries
  // waiting for their backoff (they fail at once); later calls fail.
  void Shutdown();
  bool shut_down() const { return shut_down_.load(std::memory_order_acquire); }

 private:
  // Live destinations, sorted by target.
  std::vector<std::shared_ptr<Destination>> LiveDestinations();
  // The source serving `scheme` ("": the default) and the scheme's name for
  // keys (the default source's own scheme for ""); INVALID_ARGUMENT naming
  // the scheme when none serves it.
  absl::StatusOr<std::pair<DiscoverySource*, std::string>> SourceFor(
      const std::string& scheme) const;
  // Under mu_: the live destination keyed `key`, else a new one subscribed
  // to `name` (a target's name:port, "//authority/name:port", or a cluster)
  // of `source`, whose calls carry `authority` (empty for a cluster's: they
  // carry their channel's).
  absl::StatusOr<std::shared_ptr<Destination>> FindOrMake(
      const std::string& key, DiscoverySource& source, const std::string& name,
      const std::string& authority, bool cluster);

  const MeshOptions options_;
  const std::shared_ptr<MetricsRegistry> metrics_ =
      std::make_shared<MetricsRegistry>();
  std::atomic<bool> shut_down_{false};
  Mutex mu_;
  absl::flat_hash_map<std::string, std::weak_ptr<Destination>> destinations_
      ABSL_GUARDED_BY(mu_);

  // Re-reads the identity's files every refresh_interval until Shutdown.
  void ScheduleIdentityRefresh();
  // Re-reads the files of one of endpoint_stores_ every refresh_interval.
  void ScheduleEndpointStoreRefresh(std::shared_ptr<IdentityStore> store);
  // Has `store`'s files taken as soon as they change (identity_watch_),
  // beside the polling; logs why not when they cannot be watched.
  void WatchFiles(const std::shared_ptr<IdentityStore>& store);
  // Runs identity_watch_'s Tick every IdentityWatch::kTick until Shutdown.
  void ScheduleWatchTick();

  // Declared before timers_, whose thread runs its refresh: destroyed after
  // that thread is joined.
  std::shared_ptr<IdentityStore> identity_;  // set before use
  // Watches the directories of identity_'s files and endpoint_stores_'
  // (one inotify instance); ticked on timers_ once it watches any.
  IdentityWatch identity_watch_;
  std::atomic<bool> watch_ticking_{false};
  // The certificates of endpoints' EndpointTls, shared by every
  // destination's transport, refreshed on timers_ (destroyed after its
  // thread is joined).
  const std::shared_ptr<EndpointStores> endpoint_stores_ =
      std::make_shared<EndpointStores>(
          [this](std::shared_ptr<IdentityStore> store) {
            WatchFiles(store);
            ScheduleEndpointStoreRefresh(std::move(store));
          });
  // Retries' backoff, and the release and timeout of calls waiting for
  // endpoints, the identity's refresh; shared with the destinations.
  const std::shared_ptr<TimerThread> timers_ = std::make_shared<TimerThread>();
  const std::shared_ptr<TapHub> tap_hub_;
  std::unique_ptr<ObserveServer> observe_server_;  // set before use
  int tap_port_ = 0;                               // set before use
  std::unique_ptr<AdminServer> admin_server_;      // set before use
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_MESH_CORE_H_

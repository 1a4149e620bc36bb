// XdsClient: one ADS stream (state of the world) to the bootstrap's server,
// shared by every target and cluster of a Mesh, and the cache of what it has
// accepted. Three parts: the ADS call (xds_ads_call.h), the protocol here
// with its cache (xds_resource_cache.h), and the watches that deliver what
// changed (xds_watchers.h); the conversions are xds_convert.h's.
//
// Targets ("name:port", the Listener's name) get service configs: Listener →
// RouteConfiguration (RDS or inline) → the virtual host for the target →
// routes whose backends are clusters. Clusters get endpoints: Cluster → its
// ClusterLoadAssignment (EDS) → the endpoints of the first priority that has
// any; or, for a LOGICAL_DNS or STRICT_DNS cluster, Cluster → its hosts,
// each resolved by one DNS source the client makes when it first needs it
// → every address of every host. The clusters a target's routes name are
// asked for as soon as the routes arrive, so the first call to one finds
// them cached.
//
// Protocol: per type a version and a nonce; each response ACKed (its version
// echoed) or NACKed (the last accepted version, the new nonce, and an
// error_detail naming each bad resource and its problem); the valid
// resources of a partly bad response are applied. A name asked for and not
// sent within resource_timeout does not exist. A Listener or Cluster missing
// from a full LDS/CDS response is deleted unless the server has
// ignore_resource_deletion. A lost stream keeps the cache, reconnects with
// jittered backoff and asks for every name again.
//
//   auto client = std::make_shared<XdsClient>(bootstrap, options);
//   auto sub = client->WatchTarget("echo:7000", &config_observer,
//                                  &endpoint_observer);
//
// Thread-safe. Observers are called one at a time, in order, never under
// the client's lock: what a change delivers is queued under it and run
// once it is released (on the thread that brought the change: a gRPC
// thread, the timer thread, or the subscriber's own while it subscribes),
// so an observer may call back into the client. Nothing reaches an
// observer once its subscription is destroyed. The DNS source's answers
// reach the client through the timer thread (xds_dns_cluster.h says why).
// The timer thread is the Mesh's (LendTimers), or the client's own when
// none was lent before it first needed one.
#ifndef MESH_SRC_DISCOVERY_XDS_XDS_CLIENT_H_
#define MESH_SRC_DISCOVERY_XDS_XDS_CLIENT_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "mesh/discovery.h"
#include "mesh/xds.h"
#include "src/base/backoff.h"
#include "src/base/log_limiter.h"
#include "src/base/mutex.h"
#include "src/base/timer_scope.h"
#include "src/base/timer_thread.h"
#include "src/base/work_serializer.h"
#include "src/discovery/xds/bootstrap.h"
#include "src/discovery/xds/xds_ads_call.h"
#include "src/discovery/xds/xds_resource_cache.h"
#include "src/discovery/xds/xds_resources.h"
#include "src/discovery/xds/xds_watchers.h"

namespace envoy::config::core::v3 {
class Node;
}  // namespace envoy::config::core::v3

namespace mesh::internal::xds {

// The Node the client sends in a stream's first request.
void FillNode(const XdsNode& node, envoy::config::core::v3::Node* out);

class XdsClient final : public std::enable_shared_from_this<XdsClient>,
                        private AdsCall::Owner {
 public:
  // `credentials` for the stream to the server (null: plaintext; the
  // bootstrap's channel_creds are the caller's to turn into these). `dns`
  // is called when a DNS cluster is first watched, and again at a later
  // update (at most every 5 s) while it fails; null: DNS clusters have no
  // endpoints (their calls fail naming why).
  XdsClient(XdsBootstrap bootstrap, const XdsOptions& options,
            std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr,
            DnsSourceFactory dns = nullptr);
  ~XdsClient();
  XdsClient(const XdsClient&) = delete;
  XdsClient& operator=(const XdsClient&) = delete;

  // A target's configs and its own endpoint state (none of its own: it
  // exists or not), until the returned handle is destroyed.
  std::unique_ptr<DiscoverySubscription> WatchTarget(
      const std::string& target, ServiceConfigObserver* config,
      EndpointObserver* endpoints);
  // A cluster's endpoints, until the returned handle is destroyed.
  std::unique_ptr<DiscoverySubscription> WatchCluster(
      const std::string& cluster, EndpointObserver* endpoints);

  // Every resource asked for or cached (Listeners, RouteConfigurations,
  // Clusters, then ClusterLoadAssignments, each by name), taken at one
  // moment under the client's lock; with each one's accepted form if
  // `with_contents` (shared, not copied). For CSDS.
  std::vector<ResourceSnapshot> Snapshot(bool with_contents) const;
  // Who the client says it is (the bootstrap's node).
  const XdsNode& node() const { return bootstrap_.node; }
  // Whether Shutdown has been called.
  bool shut_down() const;
  DiscoverySubscription::State StreamState() const;
  // The stream's state with the resources behind one watch.
  DiscoverySubscription::State WatchState(const void* watch) const;
  // A call could not connect to one of a watch's endpoints: a DNS
  // cluster's names are asked again early (DiscoverySubscription::
  // RefreshSoon); EDS clusters and targets ignore it.
  void RefreshSoon(const void* watch);

  // Schedules on `timers` from now on (reconnects, resource clocks, DNS
  // answers), unless the client already has a timer thread.
  void LendTimers(const std::shared_ptr<TimerThread>& timers);

  // Cancels the stream and waits until no callback runs. Idempotent.
  void Shutdown();

 private:
  class Subscription;

  void Unwatch(const void* watch);
  // Sets the names each type needs; sends a request for each type whose
  // names changed (arming does-not-exist clocks for new names once the
  // stream has answered), and opens or ends the stream as watches come
  // and go.
  void UpdateSubscriptionsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendRequestLocked(ResourceType type, const std::string& nonce,
                         const std::string& error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // AdsCall::Owner: a response applied, ACKed or NACKed; its deliveries
  // run; the stream's end.
  void OnAdsResponse(AdsCall* call, const grpc::ByteBuffer& bytes) override;
  void AfterAdsResponse() override { serializer_.DrainQueue(); }
  void OnAdsDone(AdsCall* call, const grpc::Status& status,
                 bool got_responses) override;
  void EndCallLocked(AdsCall* call, const grpc::Status& status,
                     bool got_responses) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartCallLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The NACK of a response of `type` with `errors`, as sent and logged.
  std::string NackDetail(ResourceType type, const std::string& version,
                         int resources, std::vector<std::string> errors);
  void OnResourceTimeout(ResourceType type, const std::string& name,
                         uint64_t number);
  // Starts the does-not-exist clock of each name of `type` asked for and
  // not had, that has none.
  void ArmTimersLocked(ResourceType type) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Delivers what changed to the watches.
  void NotifyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The stream ended with `status`: watches that have nothing yet are told
  // why (their waiting calls name it); UNIMPLEMENTED fails them at once.
  void ReportStreamEndLocked(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // On the timer thread, after DNS watch `id` changed.
  void OnDnsAnswer(uint64_t id);
  // Runs `work` on the timer thread with the client alive, never on the
  // caller's (which may be the DNS source's, or a call's); dropped after
  // Shutdown. Any thread; takes timers_mu_ only.
  void PostToTimers(absl::AnyInvocable<void(XdsClient&)> work);
  // Runs `task` on the timer thread after `delay` (the thread lent, else
  // one made now); 0, the task dropped, after Shutdown. Takes timers_mu_.
  TimerScope::Id RunAfter(absl::Duration delay,
                          absl::AnyInvocable<void()> task);

  const XdsBootstrap bootstrap_;
  const XdsOptions options_;
  // A leaf lock (taken under mu_, never the other way) for the scope of
  // the client's tasks on its timer thread: made when lent or first
  // needed, closed by Shutdown, kept until the client goes (its tasks are
  // cancelled outside this lock, since a running one may take it).
  Mutex timers_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::unique_ptr<TimerScope> timers_ ABSL_GUARDED_BY(timers_mu_);
  bool timers_closed_ ABSL_GUARDED_BY(timers_mu_) = false;
  grpc::GenericStub stub_;
  // Lines a server can repeat at will (NACKs, unknown types): one a period.
  LogLimiter log_limiter_;
  // Where the watches' deliveries are queued under mu_ and run after it.
  WorkSerializer serializer_;

  mutable Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  AdsCall* call_ ABSL_GUARDED_BY(mu_) = nullptr;  // the open stream, if any
  bool sent_node_ ABSL_GUARDED_BY(mu_) = false;
  // The stream is being ended because nothing is watched.
  bool ending_on_purpose_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t timer_numbers_ ABSL_GUARDED_BY(mu_) = 0;
  TimerScope::Id reconnect_timer_ ABSL_GUARDED_BY(mu_) = 0;
  ExponentialBackoff backoff_ ABSL_GUARDED_BY(mu_);
  absl::InsecureBitGen gen_ ABSL_GUARDED_BY(mu_);
  DiscoverySubscription::State stream_state_ ABSL_GUARDED_BY(mu_);
  ResourceCache cache_ ABSL_GUARDED_BY(mu_);
  XdsWatchers watchers_ ABSL_GUARDED_BY(mu_);
  // OnAdsDones that have released mu_ and still run deliveries.
  int callbacks_draining_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_XDS_CLIENT_H_

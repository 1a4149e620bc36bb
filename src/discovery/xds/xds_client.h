// XdsClient: one ADS stream (state of the world) to the bootstrap's server,
// shared by every target and cluster of a Mesh, and the cache of what it has
// accepted.
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

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <variant>
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
#include "src/discovery/xds/xds_resources.h"

namespace envoy::config::core::v3 {
class Node;
}  // namespace envoy::config::core::v3

namespace mesh::internal::xds {

enum class ResourceType { kListener, kRouteConfig, kCluster, kEndpoints };
constexpr int kResourceTypes = 4;
const char* TypeUrl(ResourceType type);
const char* TypeName(ResourceType type);  // "Listener", …

using AnyResource = std::variant<ListenerResource, RouteConfigResource,
                                 ClusterResource, EndpointsResource>;

// What the client believes about one resource, as CSDS shows it.
struct ResourceStatus {
  enum class State { kRequested, kDoesNotExist, kAcked, kNacked };
  State state = State::kRequested;
  // Of the accepted resource; at most 256 bytes of it (QuotedText).
  std::string version;
  absl::Time updated;          // when it was accepted
  std::string error;           // the last NACK's reason (kNacked)
  std::string nacked_version;  // of the response it NACKed (kNacked), as above
  absl::Time nacked_at;        // when that response came (kNacked)
  bool has_resource = false;   // a good version is kept
};
const char* StateName(ResourceStatus::State state);

// One resource of XdsClient::Snapshot.
struct ResourceSnapshot {
  ResourceType type;
  std::string name;
  ResourceStatus status;
  // The accepted resource as it came (serialized `type`), shared with the
  // client's cache; null if none is kept or contents were not asked for.
  std::shared_ptr<const std::string> contents;
};

// The Node the client sends in a stream's first request.
void FillNode(const XdsNode& node, envoy::config::core::v3::Node* out);

// Makes the DNS source of the client's DNS clusters (NewDnsDiscovery with
// XdsOptions::dns, in xds_discovery.cc).
using DnsSourceFactory =
    std::function<absl::StatusOr<std::shared_ptr<DiscoverySource>>()>;

class XdsClient : public std::enable_shared_from_this<XdsClient> {
 public:
  // `credentials` for the stream to the server (null: plaintext; the
  // bootstrap's channel_creds are the caller's to turn into these). `dns`
  // is called once, when a DNS cluster is first watched; null: DNS
  // clusters have no endpoints (their calls fail naming why).
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
  class Call;
  class Subscription;
  struct Entry;
  struct TargetWatch;
  struct ClusterWatch;
  struct DnsWatch;
  struct TypeState;

  void Unwatch(const void* watch);
  // Recomputes the names each type needs; sends a request for each type
  // whose names changed, and arms does-not-exist timers for new names.
  void UpdateSubscriptionsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendRequestLocked(ResourceType type, const std::string& nonce,
                         const std::string& error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A response of the stream `call`: applied, ACKed or NACKed.
  void OnResponse(Call* call, const grpc::ByteBuffer& bytes);
  void OnCallDone(Call* call, const grpc::Status& status, bool got_responses);
  void EndCallLocked(Call* call, const grpc::Status& status, bool got_responses)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartCallLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnResourceTimeout(ResourceType type, const std::string& name,
                         uint64_t number);
  // Starts the does-not-exist clock of each name of `type` asked for and
  // not had, that has none.
  void ArmTimersLocked(ResourceType type) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Delivers what changed to the watches.
  void NotifyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The targets whose Listener names RouteConfiguration
  // `route_config_name`: the virtual hosts they reach are converted when it
  // comes, the others when first reached.
  std::vector<std::string> AuthoritiesReachingLocked(
      const std::string& route_config_name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The stream ended with `status`: watches that have nothing yet are told
  // why (their waiting calls name it); UNIMPLEMENTED fails them at once.
  void ReportStreamEndLocked(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tells a target that has nothing yet what it waits for (a resource named
  // and not come), once per change.
  void WaitingForLocked(TargetWatch& w, std::string what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NotifyTargetLocked(TargetWatch& watch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NotifyClusterLocked(ClusterWatch& watch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A cluster with no endpoints for `why` (it or its assignment does not
  // exist; DNS cannot be asked): delivered once, its DNS watches dropped.
  void FailClusterLocked(ClusterWatch& watch, std::string why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A LOGICAL_DNS or STRICT_DNS cluster: its hosts watched, their answers
  // delivered together once they say something.
  void NotifyDnsClusterLocked(ClusterWatch& watch,
                              const std::shared_ptr<const AnyResource>& cluster)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `watch`'s DNS watches those of `cluster`'s hosts: a host it had
  // keeps its subscription; a new one is subscribed (the DNS source made
  // on first need), one gone is unsubscribed.
  absl::Status WatchDnsHostsLocked(ClusterWatch& watch,
                                   const ClusterResource& cluster)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // On the timer thread, after DNS watch `id` changed: its cluster is
  // looked at again, if the watch is still there.
  void OnDnsAnswer(uint64_t id);
  BackendPolicy PolicyOf(const ClusterResource& cluster) const;
  // Runs `work` on the timer thread with the client alive, never on the
  // caller's (which may be the DNS source's, or a call's); dropped after
  // Shutdown. Any thread; takes timers_mu_ only.
  void PostToTimers(absl::AnyInvocable<void(XdsClient&)> work);
  // Runs `task` on the timer thread after `delay` (the thread lent, else
  // one made now); 0, the task dropped, after Shutdown. Takes timers_mu_.
  TimerScope::Id RunAfter(absl::Duration delay,
                          absl::AnyInvocable<void()> task);
  Entry* Find(ResourceType type, const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const XdsBootstrap bootstrap_;
  const XdsOptions options_;
  const DnsSourceFactory dns_factory_;
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
  Call* call_ ABSL_GUARDED_BY(mu_) = nullptr;  // the open stream, if any
  bool sent_node_ ABSL_GUARDED_BY(mu_) = false;
  // The stream is being ended because nothing is watched.
  bool ending_on_purpose_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t timer_numbers_ ABSL_GUARDED_BY(mu_) = 0;
  TimerScope::Id reconnect_timer_ ABSL_GUARDED_BY(mu_) = 0;
  ExponentialBackoff backoff_ ABSL_GUARDED_BY(mu_);
  absl::InsecureBitGen gen_ ABSL_GUARDED_BY(mu_);
  DiscoverySubscription::State stream_state_ ABSL_GUARDED_BY(mu_);
  std::array<std::unique_ptr<TypeState>, kResourceTypes> types_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<TargetWatch>> targets_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<ClusterWatch>> clusters_ ABSL_GUARDED_BY(mu_);
  // The DNS clusters' source, shared by all of them: made on first need
  // (null before, and after Shutdown), or why it could not be.
  std::shared_ptr<DiscoverySource> dns_ ABSL_GUARDED_BY(mu_);
  absl::Status dns_status_ ABSL_GUARDED_BY(mu_);
  absl::Time dns_failed_at_ ABSL_GUARDED_BY(mu_);
  uint64_t dns_ids_ ABSL_GUARDED_BY(mu_) = 0;  // the last DnsWatch::id
  // OnCallDones that have released mu_ and still run deliveries.
  int callbacks_draining_ ABSL_GUARDED_BY(mu_) = 0;
};

// The endpoints a cluster's calls go to: the first priority with any, each
// endpoint's weight scaled by its locality's share.
std::vector<Endpoint> EndpointsToServe(const EndpointsResource& resource);

// What a cluster's outlier_detection asks of its balancers: consecutive
// failures (0 when enforcing_consecutive_5xx is 0), Envoy's backoff and
// ejected share, and interval ejection by success rate and failure
// percentage as configured.
BackendPolicy::Ejection EjectionOf(const OutlierDetection& od);

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_XDS_CLIENT_H_

// XdsWatchers: the watches of one XdsClient — targets (a Listener's
// service configs and the target's own existence) and clusters (a
// Cluster's endpoints, by EDS or by DNS) — and what each was last told.
// After every change of the client's cache each watch is looked at and
// delivers what changed for it: queued on the client's WorkSerializer
// through the watch's DeliveryGate, run once the client's lock is released.
//
//   const void* key = watchers.AddCluster("books", &observer);
//   cache.SetNames(ResourceType::kCluster,
//                  watchers.NamesWanted(cache)[...]);  // asked for
//   watchers.NotifyClusters(cache);  // under the client's lock
//
// Thread-compatible: the client calls it under its lock. A DNS cluster's
// hosts are followed by one DNS source, made on first need.
#ifndef MESH_SRC_DISCOVERY_XDS_XDS_WATCHERS_H_
#define MESH_SRC_DISCOVERY_XDS_XDS_WATCHERS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/discovery.h"
#include "src/base/work_serializer.h"
#include "src/discovery/xds/xds_dns_cluster.h"
#include "src/discovery/xds/xds_resource_cache.h"
#include "src/discovery/xds/xds_resources.h"

namespace mesh::internal::xds {

// Makes the DNS source of the client's DNS clusters (NewDnsDiscovery with
// XdsOptions::dns, in xds_discovery.cc).
using DnsSourceFactory =
    std::function<absl::StatusOr<std::shared_ptr<DiscoverySource>>()>;

// One host of a DNS cluster, followed by the DNS source.
struct DnsWatch {
  // Unique among the watches: what a wake-up scheduled by `answer` looks
  // for (it finds nothing once the watch is gone).
  uint64_t id = 0;
  DnsHost host;
  std::unique_ptr<DnsHostAnswer> answer;
  // Declared last, destroyed first: `answer` is not called after.
  std::unique_ptr<DiscoverySubscription> subscription;
};

class XdsWatchers {
 public:
  struct Options {
    // Deliveries are queued here.
    WorkSerializer* serializer = nullptr;
    // Round robin as the Cluster says (else P2C).
    bool honour_round_robin = false;
    // Called when a DNS cluster is first watched, and again at a later
    // update (at most every 5 s) while it fails; null: DNS clusters have no
    // endpoints (their calls fail naming why).
    DnsSourceFactory dns;
    // Called after DNS watch `id` has something new, on the DNS source's
    // thread or inside Subscribe (under the client's lock): it may take
    // leaf locks only. The client is to call OnDnsAnswer(id) from another
    // thread (xds_dns_cluster.h says why).
    std::function<void(uint64_t id)> wake_dns;
  };
  explicit XdsWatchers(Options options);
  ~XdsWatchers();
  XdsWatchers(const XdsWatchers&) = delete;
  XdsWatchers& operator=(const XdsWatchers&) = delete;

  // A new watch of a target (either observer may be null) or a cluster;
  // the key names it from then on.
  const void* AddTarget(std::string target, ServiceConfigObserver* config,
                        EndpointObserver* endpoints);
  const void* AddCluster(std::string cluster, EndpointObserver* endpoints);
  // The watch gone. Its gate (null if none) is to be closed once the
  // client's lock is released: a delivery running elsewhere is waited for.
  std::shared_ptr<DeliveryGate> Remove(const void* watch);
  bool empty() const { return targets_.empty() && clusters_.empty(); }

  // The names of each type the watches need, given what `cache` has: the
  // targets' Listeners and the RouteConfigurations they name, the clusters
  // watched and those the targets' routes name, the assignments of the EDS
  // clusters among them.
  std::array<std::set<std::string>, kResourceTypes> NamesWanted(
      const ResourceCache& cache) const;
  // The targets whose cached Listener names `route_config_name`.
  std::vector<std::string> AuthoritiesReaching(
      const ResourceCache& cache, const std::string& route_config_name) const;

  // Each target, then each cluster, delivers what changed in `cache`.
  void NotifyTargets(const ResourceCache& cache);
  void NotifyClusters(const ResourceCache& cache);
  // After DNS watch `id` has something new: its cluster is looked at
  // again, if the watch is still there.
  void OnDnsAnswer(const ResourceCache& cache, uint64_t id);
  // The stream ended with `error`: watches that have nothing yet are told
  // (their waiting calls name it); if `final`, a target's config observer
  // too. The others keep serving what they have.
  void ReportStreamEnd(const absl::Status& error, bool final);
  // The resources behind `watch`, with their status, added to `state`.
  void AddResourcesOf(const ResourceCache& cache, const void* watch,
                      DiscoverySubscription::State* state) const;
  // A call could not connect to one of `watch`'s endpoints: a DNS
  // cluster's hosts are asked again early; the others ignore it.
  void RefreshSoon(const void* watch);

  // The DNS watches and their source, taken at shutdown to be destroyed
  // outside the client's lock (the watches first); none is made after.
  struct Dns {
    // Declared first, destroyed last: the source outlives its watches.
    std::shared_ptr<DiscoverySource> source;
    std::vector<DnsWatch> watches;
  };
  Dns TakeDns();

 private:
  struct TargetWatch;
  struct ClusterWatch;

  void NotifyTarget(const ResourceCache& cache, TargetWatch& w);
  // Tells a target that has nothing yet what it waits for (a resource
  // named and not come), once per change.
  void WaitingFor(TargetWatch& w, std::string what);
  void NotifyCluster(const ResourceCache& cache, ClusterWatch& w);
  // A cluster with no endpoints for `why` (it or its assignment does not
  // exist; DNS cannot be asked): delivered once, its DNS watches dropped.
  void FailCluster(ClusterWatch& w, std::string why);
  // A LOGICAL_DNS or STRICT_DNS cluster: its hosts watched, their answers
  // delivered together once they say something.
  void NotifyDnsCluster(ClusterWatch& w,
                        const std::shared_ptr<const AnyResource>& cluster);
  // Makes `w`'s DNS watches those of `cluster`'s hosts: a host it had
  // keeps its subscription; a new one is subscribed (the DNS source made
  // on first need), one gone is unsubscribed.
  absl::Status WatchDnsHosts(ClusterWatch& w, const ClusterResource& cluster);

  const Options options_;
  // The DNS clusters' source, shared by all of them: made on first need
  // (null before, and after TakeDns), or why it could not be. Declared
  // before the watches, so that it outlives their DNS subscriptions.
  std::shared_ptr<DiscoverySource> dns_;
  std::vector<std::unique_ptr<TargetWatch>> targets_;
  std::vector<std::unique_ptr<ClusterWatch>> clusters_;
  absl::Status dns_status_;
  absl::Time dns_failed_at_;
  bool dns_taken_ = false;
  uint64_t dns_ids_ = 0;  // the last DnsWatch::id
};

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_XDS_WATCHERS_H_

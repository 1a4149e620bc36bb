// BuiltinSource: what the Mesh asks of the discovery sources it ships
// (Linkerd, xDS, DNS) beyond the public DiscoverySource, kept off the
// public interface: clusters, routes that must come first, authorities in
// targets, a status service, and the Mesh's timer thread lent to them.
// An application's own source is a plain DiscoverySource: AsBuiltin gives
// null for it, and the Mesh treats it as having none of these.
//
//   if (BuiltinSource* b = AsBuiltin(source.get())) b->LendTimers(timers);
//
// Thread-safe, as DiscoverySource.
#ifndef MESH_SRC_DISCOVERY_COMMON_BUILTIN_SOURCE_H_
#define MESH_SRC_DISCOVERY_COMMON_BUILTIN_SOURCE_H_

#include <memory>
#include <string>

#include "mesh/discovery.h"
#include "src/base/timer_thread.h"

namespace grpc {
class Service;
}  // namespace grpc

namespace mesh::internal {

class BuiltinSource : public DiscoverySource {
 public:
  // Starts delivering the endpoints of one of the source's clusters (what a
  // WeightedBackend::cluster names; xDS clusters). Null for a source
  // without clusters: the backend then has no endpoints, for good.
  virtual std::unique_ptr<DiscoverySubscription> SubscribeCluster(
      const std::string& cluster, EndpointObserver* observer) {
    (void)cluster;
    (void)observer;
    return nullptr;
  }
  // True if calls to a target cannot be sent before its first service
  // config (xDS: the listener's routes name the clusters). Calls then wait
  // for it, as they wait for endpoints (ChannelOptions::fail_fast_timeout).
  virtual bool RoutesRequired() const { return false; }
  // True if targets of this source may name an authority, as gRPC's
  // "dns://10.0.0.2:53/db:5432" names a DNS server: Subscribe and
  // SubscribeConfig then get "//authority/name:port" (the source checks
  // it). False: such a target is INVALID_ARGUMENT.
  virtual bool TakesAuthority() const { return false; }
  // What the source is, for Describe() and the admin page: "linkerd",
  // "xds", "dns".
  virtual std::string KindName() const = 0;
  // A gRPC service that reports the source's state to debugging tools,
  // served on MeshOptions::tap_address under tap's access rule (xDS: CSDS).
  // Null for none. Sources may share one object; the Mesh registers each
  // once and holds it while its tap server runs.
  virtual std::shared_ptr<grpc::Service> StatusService() const {
    return nullptr;
  }
  // The Mesh lends its timer thread (reconnect backoffs, resource clocks):
  // the source schedules on it from then on, so a Mesh runs one timer
  // thread for all its parts. The first one lent is kept (a source may
  // serve several Meshes, and outlives none of what it holds); a source
  // that needs one before any is lent (used without a Mesh) makes its own.
  // The source schedules with TimerThread::RunAfterPastClose (directly or
  // through a TimerScope): the Mesh's shutdown hands back only its own
  // tasks, and the thread runs the source's while the source holds it.
  // Called before the Mesh's first Subscribe.
  virtual void LendTimers(const std::shared_ptr<TimerThread>& timers) {
    (void)timers;
  }
};

// `source` as a built-in source; null for an application's own (or null).
inline BuiltinSource* AsBuiltin(DiscoverySource* source) {
  return dynamic_cast<BuiltinSource*>(source);
}
inline const BuiltinSource* AsBuiltin(const DiscoverySource* source) {
  return dynamic_cast<const BuiltinSource*>(source);
}

}  // namespace mesh::internal

#endif  // MESH_SRC_DISCOVERY_COMMON_BUILTIN_SOURCE_H_

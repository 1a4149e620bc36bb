// xDS discovery: endpoints and routes from an xDS control plane (istiod, or
// any server of Envoy's Aggregated Discovery Service), configured by the
// same bootstrap file as gRPC's proxyless xDS client. Link mesh_xds.
//
//   mesh::XdsOptions xds;  // bootstrap from GRPC_XDS_BOOTSTRAP
//   auto source = mesh::NewXdsDiscovery(xds);  // StatusOr
//   mesh::MeshOptions options;
//   options.discovery = *source;  // serves "name:port" and "xds:///name:port"
//   auto channel = (*mesh::Mesh::Create(options))->NewChannel(
//       "xds:///echo.default.svc.cluster.local:7000");
//
// Thread-safe.
#ifndef MESH_XDS_H_
#define MESH_XDS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/discovery.h"
#include "mesh/dns.h"
#include "mesh/export.h"

namespace mesh {

struct MESH_EXPORT XdsOptions {
  // The bootstrap as JSON text; empty: bootstrap_path, then the file named
  // by GRPC_XDS_BOOTSTRAP, then the JSON in GRPC_XDS_BOOTSTRAP_CONFIG.
  std::string bootstrap_json;
  std::string bootstrap_path;
  // A resource asked for and not sent within this time does not exist (its
  // calls fail UNAVAILABLE saying so); gRPC's is 15 s.
  absl::Duration resource_timeout = absl::Seconds(15);
  // Reconnect backoff after the stream ends: jittered, doubling from
  // backoff_min to backoff_max, reset after a stream that delivered.
  absl::Duration backoff_min = absl::Seconds(1);
  absl::Duration backoff_max = absl::Seconds(120);
  // Largest response accepted from the server (at least 1024).
  int max_message_bytes = 16 << 20;
  // A Cluster's lb_policy ROUND_ROBIN (and LEAST_REQUEST) is served by the
  // channel's balancer, P2C Peak-EWMA by default, which routes around slow
  // endpoints; true honours ROUND_ROBIN literally. RING_HASH is always
  // consistent hashing.
  bool honour_round_robin = false;
  // How LOGICAL_DNS and STRICT_DNS clusters resolve their hosts: one DNS
  // source (NewDnsDiscovery with these options) for all of them, started
  // when the first is watched. Checked by NewXdsDiscovery.
  DnsOptions dns;
};

// One ADS stream to the bootstrap's first server, shared by every target and
// cluster of the Mesh. INVALID_ARGUMENT naming the field for a bad bootstrap
// or options; connecting is lazy (a server that is down is retried). What
// the client holds is served as CSDS on the Mesh's tap address
// (docs/xds.md). Its timers run on the Mesh's timer thread.
MESH_EXPORT absl::StatusOr<std::shared_ptr<DiscoverySource>> NewXdsDiscovery(
    const XdsOptions& options);

}  // namespace mesh

#endif  // MESH_XDS_H_

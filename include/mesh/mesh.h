// Mesh: the runtime a service links in instead of a sidecar proxy.
//
// A Mesh owns the discovery subscriptions and transports for the
// destinations its channels call. Create one per process from MeshOptions,
// then make a Channel per destination.
//
//   auto discovery = mesh::StaticDiscovery::Create();
//   discovery->SetEndpoints("books:7001", {{"127.0.0.1:7001"}});
//   mesh::MeshOptions options;
//   options.discovery = discovery;
//   absl::StatusOr<std::unique_ptr<mesh::Mesh>> m =
//   mesh::Mesh::Create(options); auto channel = (*m)->NewChannel("books:7001");
//
// Thread-safe. Destroying a Mesh cancels the calls in flight (each completes
// with a status, CANCELLED or UNAVAILABLE) and returns once their callbacks
// have run.
#ifndef MESH_MESH_H_
#define MESH_MESH_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/balancer.h"
#include "mesh/channel.h"
#include "mesh/discovery.h"
#include "mesh/transport.h"

namespace mesh {

namespace internal {
class MeshCore;
}

struct MeshOptions {
  // Where endpoints come from. Required.
  std::shared_ptr<DiscoverySource> discovery;
  // Makes the transport for one destination (shared by that destination's
  // channels). Empty: the gRPC transport with default options.
  std::function<std::unique_ptr<Transport>()> transport_factory;
};

struct ChannelOptions {
  // Balancing policy and its tuning for this channel.
  BalancerOptions balancer;
  // Deadline for calls that do not set CallOptions::timeout. Infinite: none.
  absl::Duration default_timeout = absl::InfiniteDuration();
  // Retry, on any route, a request that certainly never reached a server
  // (its connection could not be made; TransportResponse::never_sent),
  // preferring another endpoint. Such retries spend the retry budget and
  // stay within the deadline like any other. Requests over 64 KiB are not
  // kept for replay, so never retried.
  bool retry_connect_failures = true;
};

class Mesh {
 public:
  // INVALID_ARGUMENT naming the field when options are invalid.
  static absl::StatusOr<std::unique_ptr<Mesh>> Create(MeshOptions options);
  ~Mesh();
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;

  // A channel to `target` ("name:port"). Channels to the same target share
  // one discovery subscription and one transport. INVALID_ARGUMENT for a
  // malformed target or invalid options; FAILED_PRECONDITION after shutdown.
  absl::StatusOr<std::unique_ptr<Channel>> NewChannel(
      const std::string& target, const ChannelOptions& options = {});

  // What the mesh currently believes, as JSON: an array with one object per
  // destination in use — its endpoints (weight, labels, and per channel the
  // pending count, RTT estimate, picks, failures, ejection), the service
  // config, the discovery streams' state and the last errors. For debugging
  // stale endpoints; the format is for people, not a stable API.
  std::string Describe() const;

  // The route and endpoint metrics of every destination this Mesh has
  // called, in the Prometheus text exposition format (version 0.0.4), for
  // an application's own /metrics handler. Names and labels:
  // mesh/metrics.h. Costs a pass over the registry; not for the data path.
  std::string Metrics() const;

 private:
  explicit Mesh(std::shared_ptr<internal::MeshCore> core);
  std::shared_ptr<internal::MeshCore> core_;
};

}  // namespace mesh

#endif  // MESH_MESH_H_

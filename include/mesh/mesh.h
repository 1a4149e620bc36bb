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
//   auto mesh = mesh::Mesh::Create(options);          // StatusOr
//   auto channel = (*mesh)->NewChannel("books:7001");  // StatusOr
//
// Thread-safe. Destroying a Mesh cancels the calls in flight (each completes
// with a status, CANCELLED or UNAVAILABLE) and returns once their callbacks
// have run.
#ifndef MESH_MESH_H_
#define MESH_MESH_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/balancer.h"
#include "mesh/channel.h"
#include "mesh/discovery.h"
#include "mesh/export.h"
#include "mesh/tap.h"
#include "mesh/tls.h"
#include "mesh/transport.h"

namespace grpc {
class Channel;
}

namespace mesh {

namespace internal {
class ChannelCore;
class MeshCore;
}  // namespace internal

struct MESH_EXPORT MeshOptions {
  // Where endpoints come from for targets written "name:port", and for
  // "scheme:///name:port" with its DiscoverySource::Scheme(). Required.
  std::shared_ptr<DiscoverySource> discovery;
  // More sources, by the target scheme they serve ("xds" for
  // "xds:///name:port"), so that one Mesh serves several control planes.
  std::map<std::string, std::shared_ptr<DiscoverySource>> discovery_by_scheme;
  // Makes the transport for one destination (shared by that destination's
  // channels). Empty: the gRPC transport with default options (and the
  // identity below). The Mesh wraps it in its tap hook (see mesh/tap.h).
  std::function<std::unique_ptr<Transport>()> transport_factory;
  // The workload's identity for mutual TLS to endpoints that discovery
  // gives an identity (see mesh/tls.h). Default: none, every endpoint in
  // plaintext. Used by the default transport (not a transport_factory's).
  IdentityOptions identity;
  // Where to serve Linkerd's tap API (io.linkerd.proxy.tap.Tap/Observe) for
  // `linkerd viz tap` and `mesh-tap`, e.g. "127.0.0.1:4190" (Linkerd's
  // port; 0 picks one, see tap_port()). Empty: no server (Mesh::Tap still
  // works in-process). Without tap_tls only peers on 127.0.0.1 or ::1 are
  // served. The sources' status services are served there too, under the
  // same rule (the built-in xDS source's CSDS, docs/xds.md).
  std::string tap_address;
  // Mutual TLS for the Observe server, with an identity allow-list that
  // replaces the loopback rule. Default: none (plaintext, loopback only).
  TapTlsOptions tap_tls;
  // Header names whose values tap never shows, besides authorization,
  // proxy-authorization, cookie and set-cookie.
  std::vector<std::string> tap_redacted_headers;
  // Tap subscriptions live at once, in-process (Mesh::Tap) and Observe
  // streams together; one more is refused RESOURCE_EXHAUSTED naming this
  // cap. Each costs its buffer and a pass on every request while it lives;
  // none holds a thread. At least 1.
  uint32_t tap_max_subscriptions = 100;
  // What a destination's route table may cost (see RouteLimits): a route
  // past a limit is dropped with a log line naming the limit.
  RouteLimits route_limits;
  // Where to serve the admin page (docs/admin.md): a dashboard of the
  // destinations, endpoints and routes with live tap, and /metrics,
  // /describe, /tap and /healthz, e.g. "127.0.0.1:9990" ("127.0.0.1:0"
  // picks a port: Mesh::AdminAddress()). Served on the Mesh's own threads
  // to peers on this host only (127.0.0.1, ::1), as tap without tap_tls.
  // Empty: none.
  std::string admin_address;
  // Mutual TLS for the admin page (https), with an identity allow-list that
  // replaces the loopback rule, in tap_tls's form: clients whose
  // certificate chains to client_ca_pem and names an allowed identity are
  // served, wherever they are; others get 403 saying why. Default: none.
  TapTlsOptions admin_tls;
};

struct MESH_EXPORT ChannelOptions {
  // Balancing policy and its tuning for this channel.
  BalancerOptions balancer;
  // Deadline for calls that do not set CallOptions::timeout. Infinite: none.
  absl::Duration default_timeout = absl::InfiniteDuration();
  // How long a call may wait for endpoints: while discovery has not answered
  // yet, or the destination (or every backend of its traffic split) exists
  // with no endpoints. Waiting calls hold no thread; they are sent, in
  // arrival order, as soon as endpoints come, and fail UNAVAILABLE naming
  // the reason when this passes (DEADLINE_EXCEEDED if their deadline comes
  // first). A destination that does not exist, or is not a mesh service,
  // fails calls at once. Zero: never wait. As linkerd2-proxy's fail-fast
  // timeout (3 s); gRPC queues such calls until their deadline.
  absl::Duration fail_fast_timeout = absl::Seconds(3);
  // Retry, on any route, a request that certainly never reached a server
  // (its connection could not be made; TransportResponse::never_sent),
  // preferring another endpoint, at most 3 times a call (a lone endpoint
  // that cannot be reached is not hammered). Such retries spend the retry
  // budget and stay within the deadline like any other. Requests over
  // 64 KiB are not kept for replay, so never retried.
  bool retry_connect_failures = true;
};

class MESH_EXPORT Mesh {
 public:
  // INVALID_ARGUMENT naming the field when options are invalid.
  static absl::StatusOr<std::unique_ptr<Mesh>> Create(MeshOptions options);
  ~Mesh();
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;

  // A channel to `target`: "name:port" (MeshOptions::discovery's), or
  // "scheme:///name:port" (the source serving that scheme, e.g.
  // "xds:///echo:7000"). Channels to the same target share one discovery
  // subscription and one transport. INVALID_ARGUMENT for a malformed target,
  // a scheme no source serves, or invalid options; FAILED_PRECONDITION after
  // shutdown.
  absl::StatusOr<std::unique_ptr<Channel>> NewChannel(
      const std::string& target, const ChannelOptions& options = {});

  // A grpc::Channel to `target` for generated stubs
  // (`Greeter::NewStub(channel)`): every call made on it is routed,
  // balanced, retried, tapped and counted by mesh exactly as a Channel's,
  // with the ClientContext's deadline, metadata and TryCancel honoured and
  // the server's status (code, message, error details, trailing metadata)
  // passed back unchanged. The channel never connects anywhere itself.
  // Sync, callback and CompletionQueue stubs all work, unary and
  // streaming. It carries generated protobuf stubs only: the answer is
  // parsed into the stub's message. Do not use a grpc::GenericStub on it (a
  // ByteBuffer is no message: calls of methods not linked into the program
  // end UNIMPLEMENTED, but those of linked methods would be parsed into the
  // buffer); mesh::Channel::CallRaw carries raw bytes. Errors as
  // NewChannel.
  absl::StatusOr<std::shared_ptr<grpc::Channel>> NewGrpcChannel(
      const std::string& target, const ChannelOptions& options = {});

  // What the mesh currently believes, as JSON: an array with one object per
  // destination in use — its discovery source, its endpoints (weight,
  // labels, and per channel the pending count, RTT estimate, picks,
  // failures, ejection with its time left and reason), the service config,
  // the retries its budget allows now, the discovery streams' state and the
  // last errors. For debugging stale endpoints; the format is for people,
  // not a stable API.
  std::string Describe() const;

  // The route and endpoint metrics of every destination this Mesh has
  // called, in the Prometheus text exposition format (version 0.0.4), for
  // an application's own /metrics handler. Names and labels:
  // docs/metrics.md. Costs a pass over the registry; not for the data path.
  std::string Metrics() const;

  // An in-process tap subscription (see mesh/tap.h): INVALID_ARGUMENT
  // naming the bad part of `options`; RESOURCE_EXHAUSTED naming the bound
  // when tap_max_subscriptions are live, or when its match would take the
  // live matches past kTapMaxTotalMatchNodes.
  absl::StatusOr<std::unique_ptr<TapSubscription>> Tap(
      const TapOptions& options) const;

  // The port of the Observe server; 0 without one.
  int tap_port() const;

  // "ip:port" of the admin page (MeshOptions::admin_address, its port
  // picked when 0 was asked); empty without one.
  std::string AdminAddress() const;

 private:
  explicit Mesh(std::shared_ptr<internal::MeshCore> core);
  absl::StatusOr<std::shared_ptr<internal::ChannelCore>> NewChannelCore(
      const std::string& target, const ChannelOptions& options);
  std::shared_ptr<internal::MeshCore> core_;
};

}  // namespace mesh

#endif  // MESH_MESH_H_

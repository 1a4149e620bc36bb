// Discovery sources turn a control plane's answers into endpoint updates.
//
// A source hands each subscriber the destination's updates (see
// mesh/endpoint.h) until the subscription is destroyed. StaticDiscovery is
// the source for endpoints given in code; it can change them at run time.
// The interface every source implements is mesh/spi/discovery_source.h.
//
//   auto discovery = mesh::StaticDiscovery::Create();
//   discovery->SetEndpoints("books:7001",
//                           {{"127.0.0.1:7001"}, {"127.0.0.1:7002"}});
//   options.discovery = discovery;  // mesh::MeshOptions
//
// Thread-safe.
#ifndef MESH_DISCOVERY_H_
#define MESH_DISCOVERY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/endpoint.h"
#include "mesh/export.h"
#include "mesh/service_config.h"
#include "mesh/spi/discovery_source.h"
#include "mesh/tls.h"

namespace mesh {

// Endpoints and service configs (routes) given in code. A target nobody has
// set has no endpoints yet (its calls fail UNAVAILABLE) until Update or
// SetEndpoints names it, and the default config until SetServiceConfig does.
class MESH_EXPORT StaticDiscovery final : public DiscoverySource {
 public:
  static std::shared_ptr<StaticDiscovery> Create();
  ~StaticDiscovery() override;

  // Applies `update` to `target` and forwards it to every subscriber.
  // INVALID_ARGUMENT (bad target, bad endpoint, an address twice) applies
  // nothing: subscribers keep the last good set.
  absl::Status Update(const std::string& target, const EndpointUpdate& update);
  // Update(target, EndpointUpdate::Reset(endpoints)).
  absl::Status SetEndpoints(const std::string& target,
                            std::vector<Endpoint> endpoints);

  // Replaces `target`'s service config and forwards it to every subscriber.
  // INVALID_ARGUMENT for a bad target. (Routes that do not compile are
  // dropped, with a log line, where the config is applied.)
  absl::Status SetServiceConfig(const std::string& target,
                                ServiceConfig config);

  std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) override;
  std::unique_ptr<DiscoverySubscription> SubscribeConfig(
      const std::string& target, ServiceConfigObserver* observer) override;

 private:
  struct State;
  StaticDiscovery();
  // Removes an observer (either kind) and forgets a target left empty.
  static void Unsubscribe(const std::weak_ptr<State>& state,
                          const std::string& target, const void* observer);
  std::shared_ptr<State> state_;
};

// Linkerd's Destination API (Get for endpoints, GetProfile for service
// profiles), one pair of streams per target, shared by the target's channels.
struct MESH_EXPORT LinkerdDiscoveryOptions {
  // gRPC target of the destination service: in a cluster
  // "linkerd-dst-headless.linkerd.svc.cluster.local:8086", locally
  // "127.0.0.1:8086" (tools/mesh-control-plane). Required.
  std::string address;
  // Sent as GetDestination.context_token (Linkerd's proxies send JSON such as
  // {"ns":"default","nodeName":"node-1","pod":"web-0"}). Opaque to mesh.
  std::string context_token;
  // Reconnect backoff after a stream ends: jittered, doubling from
  // backoff_min up to backoff_max, reset after a stream that delivered.
  absl::Duration backoff_min = absl::Milliseconds(100);
  absl::Duration backoff_max = absl::Seconds(60);
  // Largest message accepted from the destination service (gRPC's receive
  // limit; at least 1024). A larger update ends the stream with a log line
  // naming the limit, and the stream restarts. 4 MiB holds an Add of some
  // 30,000 endpoints.
  int max_message_bytes = 4 << 20;
  // Mutual TLS to the destination service: the workload's identity (as
  // MeshOptions::identity; files are followed by gRPC's file watcher, so a
  // reconnection presents a rotated certificate). Empty: plaintext.
  IdentityOptions identity;
  // With `identity`: what the destination service's certificate must carry,
  // e.g. "linkerd-destination.linkerd.serviceaccount.identity.linkerd.
  // cluster.local" (a DNS SAN; also sent as the server name), or a URI.
  std::string server_identity;
  // A target the destination service says is not a mesh service (its
  // InvalidArgument or FailedPrecondition: an external API, a database) is
  // resolved through DNS instead, as linkerd2-proxy forwards such a
  // connection to its original destination. false: its calls fail
  // UNAVAILABLE "… is not a mesh service".
  bool dns_fallback = true;
  // The source that fallback uses (a DNS source; not a Linkerd one, which
  // would refuse the target again). Null: a DNS source with the system's
  // servers (NewDnsDiscovery with default DnsOptions, mesh/dns.h), made when
  // first needed.
  std::shared_ptr<DiscoverySource> dns_fallback_source;
  // gRPC target of Linkerd's policy controller (OutboundPolicies, Linkerd
  // 2.13 and later): in a cluster
  // "linkerd-policy.linkerd.svc.cluster.local:8090"; it may equal
  // `address`. Set, each target's HTTPRoutes and GRPCRoutes are watched
  // beside its profile, and route its calls unless the profile has routes
  // or a traffic split of its own; a controller without the API
  // (Unimplemented) or without a policy for the target (NotFound) leaves
  // the profile alone in force (docs/linkerd.md). Empty: profiles only.
  // Reached with the same credentials as `address`.
  std::string policy_address;
  // Sent as TrafficSpec.source_workload: who is asking, as Linkerd's proxy
  // injector writes it, {"ns":"<namespace>","pod":"<pod name>"}. Opaque to
  // mesh.
  std::string source_workload;
};

// INVALID_ARGUMENT naming the field for bad options. Connecting is lazy: a
// control plane that is down is retried, not an error here.
MESH_EXPORT absl::StatusOr<std::shared_ptr<DiscoverySource>>
NewLinkerdDiscovery(const LinkerdDiscoveryOptions& options);

}  // namespace mesh

#endif  // MESH_DISCOVERY_H_

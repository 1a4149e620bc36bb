// Converting xDS resources from the wire into what the client keeps
// (xds_resources.h): each function validates its resource as gRPC's
// proxyless client does (gRFCs A27, A28, A29, A31, A32, A33, A39, A42, A44,
// A50)
// and refuses what mesh cannot carry out.
//
//   absl::StatusOr<ListenerResource> l = ConvertListener(wire);
//   if (!l.ok()) nack_detail += l.status().message();
//
// Pure functions, thread-safe (DecodeResource takes the bytes out of the
// Any it is given, and calls back the caller).
#ifndef MESH_SRC_DISCOVERY_XDS_XDS_CONVERT_H_
#define MESH_SRC_DISCOVERY_XDS_XDS_CONVERT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/extensions/filters/http/fault/v3/fault.pb.h"
#include "envoy/type/v3/percent.pb.h"
#include "google/protobuf/any.pb.h"
#include "google/protobuf/duration.pb.h"
#include "mesh/endpoint.h"
#include "mesh/service_config.h"
#include "mesh/tls.h"
#include "src/discovery/xds/bootstrap.h"
#include "src/discovery/xds/xds_resources.h"

namespace mesh::internal::xds {

// Each returns the resource, or INVALID_ARGUMENT whose message names the
// field (as a path from the resource, e.g. "virtual_hosts[0].routes[2].match
// .safe_regex: …") and the problem; that message goes into the NACK.
absl::StatusOr<ListenerResource> ConvertListener(
    const envoy::config::listener::v3::Listener& listener);
absl::StatusOr<RouteConfigResource> ConvertRouteConfiguration(
    const envoy::config::route::v3::RouteConfiguration& config);

// RDS as it comes, converted by what a call can reach (xds_convert_route_
// lazy.cc): a RouteConfiguration's bytes are split without parsing its
// routes — a route table of 1,000 virtual hosts of 250 routes once cost
// 4-6 s of CPU and 966 MB to convert whole, of which a target uses one
// virtual host.
struct RouteConfigurationSlices {
  std::string name;
  std::vector<absl::string_view> virtual_hosts;  // each VirtualHost's bytes
};
// Views into `bytes`, which must outlive them. INVALID_ARGUMENT "cannot
// parse a envoy.config.route.v3.RouteConfiguration" for bytes that are not
// one (as protobuf's parser would refuse them).
absl::StatusOr<RouteConfigurationSlices> SliceRouteConfiguration(
    absl::string_view bytes);
// Which virtual hosts to convert now, by index, given the configuration
// with every virtual host's name and domains only (the rest lazy).
using ChooseVirtualHosts =
    std::function<std::vector<size_t>(const RouteConfigResource& heads)>;
// Every virtual host's name, domains and routes count are checked (the
// count against the route table's limit); the chosen ones are converted
// whole, as ConvertRouteConfiguration does (their errors refuse the
// resource); the others keep their bytes (VirtualHostResource::wire).
absl::StatusOr<RouteConfigResource> ConvertRouteConfiguration(
    const RouteConfigurationSlices& slices, const ChooseVirtualHosts& now);
// A virtual host left lazy, converted now; the same errors as
// ConvertRouteConfiguration's for it, relative to the virtual host.
absl::StatusOr<VirtualHostResource> ConvertLazyVirtualHost(
    const VirtualHostResource& lazy);
// The pieces both conversions share: one VirtualHost whole; its domains
// (lower-cased; each a domain pattern, none empty); its number of routes
// (1 to the route table's RouteLimits::max_routes). Errors name the field
// relative to the VirtualHost.
absl::StatusOr<VirtualHostResource> ConvertVirtualHost(
    const envoy::config::route::v3::VirtualHost& vhost);
absl::StatusOr<std::vector<std::string>> ConvertDomains(
    const std::vector<std::string>& domains);
absl::Status CheckRouteCount(size_t routes);
// 1,000 virtual hosts at most; the error names "virtual_hosts".
absl::Status CheckVirtualHostCount(size_t virtual_hosts);
// `providers`: the bootstrap's certificate providers, which a TLS
// cluster's UpstreamTlsContext names.
absl::StatusOr<ClusterResource> ConvertCluster(
    const envoy::config::cluster::v3::Cluster& cluster,
    const CertificateProviders& providers = {});
absl::StatusOr<EndpointsResource> ConvertClusterLoadAssignment(
    const envoy::config::endpoint::v3::ClusterLoadAssignment& assignment);

// The pieces the conversions share (xds_convert*.cc). Their errors name
// fields relative to the message they are given; Within() puts the path of
// that message in front.

// INVALID_ARGUMENT "<path>: <problem>".
absl::Status FieldError(absl::string_view path, absl::string_view problem);
// `status` with `field` in front of the path its message starts with
// ("routes[2]" + "match.path: …" gives "routes[2].match.path: …"). OK stays
// OK.
absl::Status Within(absl::string_view field, const absl::Status& status);
// The message type an Any holds: its type URL after the last '/'.
absl::string_view TypeNameOf(const google::protobuf::Any& any);
// A Duration in google.protobuf.Duration's range, not negative; else
// INVALID_ARGUMENT naming "seconds" or "nanos".
absl::StatusOr<absl::Duration> ConvertDuration(
    const google::protobuf::Duration& duration);
// A FractionalPercent in millionths, at most 1,000,000; INVALID_ARGUMENT
// naming "denominator" when it is not one of the three.
// Millionths per unit of a FractionalPercent's numerator (10,000 for
// HUNDRED, 100 for TEN_THOUSAND, 1 for MILLION); an unknown denominator is
// an error naming it.
absl::StatusOr<uint32_t> FractionUnit(
    const envoy::type::v3::FractionalPercent& fraction);
absl::StatusOr<uint32_t> ConvertFraction(
    const envoy::type::v3::FractionalPercent& fraction);
// The fault an HTTPFault injects (gRFC A33): abort code from grpc_status
// (1..16) or http_status (200..599, mapped as gRPC maps HTTP statuses) or
// the request's headers, delay fixed or from the headers, each with its
// percentage (unset: never); max_active_faults (0: no fault at all).
// INVALID_ARGUMENT for what mesh cannot carry out: faults restricted to
// some requests (headers, upstream_cluster, downstream_nodes).
// A Cluster's transport_socket holding an UpstreamTlsContext (gRFC A29):
// its certificates from the file_watcher providers it names, its SAN
// matchers and SNI. INVALID_ARGUMENT naming the field for another socket,
// a provider instance the bootstrap lacks, and the fields gRFC A29 refuses
// (tls_params, custom_handshaker, inline or SDS certificates, SDS or no
// validation context, spki/hash pins, SCTs, CRLs, custom validators).
absl::StatusOr<std::shared_ptr<const EndpointTls>> ConvertTransportSocket(
    const envoy::config::core::v3::TransportSocket& socket,
    const CertificateProviders& providers);
// What metrics call the cluster's server identity (server_id): its first
// case-sensitive exact SAN matcher; empty if none.
std::string TlsIdentityLabel(const EndpointTls& tls);

absl::StatusOr<FaultInjection> ConvertHttpFault(
    const envoy::extensions::filters::http::fault::v3::HTTPFault& fault);

// One resource of a DiscoveryResponse (xds_convert_any.cc): the name it
// goes by and its converted form, or the problem.
struct DecodedResource {
  std::string name;
  absl::StatusOr<AnyResource> resource = absl::UnknownError("");
  std::string bytes;       // the serialized resource, to see it unchanged
  bool not_asked = false;  // its name was not asked for: not converted
};
// Whether the client asks for a name: only those are converted (converting
// costs).
using NameWanted = absl::FunctionRef<bool(const std::string& name)>;
// The authorities (targets) whose Listener names a RouteConfiguration:
// the virtual hosts they reach are converted now, the others when first
// reached.
using AuthoritiesReaching = absl::FunctionRef<std::vector<std::string>(
    const std::string& route_config_name)>;
// `any` as a resource of `type`. A RouteConfiguration's bytes are taken
// from `any`, not copied (megabytes for a large table).
DecodedResource DecodeResource(ResourceType type, google::protobuf::Any& any,
                               NameWanted wanted,
                               const CertificateProviders& providers,
                               AuthoritiesReaching reaching);

// What a cluster's calls are given (xds_convert_serving.cc).

// The endpoints a cluster's calls go to: the first priority with any, each
// endpoint's weight scaled by its locality's share.
std::vector<Endpoint> EndpointsToServe(const EndpointsResource& resource);
// What a cluster's outlier_detection asks of its balancers: consecutive
// failures (0 when enforcing_consecutive_5xx is 0), Envoy's backoff and
// ejected share, and interval ejection by success rate and failure
// percentage as configured.
BackendPolicy::Ejection EjectionOf(const OutlierDetection& od);
// A cluster's balancing (ROUND_ROBIN only if `honour_round_robin`, else
// P2C; ring hash with its ring capped at 4,096 entries as gRPC caps it),
// max_requests and ejection. Drops are the assignment's, added by the
// caller.
BackendPolicy ClusterBackendPolicy(const ClusterResource& cluster,
                                   bool honour_round_robin);
// The cluster's TLS context (if any) on each of `endpoints`.
void GiveClusterTls(const ClusterResource& cluster,
                    std::vector<Endpoint>* endpoints);

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_XDS_CONVERT_H_

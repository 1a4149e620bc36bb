// Conversion from Linkerd's Destination API messages (docs/wire-linkerd.md)
// to the mesh model: endpoint updates from `Get`, service configs from
// `GetProfile`. This is the edge where wire types stop; nothing past it sees a
// generated protobuf type (architecture.md).
//
// Endpoint updates are all-or-nothing: one bad address rejects the whole
// update, so the caller keeps serving its last good set. Profiles are
// converted piecewise, like linkerd2-proxy does: a bad route, response class,
// retry budget, traffic-split backend or endpoint is left out, with a line in
// `ProfileConversion::dropped` for the log, and the rest of the profile
// applies.
//
//   absl::StatusOr<EndpointUpdate> u = ConvertUpdate(wire_update);
//   if (!u.ok()) observer->OnDiscoveryError(u.status());
//   else observer->OnEndpointUpdate(*u);
//
//   ProfileConversion p = ConvertProfile(wire_profile);
//   for (const std::string& line : p.dropped) LOG(WARNING) << line;
//   config_observer->OnServiceConfig(p.config);
//
// Pure functions: thread-safe.
#ifndef MESH_SRC_DISCOVERY_LINKERD_CONVERT_H_
#define MESH_SRC_DISCOVERY_LINKERD_CONVERT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/map.h"
#include "linkerd/destination.pb.h"
#include "linkerd/net.pb.h"
#include "mesh/endpoint.h"
#include "mesh/service_config.h"

namespace mesh::internal::linkerd {

// "a.b.c.d:port" or "[v6]:port" as SocketAddress::ToString gives it, the IP
// in inet_ntop's canonical text (so the same address always gives the same
// string, the endpoint set's key).
// INVALID_ARGUMENT if the ip is missing or has neither ipv4 nor ipv6, or the
// port is 0 or above 65535.
absl::StatusOr<std::string> FormatTcpAddress(
    const io::linkerd::proxy::net::TcpAddress& address);

// One endpoint of an Add (or a profile's direct endpoint).
//  - labels: `set_labels` (the WeightedAddrSet's metric_labels) overlaid by
//    the address's own metric_labels, as linkerd2-proxy merges them.
//  - weight: as sent; 0 becomes 1. Weights are only relative (Linkerd's
//    controller sends 10000 for every endpoint), and 0 cannot mean "drain"
//    here because the model requires weight >= 1.
//  - tls_identity: dns_like_identity.name or uri_like_identity.uri; empty if
//    neither. server_name (the SNI to send) has no place in the model yet.
//  - protocol_hint: h2 → kHttp2, opaque → kOpaque, otherwise kUnknown.
//    opaque_transport (the proxy-to-proxy tunnel port) is not used: we talk
//    to the application port directly.
//  - authority_override: copied. http2 parameters and resource_ref: ignored.
// INVALID_ARGUMENT if addr is missing or FormatTcpAddress rejects it.
absl::StatusOr<Endpoint> ConvertWeightedAddr(
    const io::linkerd::proxy::destination::WeightedAddr& addr,
    const google::protobuf::Map<std::string, std::string>& set_labels);

// add → EndpointUpdate::Add, remove → Remove, no_endpoints → NoEndpoints.
// An address that appears twice in one Add is kept once, with the values of
// its last occurrence at the place of its first: Linkerd applies an Add as
// upserts in order, so the last one wins there too (and the model's
// EndpointSet::Apply would reject the duplicate). Remove keeps its list as
// sent (removing twice is harmless).
// INVALID_ARGUMENT, naming the part and the index of the address, if any
// address of an Add or Remove does not convert (the whole update is
// rejected), or if no part of the oneof is set.
absl::StatusOr<EndpointUpdate> ConvertUpdate(
    const io::linkerd::proxy::destination::Update& update);

// A google.protobuf.Duration as absl::Duration. INVALID_ARGUMENT, quoting
// it, outside duration.proto's range (|seconds| <= 315,576,000,000, |nanos|
// <= 999,999,999, both of one sign).
absl::StatusOr<absl::Duration> ConvertDuration(
    const google::protobuf::Duration& d);

struct ProfileConversion {
  ServiceConfig config;
  // One human-readable line per part left out, naming it (route index and
  // `route` label, class index, backend index and authority) and the reason.
  std::vector<std::string> dropped;
};

// Never fails as a whole; see the file comment. Per part:
//  - routes, in order. Dropped: no condition; a condition tree with a bad
//    node (ConvertRequestMatch in convert_match.h: no match set, `not`
//    without its inner match, a path regex RE2 rejects, a bad method); a
//    timeout that is negative or not a valid Duration (linkerd2-proxy keeps
//    such a route without a timeout; a route whose author asked for a bound
//    should not silently lose it). A zero or absent timeout is
//    absl::InfiniteDuration(). The name is metrics_labels["route"].
//  - response classes: a class with no condition or a bad tree
//    (ConvertResponseMatch: an empty node, an empty all/any, a status range
//    with a bound outside 100..999 or min > max) is dropped, that class only.
//  - retry_budget: absent → nullopt. Present but retry_ratio outside
//    [0, 1000], min_retries_per_second above 2^31-1, or ttl missing or
//    outside [1 s, 60 s] → nullopt and a line. linkerd2-proxy then retries on
//    no route; downstream should read nullopt the same way.
//  - dst_overrides → backends: weight 0 or an authority that is not
//    name:port is dropped.
//  - endpoint: converted with ConvertWeightedAddr; if that fails, no endpoint
//    (calls are balanced as usual) and a line.
ProfileConversion ConvertProfile(
    const io::linkerd::proxy::destination::DestinationProfile& profile);

}  // namespace mesh::internal::linkerd

#endif  // MESH_SRC_DISCOVERY_LINKERD_CONVERT_H_

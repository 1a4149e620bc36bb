// Conversion between Linkerd's tap API (io.linkerd.proxy.tap, see
// docs/wire-linkerd.md) and the tap model of include/mesh/tap.h: an
// ObserveRequest becomes the TapOptions of a subscription, and each TapEvent
// of the subscription becomes the wire TapEvent sent on the Observe stream.
// This is the edge where the tap's wire types stop; the hook, the matcher
// and the hub never see a generated type.
//
//   absl::StatusOr<TapOptions> options = TapOptionsFromObserve(request);
//   if (!options.ok()) return ToGrpcStatus(options.status());
//   ... subscribe with *options ...
//   while (auto event = subscription->Next(absl::Seconds(1))) {
//     writer->Write(TapEventToProto(*event));
//   }
//
// Pure functions: thread-safe.
#ifndef MESH_SRC_TAP_OBSERVE_CONVERT_H_
#define MESH_SRC_TAP_OBSERVE_CONVERT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "linkerd/tap.pb.h"
#include "mesh/tap.h"

namespace mesh::internal {

// The subscription an Observe request asks for. `limit` and the match tree
// are converted; `extract.http.headers` sets extract_headers; `buffer` keeps
// its default (the wire has no such field).
//
// Match nodes map one to one onto TapMatch (built directly, without the
// TapMatch factories):
//  - all / any / not → kAll / kAny / kNot (not: the one inner match);
//  - source / destination netmask → kSourceNet / kDestinationNet with the
//    CIDR "a.b.c.d/n" or "v6/n" (IpAddress::ToString, canonical), host bits
//    cleared (10.1.2.3 mask 8 → "10.0.0.0/8"), since only the network
//    takes part in the match;
//  - source / destination ports → kSourcePorts / kDestinationPorts; a 0
//    bound copies the other (one port);
//  - destination_label / route_label → kDestinationLabel / kRouteLabel;
//  - http scheme → kScheme: HTTP → "http", HTTPS → "https", an unregistered
//    scheme as sent; authority / path exact or prefix → kAuthorityExact,
//    kAuthorityPrefix, kPathExact, kPathPrefix; method → kMethod: a
//    registered method by its name ("GET", "POST", ...), an unregistered one
//    as sent.
//
// INVALID_ARGUMENT for a request the server must refuse, its message naming
// the part by its path from "match" (e.g. "match.all[1].destination.ports:
// min 9000 > max 80"):
//  - "limit must be > 0"; "match is required";
//  - a match node (or a Tcp, Http, StringMatch, HttpMethod or Scheme) with
//    nothing set; a registered method or scheme number the enum does not
//    know; an empty unregistered method or scheme;
//  - a netmask without an ip (or with neither ipv4 nor ipv6), or a mask
//    above 32 (IPv4) or 128 (IPv6);
//  - a port range with both bounds 0, a bound above 65535, or min > max;
//  - a label with an empty key;
//  - a match of more than kTapMaxMatchNodes nodes or kTapMaxMatchBytes
//    bytes of strings (include/mesh/tap.h): conversion stops at the first
//    node past the bound, which the message names with the bound.
absl::StatusOr<TapOptions> TapOptionsFromObserve(
    const ::io::linkerd::proxy::tap::ObserveRequest& request);

// The same from the request's bytes as received: INVALID_ARGUMENT naming
// the message and its size when they do not parse, and saying why as far
// as can be told (not a protobuf encoding at all; or well-formed on the
// outside but nested deeper than protobuf's limit of 100, or with a string
// that is not UTF-8, inside), instead of gRPC's own UNIMPLEMENTED "".
absl::StatusOr<TapOptions> TapOptionsFromObserveBytes(absl::string_view bytes);

// The wire form of one event of a subscription. Never fails:
//  - destination: `event.destination` ("a.b.c.d:port" or "[v6]:port") as a
//    TcpAddress; left unset if it is not an IP address and port. source is
//    never set (the hook does not see the client's socket);
//  - destination_meta.labels, route_meta.labels: the event's labels;
//  - proxy_direction: OUTBOUND (the requests tapped are the app's own);
//  - http: request_init, response_init or response_end by `kind`, each with
//    StreamId {base, stream}. Method and scheme as the registered enum when
//    they are one ("GET", "http", "https"; scheme case-insensitively),
//    otherwise unregistered; left unset when empty. Headers and trailers as
//    sent (name, value bytes), in order, only when there are any. Durations
//    as google.protobuf.Duration, a negative one as 0. eos:
//    reset_error_code if the event has one (a reset ends the stream whatever
//    status was derived from it), else grpc_status_code if it has one, else
//    unset.
::io::linkerd::proxy::tap::TapEvent TapEventToProto(const TapEvent& event);

}  // namespace mesh::internal

#endif  // MESH_SRC_TAP_OBSERVE_CONVERT_H_

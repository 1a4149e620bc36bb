// The condition trees of a Linkerd profile (RequestMatch on a route,
// ResponseMatch on a response class) → the model's match trees. Used by
// ConvertProfile (convert.h); separate so each tree rule has one home.
//
//   absl::StatusOr<RequestMatch> m = ConvertRequestMatch(route.condition());
//   if (!m.ok()) drop the route, logging m.status().message();
//
// Pure functions: thread-safe.
#ifndef MESH_SRC_DISCOVERY_LINKERD_CONVERT_MATCH_H_
#define MESH_SRC_DISCOVERY_LINKERD_CONVERT_MATCH_H_

#include <string>

#include "absl/status/statusor.h"
#include "linkerd/destination.pb.h"
#include "linkerd/http_types.pb.h"
#include "mesh/service_config.h"

namespace mesh::internal::linkerd {

// "GET", "POST", … for a registered method; the string for an unregistered
// one. INVALID_ARGUMENT if neither is set, the registered value is not one of
// the nine Linkerd defines (proto3 keeps unknown enum values), or the string
// is not an HTTP token (RFC 9110 §5.6.2; an empty name never matches).
absl::StatusOr<std::string> ConvertMethod(
    const io::linkerd::proxy::http_types::HttpMethod& method);

// The same tree. Path regexes are trimmed of surrounding ASCII whitespace.
// INVALID_ARGUMENT naming the first bad node: one with no match set, a `not`
// without its inner match, a path regex that RE2 does not compile (the error
// text included), or a bad method (ConvertMethod). Unlike linkerd2-proxy,
// which silently drops a bad child of an `all`/`any` (turning
// `all [bad, GET]` into the broader `all [GET]`), one bad node fails the
// whole tree.
// Recursive; for messages parsed off the wire protobuf's default recursion
// limit (100) bounds the depth.
absl::StatusOr<RequestMatch> ConvertRequestMatch(
    const io::linkerd::proxy::destination::RequestMatch& match);

// The same tree. INVALID_ARGUMENT naming the first bad node: one with no
// match set, an `all` or `any` with no children (as linkerd2-proxy), a `not`
// without its inner match, or a status range with a bound outside 100..999
// (what an HTTP status can be) or min > max.
absl::StatusOr<ResponseMatch> ConvertResponseMatch(
    const io::linkerd::proxy::destination::ResponseMatch& match);

}  // namespace mesh::internal::linkerd

#endif  // MESH_SRC_DISCOVERY_LINKERD_CONVERT_MATCH_H_

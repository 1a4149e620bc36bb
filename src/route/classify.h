// Response classification: whether a response counts as a failure for its
// route. The route's response classes are tried in order and the first whose
// condition matches the HTTP status decides; with none matching (or no HTTP
// status, e.g. a connection that failed), the default applies: a failure if
// the gRPC status is DATA_LOSS, DEADLINE_EXCEEDED, INTERNAL,
// PERMISSION_DENIED, UNAVAILABLE or UNKNOWN, else if the HTTP status is 5xx.
// The verdict feeds metrics, retries and outlier ejection.
//
//   bool failure = IsFailure(route.response_classes, status, http_status);
//
// Pure functions; thread-safe.
#ifndef MESH_SRC_ROUTE_CLASSIFY_H_
#define MESH_SRC_ROUTE_CLASSIFY_H_

#include <vector>

#include "absl/status/status.h"
#include "mesh/service_config.h"

namespace mesh::internal {

// Whether `match` holds for HTTP status `http_status` (0: unknown, which no
// status range matches).
bool MatchesResponse(const ResponseMatch& match, int http_status);

// The default classification (no response class matched).
bool IsDefaultFailure(const absl::Status& status, int http_status);

// The route's classification of a response.
bool IsFailure(const std::vector<ResponseClass>& classes,
               const absl::Status& status, int http_status);

}  // namespace mesh::internal

#endif  // MESH_SRC_ROUTE_CLASSIFY_H_

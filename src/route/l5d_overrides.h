// Linkerd's per-request policy: on a route that allows it
// (Route::allow_l5d_request_headers), a call's own l5d-* headers set or
// override the route's retries and timeouts for that call, and are not sent
// on.
//
//   L5dOverrides o = TakeL5dOverrides(&call.metadata);
//   if (o.timeout) deadline = start + *o.timeout;
//
// Pure functions; thread-compatible.
#ifndef MESH_SRC_ROUTE_L5D_OVERRIDES_H_
#define MESH_SRC_ROUTE_L5D_OVERRIDES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "mesh/metadata.h"
#include "mesh/service_config.h"

namespace mesh::internal {

struct L5dOverrides {
  std::optional<absl::Duration> timeout;           // l5d-timeout
  std::optional<absl::Duration> response_timeout;  // l5d-response-timeout
  std::optional<absl::Duration> per_try_timeout;   // l5d-retry-timeout
  std::optional<uint32_t> max_retries;             // l5d-retry-limit
  // l5d-retry-grpc: cancelled, deadline-exceeded, internal,
  // resource-exhausted, unavailable.
  std::optional<std::vector<absl::StatusCode>> retry_on;
  // l5d-retry-http: "5xx", "gateway-error" (502-504), "503" or "500-504".
  std::optional<std::vector<HttpStatusRange>> retry_on_http_status;
  // One line per header whose value did not parse (the header is ignored).
  std::vector<std::string> ignored;

  // Whether any retry header parsed: the call is then retried so.
  bool retries() const {
    return max_retries || per_try_timeout || retry_on || retry_on_http_status;
  }
};

// Reads and removes the l5d-* headers above from `headers` (each at most
// 128 bytes is read; the first of a repeated name counts). Durations as
// "100ms", "1.5s", "2m"; a zero duration leaves the route's; a negative
// one, a limit past 100 or an unknown condition is ignored, said in
// `ignored`. Other l5d-* headers stay.
L5dOverrides TakeL5dOverrides(Metadata* headers);

// `route`'s retry policy with what `o` sets in place of its own.
RetryPolicy ApplyL5dRetries(const L5dOverrides& o, RetryPolicy route);

}  // namespace mesh::internal

#endif  // MESH_SRC_ROUTE_L5D_OVERRIDES_H_

// What the admin page serves, apart from the sockets (admin_server.h):
//
//   GET /            the dashboard (HTML; its script and style at /admin.js
//                    and /admin.css, embedded in the library)
//   GET /healthz     "ok"
//   GET /metrics     Mesh::Metrics(), Prometheus text
//   GET /describe    Mesh::Describe(), JSON
//   GET /tap?...     live tap events as server-sent events (text/event-
//                    stream), one JSON object per event; the query
//                    (ParseTapQuery) says which requests
//
// Anything else: 404 naming the path; a method other than GET or HEAD:
// 405; a query too big, with an unknown name or a bad value: 400 naming
// it. Every answer is text a person can read.
//
// Thread-safe (const); the sources are called on the server's threads.
#ifndef MESH_SRC_ADMIN_ADMIN_ROUTER_H_
#define MESH_SRC_ADMIN_ADMIN_ROUTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/tap.h"

namespace mesh::internal {

// Where the pages' figures come from (a Mesh's own).
struct AdminSources {
  std::function<std::string()> describe;  // JSON
  std::function<std::string()> metrics;   // Prometheus text
  std::function<absl::StatusOr<std::unique_ptr<TapSubscription>>(
      const TapOptions&)>
      tap;
};

// What one client may cost the process.
struct AdminLimits {
  // Connections at once (each a thread while it lives); one more is
  // closed at once.
  uint32_t max_connections = 16;
  // A connection that sends nothing for this long is closed (a tap stream
  // sends a comment every tap_keepalive, so it stays).
  absl::Duration idle_timeout = absl::Seconds(10);
  // Memory for one connection's request (its line and headers); a request
  // beyond is answered 414 or 431 by the server library.
  size_t connection_memory = 64 * 1024;
  // Bytes of a request's query (names and values, decoded); beyond: 400.
  size_t max_query_bytes = 2048;
  // Tap streams at once (each a tap subscription); one more: 503.
  uint32_t max_tap_streams = 4;
  // Requests one tap stream shows at most (its subscription's limit); the
  // page opens another after. Events held for a slow reader, beyond which
  // new ones are dropped (counted in the stream).
  uint32_t max_tap_requests = 1000;
  size_t tap_buffer = 256;
  absl::Duration tap_keepalive = absl::Seconds(5);
};

struct AdminRequest {
  std::string method;
  std::string path;                                        // without the query
  std::vector<std::pair<std::string, std::string>> query;  // decoded
};

struct AdminResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // GET /tap: the stream's subscription options (the body is unused).
  std::optional<TapOptions> tap;
};

class AdminRouter {
 public:
  AdminRouter(AdminSources sources, AdminLimits limits)
      : sources_(std::move(sources)), limits_(limits) {}

  AdminResponse Handle(const AdminRequest& request) const;

  const AdminSources& sources() const { return sources_; }
  const AdminLimits& limits() const { return limits_; }

 private:
  AdminSources sources_;
  AdminLimits limits_;
};

// The options of a tap stream from its query: path_prefix, authority
// (a prefix), method (exact), limit (1..limits.max_tap_requests, default
// 100), headers (0 or 1: carry headers, redacted as tap redacts them). All
// given conditions must hold. INVALID_ARGUMENT naming the parameter: an
// unknown name, a repeated one, a bad number, a query of more than
// limits.max_query_bytes, or what ValidateTapOptions refuses.
absl::StatusOr<TapOptions> ParseTapQuery(
    const std::vector<std::pair<std::string, std::string>>& query,
    const AdminLimits& limits);

// One tap event as the page reads it: a JSON object with "kind" (request,
// response or end), "id" and the kind's fields.
std::string TapEventJson(const TapEvent& event);

}  // namespace mesh::internal

#endif  // MESH_SRC_ADMIN_ADMIN_ROUTER_H_

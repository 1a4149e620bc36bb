#include "src/admin/admin_router.h"

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/admin/admin_page.h"
#include "src/base/json_string.h"

namespace mesh::internal {
namespace {

constexpr char kText[] = "text/plain; charset=utf-8";

AdminResponse Answer(int status, std::string content_type, std::string body) {
  AdminResponse r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

// A refusal in words, for curl and for the page alike.
AdminResponse Refuse(int status, absl::string_view why) {
  return Answer(status, kText, absl::StrCat(why, "\n"));
}

double Millis(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

void AppendHeaders(std::string* out, absl::string_view field,
                   const Metadata& headers) {
  if (headers.empty()) return;
  absl::StrAppend(out, ",", JsonString(field), ":[");
  const char* sep = "";
  for (const auto& [name, value] : headers) {
    absl::StrAppend(out, sep, "[", JsonString(name), ",", JsonString(value),
                    "]");
    sep = ",";
  }
  out->push_back(']');
}

}  // namespace

AdminResponse AdminRouter::Handle(const AdminRequest& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    return Refuse(405, absl::StrCat("method ", request.method,
                                    " is not served here: the admin page "
                                    "answers GET and HEAD only"));
  }
  const std::string& path = request.path;
  const bool takes_query = path == "/tap";
  if (!takes_query && !request.query.empty()) {
    return Refuse(400, absl::StrCat(path, " takes no query (got '",
                                    request.query.front().first, "')"));
  }
  if (path == "/" || path == "/index.html") {
    return Answer(200, "text/html; charset=utf-8", std::string(kAdminHtml));
  }
  if (path == "/admin.js") {
    return Answer(200, "text/javascript; charset=utf-8", std::string(kAdminJs));
  }
  if (path == "/admin.css") {
    return Answer(200, "text/css; charset=utf-8", std::string(kAdminCss));
  }
  if (path == "/healthz") return Answer(200, kText, "ok\n");
  if (path == "/metrics") {
    return Answer(200, "text/plain; version=0.0.4; charset=utf-8",
                  sources_.metrics());
  }
  if (path == "/describe") {
    return Answer(200, "application/json", sources_.describe());
  }
  if (path == "/tap") {
    absl::StatusOr<TapOptions> options = ParseTapQuery(request.query, limits_);
    if (!options.ok()) {
      return Refuse(400, absl::StrCat("/tap: ", options.status().message()));
    }
    AdminResponse r;
    r.content_type = "text/event-stream";
    r.tap = *std::move(options);
    return r;
  }
  return Refuse(404, absl::StrCat("no page at ", path.substr(0, 256),
                                  "; the admin page serves /, /healthz, "
                                  "/metrics, /describe and /tap"));
}

absl::StatusOr<TapOptions> ParseTapQuery(
    const std::vector<std::pair<std::string, std::string>>& query,
    const AdminLimits& limits) {
  size_t bytes = 0;
  for (const auto& [name, value] : query) bytes += name.size() + value.size();
  if (bytes > limits.max_query_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the query has ", bytes, " bytes; at most ", limits.max_query_bytes));
  }
  TapOptions options;
  options.limit = 100;
  options.buffer = limits.tap_buffer;
  std::vector<TapMatch> all;
  std::set<std::string> seen;
  for (const auto& [name, value] : query) {
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("query parameter '", name, "' is given twice"));
    }
    if (name == "path_prefix") {
      if (!value.empty()) all.push_back(TapMatch::PathPrefix(value));
    } else if (name == "authority") {
      if (!value.empty()) all.push_back(TapMatch::AuthorityPrefix(value));
    } else if (name == "method") {
      if (!value.empty()) all.push_back(TapMatch::Method(value));
    } else if (name == "limit") {
      uint32_t limit = 0;
      if (!absl::SimpleAtoi(value, &limit) || limit == 0 ||
          limit > limits.max_tap_requests) {
        return absl::InvalidArgumentError(absl::StrCat(
            "query parameter 'limit' must be 1..", limits.max_tap_requests,
            " (got '", value.substr(0, 32), "')"));
      }
      options.limit = limit;
    } else if (name == "headers") {
      if (value != "0" && value != "1") {
        return absl::InvalidArgumentError(
            absl::StrCat("query parameter 'headers' must be 0 or 1 (got '",
                         value.substr(0, 32), "')"));
      }
      options.extract_headers = value == "1";
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown query parameter '", name.substr(0, 64),
          "' (known: path_prefix, authority, method, limit, headers)"));
    }
  }
  options.match = TapMatch::All(std::move(all));
  if (absl::Status s = ValidateTapOptions(options); !s.ok()) return s;
  return options;
}

std::string TapEventJson(const TapEvent& e) {
  std::string out = "{\"kind\":";
  switch (e.kind) {
    case TapEvent::Kind::kRequestInit:
      out += "\"request\"";
      break;
    case TapEvent::Kind::kResponseInit:
      out += "\"response\"";
      break;
    case TapEvent::Kind::kResponseEnd:
      out += "\"end\"";
      break;
  }
  absl::StrAppend(&out, ",\"id\":\"", e.base, ":", e.stream, "\"");
  absl::StrAppend(&out, ",\"destination\":", JsonString(e.destination));
  auto route = e.route_labels.find("route");
  if (route != e.route_labels.end()) {
    absl::StrAppend(&out, ",\"route\":", JsonString(route->second));
  }
  switch (e.kind) {
    case TapEvent::Kind::kRequestInit:
      absl::StrAppend(&out, ",\"method\":", JsonString(e.method),
                      ",\"scheme\":", JsonString(e.scheme),
                      ",\"authority\":", JsonString(e.authority),
                      ",\"path\":", JsonString(e.path),
                      ",\"attempt\":", e.attempt,
                      ",\"hedge\":", e.hedge ? "true" : "false");
      AppendHeaders(&out, "headers", e.headers);
      break;
    case TapEvent::Kind::kResponseInit:
      absl::StrAppend(&out, ",\"status\":", e.http_status,
                      ",\"since_request_ms\":", Millis(e.since_request_init));
      AppendHeaders(&out, "headers", e.headers);
      break;
    case TapEvent::Kind::kResponseEnd:
      absl::StrAppend(&out,
                      ",\"since_response_ms\":", Millis(e.since_response_init),
                      ",\"bytes\":", e.response_bytes);
      if (e.grpc_status.has_value()) {
        absl::StrAppend(&out, ",\"grpc_status\":", *e.grpc_status);
      }
      if (e.reset_error_code.has_value()) {
        absl::StrAppend(&out, ",\"reset\":", *e.reset_error_code);
      }
      AppendHeaders(&out, "trailers", e.trailers);
      break;
  }
  out.push_back('}');
  return out;
}

}  // namespace mesh::internal

#include "src/channel/describe.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "src/base/json_string.h"

namespace mesh::internal {
namespace {

std::string Labels(const std::map<std::string, std::string>& labels) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : labels)
    parts.push_back(JsonString(k) + ":" + JsonString(v));
  return "{" + absl::StrJoin(parts, ",") + "}";
}

std::string Ms(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return "null";
  return absl::StrFormat("%.3f", absl::ToDoubleMilliseconds(d));
}

std::string Status(const absl::Status& s) {
  return s.ok() ? "null" : JsonString(s.ToString());
}

std::string Match(const RequestMatch& m) {
  std::vector<std::string> children;
  for (const RequestMatch& c : m.children) children.push_back(Match(c));
  std::string list = "[" + absl::StrJoin(children, ",") + "]";
  switch (m.kind) {
    case RequestMatch::Kind::kAll:
      return "{\"all\":" + list + "}";
    case RequestMatch::Kind::kAny:
      return "{\"any\":" + list + "}";
    case RequestMatch::Kind::kNot:
      return "{\"not\":" + (children.empty() ? "null" : children[0]) + "}";
    case RequestMatch::Kind::kPath:
      return "{\"path\":" + JsonString(m.path_regex) + "}";
    case RequestMatch::Kind::kMethod:
      return "{\"method\":" + JsonString(m.method) + "}";
    case RequestMatch::Kind::kHeader:
      return absl::StrCat("{\"header\":", JsonString(m.header.name),
                          ",\"kind\":", static_cast<int>(m.header.kind),
                          ",\"value\":", JsonString(m.header.value), "}");
  }
  return "null";
}

std::string Match(const ResponseMatch& m) {
  std::vector<std::string> children;
  for (const ResponseMatch& c : m.children) children.push_back(Match(c));
  std::string list = "[" + absl::StrJoin(children, ",") + "]";
  switch (m.kind) {
    case ResponseMatch::Kind::kAll:
      return "{\"all\":" + list + "}";
    case ResponseMatch::Kind::kAny:
      return "{\"any\":" + list + "}";
    case ResponseMatch::Kind::kNot:
      return "{\"not\":" + (children.empty() ? "null" : children[0]) + "}";
    case ResponseMatch::Kind::kStatus:
      return absl::StrCat("{\"status\":[", m.min, ",", m.max, "]}");
  }
  return "null";
}

std::string Config(const ServiceConfig& c) {
  std::vector<std::string> routes;
  for (const Route& r : c.routes) {
    std::vector<std::string> classes;
    for (const ResponseClass& rc : r.response_classes) {
      classes.push_back(absl::StrCat(
          "{\"condition\":", Match(rc.condition),
          ",\"is_failure\":", rc.is_failure ? "true" : "false", "}"));
    }
    routes.push_back(absl::StrCat(
        "{\"name\":", JsonString(r.name), ",\"condition\":", Match(r.condition),
        ",\"timeout_ms\":", Ms(r.timeout),
        ",\"is_retryable\":", r.is_retryable ? "true" : "false",
        ",\"response_classes\":[", absl::StrJoin(classes, ","),
        "],\"metrics_labels\":", Labels(r.metrics_labels), "}"));
  }
  std::string budget = "null";
  if (c.retry_budget) {
    budget = absl::StrFormat(
        "{\"retry_ratio\":%g,\"min_retries_per_second\":%u,\"ttl_ms\":%s}",
        c.retry_budget->retry_ratio, c.retry_budget->min_retries_per_second,
        Ms(c.retry_budget->ttl));
  }
  std::vector<std::string> backends;
  for (const WeightedBackend& b : c.backends) {
    backends.push_back(absl::StrCat("{\"authority\":", JsonString(b.authority),
                                    ",\"weight\":", b.weight, "}"));
  }
  return absl::StrCat(
      "{\"routes\":[", absl::StrJoin(routes, ","),
      "],\"retry_budget\":", budget, ",\"backends\":[",
      absl::StrJoin(backends, ","),
      "],\"fully_qualified_name\":", JsonString(c.fully_qualified_name),
      ",\"opaque_protocol\":", c.opaque_protocol ? "true" : "false",
      ",\"endpoint\":", c.endpoint ? JsonString(c.endpoint->address) : "null",
      "}");
}

std::string Stream(const DiscoverySubscription::State& s) {
  return absl::StrCat("{\"connected\":", s.connected ? "true" : "false",
                      ",\"streams_started\":", s.streams_started,
                      ",\"messages\":", s.messages, ",\"last_error\":",
                      s.last_error.empty() ? "null" : JsonString(s.last_error),
                      "}");
}

}  // namespace

std::string DescribeJson(const DestinationView& v) {
  std::vector<std::string> endpoints;
  for (const Endpoint& e : v.endpoints) {
    std::vector<std::string> loads;
    for (const auto& channel : v.channel_stats) {
      for (const EndpointStats& s : channel) {
        if (s.address != e.address) continue;
        loads.push_back(
            absl::StrFormat("{\"pending\":%d,\"rtt_estimate_ms\":%.3f,"
                            "\"picks\":%d,\"failures\":%d,"
                            "\"ejections\":%d,\"ejected\":%s}",
                            s.pending, s.rtt_estimate_ms, s.picks, s.failures,
                            s.ejections, s.ejected ? "true" : "false"));
      }
    }
    endpoints.push_back(absl::StrCat(
        "{\"address\":", JsonString(e.address), ",\"weight\":", e.weight,
        ",\"labels\":", Labels(e.labels),
        ",\"tls_identity\":", JsonString(e.tls_identity),
        ",\"authority_override\":", JsonString(e.authority_override),
        ",\"load_per_channel\":[", absl::StrJoin(loads, ","), "]}"));
  }
  return absl::StrCat(
      "{\"target\":", JsonString(v.target),
      ",\"answered\":", v.has_update ? "true" : "false",
      ",\"exists\":", v.exists ? "true" : "false",
      ",\"channels\":", v.channel_stats.size(), ",\"endpoints\":[",
      absl::StrJoin(endpoints, ","),
      "],\"service_config\":", v.config ? Config(*v.config) : "null",
      ",\"last_error\":", Status(v.last_error),
      ",\"last_config_error\":", Status(v.last_config_error),
      ",\"endpoint_stream\":", Stream(v.endpoint_stream),
      ",\"config_stream\":", Stream(v.config_stream), "}");
}

}  // namespace mesh::internal

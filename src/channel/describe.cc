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

const char* HeaderKindName(HeaderMatch::Kind kind) {
  switch (kind) {
    case HeaderMatch::Kind::kExact:
      return "exact";
    case HeaderMatch::Kind::kPrefix:
      return "prefix";
    case HeaderMatch::Kind::kRegex:
      return "regex";
    case HeaderMatch::Kind::kPresent:
      return "present";
    case HeaderMatch::Kind::kSuffix:
      return "suffix";
    case HeaderMatch::Kind::kContains:
      return "contains";
    case HeaderMatch::Kind::kRange:
      return "range";
  }
  return "?";
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
    case RequestMatch::Kind::kQueryParam:
      return absl::StrCat(
          m.kind == RequestMatch::Kind::kHeader ? "{\"header\":"
                                                : "{\"query_param\":",
          JsonString(m.header.name),
          ",\"kind\":", JsonString(HeaderKindName(m.header.kind)),
          ",\"value\":", JsonString(m.header.value),
          m.header.ignore_case ? ",\"ignore_case\":true" : "",
          m.header.kind == HeaderMatch::Kind::kRange
              ? absl::StrCat(",\"range\":[", m.header.range_start, ",",
                             m.header.range_end, "]")
              : "",
          "}");
    case RequestMatch::Kind::kPathPrefix:
    case RequestMatch::Kind::kPathExact:
      return absl::StrCat(m.kind == RequestMatch::Kind::kPathPrefix
                              ? "{\"path_prefix\":"
                              : "{\"path_exact\":",
                          JsonString(m.path),
                          m.case_sensitive ? "" : ",\"ignore_case\":true", "}");
    case RequestMatch::Kind::kFraction:
      return absl::StrCat("{\"fraction_per_million\":", m.per_million, "}");
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

std::string Backends(const std::vector<WeightedBackend>& list) {
  std::vector<std::string> backends;
  for (const WeightedBackend& b : list) {
    backends.push_back(
        b.cluster.empty()
            ? absl::StrCat("{\"authority\":", JsonString(b.authority),
                           ",\"weight\":", b.weight, "}")
            : absl::StrCat("{\"cluster\":", JsonString(b.cluster),
                           ",\"weight\":", b.weight, "}"));
  }
  return "[" + absl::StrJoin(backends, ",") + "]";
}

std::string Fault(const FaultInjection& f) {
  if (f.delay_per_million == 0 && f.abort_per_million == 0 &&
      !f.delay_from_header && !f.abort_from_header) {
    return "null";
  }
  return absl::StrCat(
      "{\"delay_per_million\":", f.delay_per_million,
      ",\"delay_ms\":", Ms(f.delay),
      ",\"abort_per_million\":", f.abort_per_million,
      ",\"abort_code\":", JsonString(absl::StatusCodeToString(f.abort_code)),
      ",\"abort_message\":", JsonString(f.abort_message),
      ",\"delay_from_header\":", f.delay_from_header ? "true" : "false",
      ",\"abort_from_header\":", f.abort_from_header ? "true" : "false",
      ",\"max_active_faults\":", f.max_active_faults, "}");
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
    const std::string fault = Fault(r.fault);
    routes.push_back(absl::StrCat(
        "{\"name\":", JsonString(r.name), ",\"condition\":", Match(r.condition),
        ",\"timeout_ms\":", Ms(r.timeout),
        ",\"is_retryable\":", r.is_retryable ? "true" : "false",
        ",\"response_classes\":[", absl::StrJoin(classes, ","),
        "],\"metrics_labels\":", Labels(r.metrics_labels),
        r.backends.empty() ? "" : ",\"backends\":" + Backends(r.backends),
        fault == "null" ? "" : ",\"fault\":" + fault, "}"));
  }
  std::string budget = "null";
  if (c.retry_budget) {
    budget = absl::StrFormat(
        "{\"retry_ratio\":%g,\"min_retries_per_second\":%u,\"ttl_ms\":%s}",
        c.retry_budget->retry_ratio, c.retry_budget->min_retries_per_second,
        Ms(c.retry_budget->ttl));
  }
  return absl::StrCat(
      "{\"routes\":[", absl::StrJoin(routes, ","),
      "],\"retry_budget\":", budget, ",\"backends\":", Backends(c.backends),
      ",\"fully_qualified_name\":", JsonString(c.fully_qualified_name),
      ",\"opaque_protocol\":", c.opaque_protocol ? "true" : "false",
      ",\"endpoint\":", c.endpoint ? JsonString(c.endpoint->address) : "null",
      "}");
}

std::string Stream(const DiscoverySubscription::State& s) {
  std::vector<std::string> resources;
  for (const DiscoverySubscription::Resource& r : s.resources) {
    resources.push_back(absl::StrCat(
        "{\"type\":", JsonString(r.type), ",\"name\":", JsonString(r.name),
        ",\"state\":", JsonString(r.state),
        ",\"version\":", JsonString(r.version), ",\"updated\":",
        r.updated == absl::InfinitePast()
            ? "null"
            : JsonString(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", r.updated,
                                          absl::UTCTimeZone())),
        ",\"error\":", r.error.empty() ? "null" : JsonString(r.error), "}"));
  }
  return absl::StrCat("{\"connected\":", s.connected ? "true" : "false",
                      ",\"streams_started\":", s.streams_started,
                      ",\"messages\":", s.messages, ",\"last_error\":",
                      s.last_error.empty() ? "null" : JsonString(s.last_error),
                      resources.empty() ? "" : ",\"resources\":[",
                      absl::StrJoin(resources, ","),
                      resources.empty() ? "" : "]", "}");
}

// The backend policy and what it has done.
std::string Policy(const DestinationView& v) {
  std::vector<std::string> drops;
  for (const BackendPolicy::Drop& d : v.policy->drops) {
    drops.push_back(absl::StrCat("{\"category\":", JsonString(d.category),
                                 ",\"per_million\":", d.per_million, "}"));
  }
  std::string ejection = "null";
  if (v.policy->ejection) {
    const BackendPolicy::Ejection& e = *v.policy->ejection;
    ejection = absl::StrCat(
        "{\"consecutive_failures\":", e.consecutive_failures,
        ",\"base_ms\":", absl::ToInt64Milliseconds(e.base),
        ",\"max_ms\":", absl::ToInt64Milliseconds(e.max),
        ",\"max_percent\":", e.max_share * 100,
        ",\"min_ready_endpoints\":", e.min_ready_endpoints,
        ",\"exponential\":", e.exponential ? "true" : "false",
        ",\"jitter\":", e.jitter,
        ",\"interval_rules\":", e.interval_rules ? "true" : "false",
        ",\"interval_ms\":", absl::ToInt64Milliseconds(e.interval.interval),
        ",\"success_rate\":", e.interval.success_rate ? "true" : "false",
        ",\"failure_percentage\":",
        e.interval.failure_percentage ? "true" : "false", "}");
  }
  auto millis = [](const std::optional<absl::Duration>& d) {
    return d ? absl::StrCat(absl::ToDoubleMilliseconds(*d)) : "null";
  };
  return absl::StrCat(
      "{\"default_rtt_ms\":", millis(v.policy->default_rtt),
      ",\"decay_ms\":", millis(v.policy->decay),
      ",\"queue_capacity\":", v.policy->queue_capacity,
      ",\"fail_fast_timeout_ms\":", millis(v.policy->fail_fast_timeout),
      ",\"max_requests\":", v.policy->max_requests,
      ",\"in_flight\":", v.in_flight,
      ",\"circuit_breaker_refusals\":", v.circuit_breaker_refusals,
      ",\"drops\":[", absl::StrJoin(drops, ","), "],\"dropped\":", v.dropped,
      ",\"outlier_detection\":", ejection, "}");
}

}  // namespace

std::string DescribeJson(const DestinationView& v) {
  std::vector<std::string> endpoints;
  for (size_t i = 0; i < v.endpoints.size(); ++i) {
    const Endpoint& e = v.endpoints[i];
    std::vector<std::string> connection;
    if (i < v.connections.size()) {
      for (const auto& [name, value] : v.connections[i]) {
        connection.push_back(
            absl::StrCat(JsonString(name), ":", JsonString(value)));
      }
    }
    std::vector<std::string> loads;
    for (const auto& channel : v.channel_stats) {
      for (const EndpointStats& s : channel) {
        if (s.address != e.address) continue;
        loads.push_back(absl::StrFormat(
            "{\"pending\":%d,\"rtt_estimate_ms\":%.3f,"
            "\"picks\":%d,\"failures\":%d,"
            "\"ejections\":%d,\"ejected\":%s,\"ejection_left_ms\":%.0f,"
            "\"ejection_reason\":%s}",
            s.pending, s.rtt_estimate_ms, s.picks, s.failures, s.ejections,
            s.ejected ? "true" : "false", s.ejection_left_ms,
            JsonString(s.ejection_reason)));
      }
    }
    endpoints.push_back(absl::StrCat(
        "{\"address\":", JsonString(e.address), ",\"weight\":", e.weight,
        ",\"labels\":", Labels(e.labels),
        ",\"tls_identity\":", JsonString(e.tls_identity),
        ",\"authority_override\":", JsonString(e.authority_override),
        ",\"connection\":{", absl::StrJoin(connection, ","), "}",
        ",\"load_per_channel\":[", absl::StrJoin(loads, ","), "]}"));
  }
  return absl::StrCat(
      "{\"target\":", JsonString(v.target),
      ",\"source\":", JsonString(v.source), ",\"retry_budget_available\":",
      v.retry_budget_available < 0 ? std::string("null")
                                   : absl::StrCat(v.retry_budget_available),
      ",\"answered\":", v.has_update ? "true" : "false",
      ",\"exists\":", v.exists ? "true" : "false",
      ",\"channels\":", v.channel_stats.size(), ",\"endpoints\":[",
      absl::StrJoin(endpoints, ","),
      "],\"service_config\":", v.config ? Config(*v.config) : "null",
      v.policy ? ",\"backend_policy\":" + Policy(v) : "",
      ",\"last_error\":", Status(v.last_error),
      ",\"last_config_error\":", Status(v.last_config_error),
      ",\"endpoint_stream\":", Stream(v.endpoint_stream),
      ",\"config_stream\":", Stream(v.config_stream), "}");
}

}  // namespace mesh::internal

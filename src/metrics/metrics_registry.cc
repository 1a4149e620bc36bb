#include "src/metrics/metrics_registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "src/base/mutex.h"

namespace mesh::internal {

std::shared_ptr<RouteMetrics> MetricsRegistry::Route(
    const std::string& authority, const std::string& route,
    const LabelPairs& identity) {
  MutexLock lock(&mu_);
  std::shared_ptr<RouteMetrics>& metrics =
      routes_[RouteKey(Key(authority, route), identity)];
  if (metrics == nullptr) metrics = std::make_shared<RouteMetrics>();
  return metrics;
}

std::shared_ptr<EndpointMetrics> MetricsRegistry::Endpoint(
    const std::string& authority, const std::string& address, LabelPairs tls) {
  MutexLock lock(&mu_);
  auto [it, inserted] = endpoints_.try_emplace(Key(authority, address));
  std::shared_ptr<EndpointMetrics> metrics = it->second.lock();
  // Other TLS labels (the endpoint's identity changed): a new series; the
  // old object's remaining holders record into it unseen.
  if (metrics != nullptr && metrics->tls == tls) return metrics;
  metrics = std::make_shared<EndpointMetrics>();
  metrics->tls = std::move(tls);
  it->second = metrics;
  if (inserted) MaybePruneEndpoints();
  return metrics;
}

void MetricsRegistry::MaybePruneEndpoints() {
  if (endpoints_.size() < prune_at_) return;
  for (auto it = endpoints_.begin(); it != endpoints_.end();) {
    it = it->second.expired() ? endpoints_.erase(it) : std::next(it);
  }
  prune_at_ = std::max(kMinPruneSize, 2 * endpoints_.size());
}

size_t MetricsRegistry::EndpointEntriesForTest() const {
  MutexLock lock(&mu_);
  return endpoints_.size();
}

namespace {

using Label = std::pair<absl::string_view, absl::string_view>;

std::string EscapeLabelValue(absl::string_view value) {
  return absl::StrReplaceAll(value,
                             {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

// `{a="x",b="y"}`, values escaped; `more` after `labels`.
std::string LabelSet(std::initializer_list<Label> labels,
                     const LabelPairs& more = {}) {
  std::string out = "{";
  auto add = [&out](absl::string_view name, absl::string_view value) {
    if (out.size() > 1) out += ',';
    absl::StrAppend(&out, name, "=\"", EscapeLabelValue(value), "\"");
  };
  for (const Label& label : labels) add(label.first, label.second);
  for (const auto& [name, value] : more) add(name, value);
  out += '}';
  return out;
}

// The shortest text that reads back as the same double, in the spellings
// the format uses for the special values.
std::string FormatDouble(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

void WriteFamily(std::string& out, absl::string_view name,
                 absl::string_view type, absl::string_view help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ",
                  type, "\n");
}

void WriteSample(std::string& out, absl::string_view name,
                 absl::string_view labels, absl::string_view value) {
  absl::StrAppend(&out, name, labels, " ", value, "\n");
}

// A response counter cell's labels after the `authority,route|endpoint`
// ones: classification and grpc_status ("" for the codes outside 0..16).
std::string ResponseLabels(absl::string_view authority, absl::string_view key,
                           absl::string_view subject, bool failure,
                           int grpc_code, const LabelPairs& more = {}) {
  std::string code =
      grpc_code == kOtherGrpcCode ? std::string() : absl::StrCat(grpc_code);
  return LabelSet({{"authority", authority},
                   {key, subject},
                   {"classification", failure ? "failure" : "success"},
                   {"grpc_status", code}},
                  more);
}

struct CombinedGauges {
  uint64_t ejections = 0;
  bool ejected = false;
  int64_t pending = 0;
  double rtt_estimate_ms = 0;
};

}  // namespace

std::string MetricsRegistry::RenderPrometheus(
    const std::vector<EndpointGauges>& gauges) const {
  std::vector<std::pair<RouteKey, std::shared_ptr<RouteMetrics>>> routes;
  std::vector<std::pair<Key, std::shared_ptr<EndpointMetrics>>> endpoints;
  {
    MutexLock lock(&mu_);
    routes.assign(routes_.begin(), routes_.end());
    for (const auto& [key, weak] : endpoints_) {
      if (std::shared_ptr<EndpointMetrics> live = weak.lock()) {
        endpoints.emplace_back(key, std::move(live));
      }
    }
  }
  std::map<Key, CombinedGauges> combined;
  for (const EndpointGauges& g : gauges) {
    auto [it, inserted] = combined.try_emplace(Key(g.authority, g.address));
    CombinedGauges& c = it->second;
    c.ejections += g.ejections;
    c.ejected = c.ejected || g.ejected;
    c.pending += g.pending;
    c.rtt_estimate_ms = inserted
                            ? g.rtt_estimate_ms
                            : std::max(c.rtt_estimate_ms, g.rtt_estimate_ms);
  }
  auto endpoint_labels = [](const Key& key) {
    return LabelSet({{"authority", key.first}, {"endpoint", key.second}});
  };
  auto route_labels = [](const RouteKey& key) {
    return LabelSet(
        {{"authority", key.first.first}, {"route", key.first.second}},
        key.second);
  };

  // Families in name order.
  std::string out;
  WriteFamily(out, "endpoint_ejected", "gauge",
              "1 while the endpoint is ejected by any channel, else 0.");
  for (const auto& [key, c] : combined) {
    WriteSample(out, "endpoint_ejected", endpoint_labels(key),
                c.ejected ? "1" : "0");
  }
  WriteFamily(out, "endpoint_ejections_total", "counter",
              "Times the endpoint was ejected, summed over channels.");
  for (const auto& [key, c] : combined) {
    WriteSample(out, "endpoint_ejections_total", endpoint_labels(key),
                absl::StrCat(c.ejections));
  }
  WriteFamily(out, "endpoint_pending", "gauge",
              "Calls in flight to the endpoint, summed over channels.");
  for (const auto& [key, c] : combined) {
    WriteSample(out, "endpoint_pending", endpoint_labels(key),
                absl::StrCat(c.pending));
  }
  WriteFamily(out, "endpoint_request_total", "counter",
              "Attempts sent to the endpoint, retries included.");
  for (const auto& [key, m] : endpoints) {
    WriteSample(
        out, "endpoint_request_total",
        LabelSet({{"authority", key.first}, {"endpoint", key.second}}, m->tls),
        absl::StrCat(m->requests.load(std::memory_order_relaxed)));
  }
  WriteFamily(out, "endpoint_response_total", "counter",
              "Attempts to the endpoint that ended, by classification and "
              "gRPC status.");
  for (const auto& entry : endpoints) {
    // (Not a structured binding: C++17 lambdas cannot capture one.)
    const auto& key = entry.first;
    const LabelPairs& tls = entry.second->tls;
    entry.second->responses.ForEachNonZero([&](bool failure, int code,
                                               uint64_t count) {
      WriteSample(
          out, "endpoint_response_total",
          ResponseLabels(key.first, "endpoint", key.second, failure, code, tls),
          absl::StrCat(count));
    });
  }
  WriteFamily(out, "endpoint_rtt_estimate_ms", "gauge",
              "Peak-EWMA round-trip estimate of the endpoint in "
              "milliseconds, the largest over channels.");
  for (const auto& [key, c] : combined) {
    WriteSample(out, "endpoint_rtt_estimate_ms", endpoint_labels(key),
                FormatDouble(c.rtt_estimate_ms));
  }

  auto write_route_counter = [&](absl::string_view name, absl::string_view help,
                                 std::atomic<uint64_t> RouteMetrics::*field) {
    WriteFamily(out, name, "counter", help);
    for (const auto& [key, m] : routes) {
      WriteSample(out, name, route_labels(key),
                  absl::StrCat(((*m).*field).load(std::memory_order_relaxed)));
    }
  };
  write_route_counter("route_actual_request_total",
                      "Attempts sent on the route, retries included.",
                      &RouteMetrics::actual_requests);
  // Sorted by name, as every family.
  write_route_counter("route_hedge_skipped_total",
                      "Hedges the route's policy asked for that the retry "
                      "budget refused.",
                      &RouteMetrics::hedges_skipped_budget);
  write_route_counter("route_hedge_total",
                      "Hedged attempts sent on the route (after the first).",
                      &RouteMetrics::hedges);
  WriteFamily(out, "route_http_response_total", "counter",
              "Plain HTTP calls on the route (mesh::curl) answered, by "
              "classification and HTTP status class.");
  for (const auto& entry : routes) {
    const auto& key = entry.first;
    entry.second->http_responses.ForEachNonZero(
        [&](bool failure, const char* status_class, uint64_t count) {
          WriteSample(
              out, "route_http_response_total",
              LabelSet({{"authority", key.first.first},
                        {"route", key.first.second},
                        {"classification", failure ? "failure" : "success"},
                        {"status_class", status_class}},
                       key.second),
              absl::StrCat(count));
        });
  }

  write_route_counter("route_request_total", "Logical calls on the route.",
                      &RouteMetrics::requests);

  WriteFamily(out, "route_response_latency_ms", "histogram",
              "Latency of calls on the route in milliseconds, retries "
              "included.");
  for (const auto& [key, m] : routes) {
    HistogramSnapshot h = m->latency.Snapshot();
    for (size_t i = 0; i < kLatencyBucketCount; ++i) {
      std::string le = i < kLatencyBoundsMs.size()
                           ? absl::StrCat(kLatencyBoundsMs[i])
                           : std::string("+Inf");
      WriteSample(out, "route_response_latency_ms_bucket",
                  LabelSet({{"authority", key.first.first},
                            {"route", key.first.second},
                            {"le", le}},
                           key.second),
                  absl::StrCat(h.cumulative_counts[i]));
    }
    WriteSample(out, "route_response_latency_ms_sum", route_labels(key),
                FormatDouble(h.sum_ms));
    WriteSample(out, "route_response_latency_ms_count", route_labels(key),
                absl::StrCat(h.count));
  }

  WriteFamily(out, "route_response_total", "counter",
              "Calls on the route that ended, by classification and gRPC "
              "status.");
  for (const auto& entry : routes) {
    const auto& key = entry.first;  // captured below: not a binding
    entry.second->responses.ForEachNonZero(
        [&](bool failure, int code, uint64_t count) {
          WriteSample(out, "route_response_total",
                      ResponseLabels(key.first.first, "route", key.first.second,
                                     failure, code, key.second),
                      absl::StrCat(count));
        });
  }

  WriteFamily(out, "route_retry_skipped_total", "counter",
              "Retries the route allowed but did not make, by reason.");
  for (const auto& [key, m] : routes) {
    for (auto [reason, field] :
         {std::pair{"budget", &RouteMetrics::retries_skipped_budget},
          std::pair{"max_attempts",
                    &RouteMetrics::retries_skipped_max_attempts}}) {
      WriteSample(out, "route_retry_skipped_total",
                  LabelSet({{"authority", key.first.first},
                            {"route", key.first.second},
                            {"reason", reason}},
                           key.second),
                  absl::StrCat(((*m).*field).load(std::memory_order_relaxed)));
    }
  }
  write_route_counter("route_retry_total", "Retries made on the route.",
                      &RouteMetrics::retries);
  write_route_counter("route_timeout_total",
                      "Calls on the route that ended DEADLINE_EXCEEDED.",
                      &RouteMetrics::timeouts);
  return out;
}

}  // namespace mesh::internal

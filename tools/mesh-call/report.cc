#include "tools/mesh-call/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/base/json_string.h"
#include "tools/common/grpc_codes.h"

namespace mesh::tools {
namespace {

using internal::JsonString;

LatencySummary Latencies(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  LatencySummary l;
  l.p50 = Percentile(ms, 50);
  l.p90 = Percentile(ms, 90);
  l.p99 = Percentile(ms, 99);
  l.p999 = Percentile(ms, 99.9);
  l.max = ms.empty() ? 0 : ms.back();
  return l;
}

// null when there is no call to measure.
std::string JsonLatency(int64_t calls, const LatencySummary& l) {
  if (calls == 0) return "null";
  return absl::StrFormat(
      R"({"p50":%.3f,"p90":%.3f,"p99":%.3f,"p99.9":%.3f,"max":%.3f})", l.p50,
      l.p90, l.p99, l.p999, l.max);
}

}  // namespace

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100 * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

Summary Summarize(const RunResult& run) {
  Summary s;
  s.target = run.target;
  s.method = run.method;
  s.mode = run.mode;
  s.calls = run.started;
  s.finished = static_cast<int64_t>(run.records.size());
  s.not_finished = std::max<int64_t>(run.started - s.finished, 0);
  s.wall_seconds = run.wall_seconds;
  s.calls_per_second = run.wall_seconds > 0 ? s.finished / run.wall_seconds : 0;
  s.interrupted = run.interrupted;
  s.error_samples = run.error_samples;
  s.http = run.http;

  std::map<std::string, std::vector<double>> by_endpoint;
  for (const auto& [address, pending] : run.known_endpoints) {
    by_endpoint[address];
  }
  std::vector<double> all;
  all.reserve(run.records.size());
  for (const CallRecord& r : run.records) {
    by_endpoint[r.endpoint].push_back(r.latency_ms);
    all.push_back(r.latency_ms);
    ++s.status[r.code];
    if (run.http) ++s.http_status[r.http_status];
  }
  s.latency_ms = Latencies(std::move(all));
  for (auto& [address, ms] : by_endpoint) {
    EndpointSummary e;
    e.address = address;
    e.calls = static_cast<int64_t>(ms.size());
    if (auto it = run.known_endpoints.find(address);
        it != run.known_endpoints.end()) {
      e.not_finished = it->second;
    }
    e.share = s.finished > 0 ? static_cast<double>(e.calls) / s.finished : 0;
    e.latency_ms = Latencies(std::move(ms));
    s.endpoints.push_back(std::move(e));
  }
  return s;
}

std::string FormatTable(const Summary& s) {
  size_t width = 20;
  for (const EndpointSummary& e : s.endpoints) {
    width = std::max(width, e.address.size());
  }
  const int w = static_cast<int>(width);
  std::string out =
      absl::StrFormat("%s %s (%s)\n\n", s.target, s.method, s.mode);
  absl::StrAppendFormat(&out, "%-*s %8s %7s %9s %9s %9s %9s %9s\n", w,
                        "endpoint", "calls", "share", "p50 ms", "p90 ms",
                        "p99 ms", "p99.9 ms", "max ms");
  auto row = [&](absl::string_view name, int64_t calls, double share,
                 const LatencySummary& l) {
    if (calls == 0) {
      absl::StrAppendFormat(&out, "%-*s %8d %6.1f%% %9s %9s %9s %9s %9s\n", w,
                            name, calls, 0.0, "-", "-", "-", "-", "-");
      return;
    }
    absl::StrAppendFormat(
        &out, "%-*s %8d %6.1f%% %9.2f %9.2f %9.2f %9.2f %9.2f\n", w, name,
        calls, 100 * share, l.p50, l.p90, l.p99, l.p999, l.max);
  };
  for (const EndpointSummary& e : s.endpoints) {
    row(e.address.empty() ? "(no endpoint)" : e.address, e.calls, e.share,
        e.latency_ms);
  }
  row("all", s.finished, s.finished > 0 ? 1.0 : 0.0, s.latency_ms);

  const char* sep = " ";
  if (s.http) {
    out += "\nHTTP status:";
    if (s.http_status.empty()) out += " (none)";
    for (const auto& [status, n] : s.http_status) {
      absl::StrAppend(&out, sep, status == 0 ? "none" : absl::StrCat(status),
                      " ", n);
      sep = ", ";
    }
    sep = " ";
  }
  out += "\nstatus:";
  if (s.status.empty()) out += " (none)";
  for (const auto& [code, n] : s.status) {
    absl::StrAppend(&out, sep, GrpcCodeName(code), " ", n);
    sep = ", ";
  }
  out += "\n";
  for (const auto& [code, message] : s.error_samples) {
    absl::StrAppend(&out, "  first ", GrpcCodeName(code), ": ", message, "\n");
  }
  if (s.not_finished > 0) {
    absl::StrAppend(&out, "\nnot finished: ", s.not_finished);
    sep = " (";
    for (const EndpointSummary& e : s.endpoints) {
      if (e.not_finished == 0) continue;
      absl::StrAppend(&out, sep, e.address, " ", e.not_finished);
      sep = ", ";
    }
    out += absl::string_view(sep) == ", " ? ")\n" : "\n";
  }
  absl::StrAppendFormat(&out,
                        "\ncalls: %d started, %d finished, %d not finished; "
                        "wall %.3f s, %.1f calls/s%s\n",
                        s.calls, s.finished, s.not_finished, s.wall_seconds,
                        s.calls_per_second,
                        s.interrupted ? " (interrupted)" : "");
  return out;
}

std::string FormatJson(const Summary& s) {
  std::string out = absl::StrCat(
      "{\"target\":", JsonString(s.target),
      ",\"method\":", JsonString(s.method), ",\"mode\":", JsonString(s.mode),
      ",\"calls\":", s.calls, ",\"finished\":", s.finished,
      ",\"not_finished\":", s.not_finished,
      ",\"interrupted\":", s.interrupted ? "true" : "false");
  absl::StrAppendFormat(&out,
                        ",\"wall_seconds\":%.3f,\"calls_per_second\":%.1f",
                        s.wall_seconds, s.calls_per_second);
  absl::StrAppend(&out,
                  ",\"latency_ms\":", JsonLatency(s.finished, s.latency_ms),
                  ",\"endpoints\":[");
  const char* sep = "";
  for (const EndpointSummary& e : s.endpoints) {
    absl::StrAppend(
        &out, sep, "{\"address\":", JsonString(e.address),
        ",\"calls\":", e.calls, ",\"not_finished\":", e.not_finished,
        absl::StrFormat(",\"share\":%.4f", e.share),
        ",\"latency_ms\":", JsonLatency(e.calls, e.latency_ms), "}");
    sep = ",";
  }
  out += "],\"status\":{";
  sep = "";
  for (const auto& [code, n] : s.status) {
    absl::StrAppend(&out, sep, JsonString(GrpcCodeName(code)), ":", n);
    sep = ",";
  }
  out += "}";
  if (s.http) {
    // Keyed by HTTP status ("0": no answer).
    out += ",\"statuses\":{";
    sep = "";
    for (const auto& [status, n] : s.http_status) {
      absl::StrAppend(&out, sep, "\"", status, "\":", n);
      sep = ",";
    }
    out += "}";
  }
  out += ",\"errors\":{";
  sep = "";
  for (const auto& [code, message] : s.error_samples) {
    absl::StrAppend(&out, sep, JsonString(GrpcCodeName(code)), ":",
                    JsonString(message));
    sep = ",";
  }
  out += "}}\n";
  return out;
}

}  // namespace mesh::tools

// mesh-call's report: what the calls did, summarized (per-endpoint counts and
// share, latency percentiles, statuses by gRPC code name) and printed as a
// table or as one JSON object.
//
//   RunResult run = ...;  // filled by the load loop
//   Summary s = Summarize(run);
//   std::fputs((json ? FormatJson(s) : FormatTable(s)).c_str(), stdout);
//
// Thread-compatible (plain values and pure functions).
#ifndef MESH_TOOLS_MESH_CALL_REPORT_H_
#define MESH_TOOLS_MESH_CALL_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace mesh::tools {

// One finished call.
struct CallRecord {
  std::string endpoint;  // empty if the call failed before a pick
  absl::StatusCode code = absl::StatusCode::kOk;
  int http_status = 0;    // a plain HTTP request's answer (--http); 0: none
  double latency_ms = 0;  // from the call's (scheduled) start to its end
};

// What a run produced.
struct RunResult {
  std::string target;
  std::string method;
  std::string mode;   // how the load was driven, for the reader
  bool http = false;  // plain HTTP requests (--http)
  std::vector<CallRecord> records;
  int64_t started = 0;  // started; those without a record did not finish
  double wall_seconds = 0;
  bool interrupted = false;  // stopped early by a signal
  // The first message seen for each non-OK code.
  std::map<absl::StatusCode, std::string> error_samples;
  // Endpoints the balancer knew at the end (they may have had no calls),
  // with the calls still pending on each: the unfinished ones.
  std::map<std::string, int64_t> known_endpoints;
};

struct LatencySummary {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;  // milliseconds
};

struct EndpointSummary {
  std::string address;  // empty: calls that got no endpoint
  int64_t calls = 0;    // finished
  int64_t not_finished = 0;
  double share = 0;           // of the finished calls, 0..1
  LatencySummary latency_ms;  // zeros without calls (null in JSON)
};

struct Summary {
  std::string target, method, mode;
  int64_t calls = 0;         // started
  int64_t finished = 0;      // with a status
  int64_t not_finished = 0;  // still unanswered when the run gave up
  double wall_seconds = 0;
  double calls_per_second = 0;  // finished / wall_seconds
  bool interrupted = false;
  LatencySummary latency_ms;                   // over all finished calls
  std::vector<EndpointSummary> endpoints;      // sorted by address
  std::map<absl::StatusCode, int64_t> status;  // non-zero counts
  // With --http: the answers by HTTP status (0: none came).
  bool http = false;
  std::map<int, int64_t> http_status;
  std::map<absl::StatusCode, std::string> error_samples;
};

Summary Summarize(const RunResult& run);

// Nearest-rank percentile (0 < p <= 100) of sorted `v`; 0 if empty.
double Percentile(const std::vector<double>& sorted, double p);

std::string FormatTable(const Summary& s);
std::string FormatJson(const Summary& s);  // one line, ends in '\n'

}  // namespace mesh::tools

#endif  // MESH_TOOLS_MESH_CALL_REPORT_H_

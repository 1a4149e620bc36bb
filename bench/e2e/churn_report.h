// mesh_churn_bench's per-mode measurements and the report it makes of them:
// the latency table (calls, errors, percentiles, updates applied), the
// ratios against the quiet phases, what the callers' threads went through,
// the discovery figures (applied, apply time, time to visibility), the first
// calls of new endpoints apart, and the goal rows.
//
//   ChurnReport r = ReportChurn(modes, applied, /*threads=*/1);
//   WriteResultsOrDie(dir, {{"churn.md", r.markdown}, ...});
//
// Thread-compatible.
#ifndef MESH_BENCH_E2E_CHURN_REPORT_H_
#define MESH_BENCH_E2E_CHURN_REPORT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/e2e/churn_discovery.h"
#include "bench/e2e/churn_histogram.h"
#include "mesh/channel.h"

namespace mesh::bench {

// One mode of the run (quiet, churn, reset, static_delta, noise); modes[0]
// is quiet.
struct ChurnMode {
  std::string name;
  std::string description;  // for churn.md
  std::string target;
  std::shared_ptr<Channel> channel;
  std::function<void()> update;  // one churn update; empty for quiet
  // Over all measured phases of this mode:
  LatencyHistogram latency;
  int64_t errors = 0;
  double seconds = 0;
  int64_t updates_sent = 0;
  int64_t applied_in_phase = 0;  // applied before the phase ended
  double drain_seconds = 0;      // waiting after phases for the rest
  double caller_cpu_s = 0;       // CPU time of the caller threads
  int64_t preempted = 0;         // the callers' involuntary context switches
  // Interrupts on the whole machine during the phases (/proc/interrupts):
  // TLB shootdowns (another thread unmapped memory), rescheduling and
  // function-call IPIs. Machine-wide, so other processes count too.
  int64_t tlb = 0, res = 0, cal = 0;
  LatencyHistogram work_ns;  // noise: the time of each piece of work
  // Per endpoint index of the channel (shared by the modes that share it):
  // whether any call has been served by it yet.
  std::shared_ptr<std::vector<std::atomic<uint8_t>>> seen;
  // The calls that were the first of their endpoint, and the others.
  LatencyHistogram first_latency;
  LatencyHistogram other_latency;
};

struct ChurnReport {
  std::string csv;        // per mode: calls, errors, percentiles, updates/s
  std::string curve_csv;  // latency by percentile, one column per mode (µs)
  std::string markdown;   // for docs/benchmarks.md and the console
  std::string goals;      // the goal rows, a Markdown table
};

// `applied[i]`: what discovery applied for modes[i] (empty for quiet and
// noise); `threads`: caller threads per mode.
ChurnReport ReportChurn(const std::vector<ChurnMode>& modes,
                        const std::vector<ApplyStats>& applied, int threads);

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_CHURN_REPORT_H_

// What mesh_overhead_bench measured, per variant and concurrency, and the
// report it makes of it: absolute figures pooled over all rounds, and the
// goal ratios as medians of per-round (paired) ratios, so that a noisy
// moment, which hits the variants of one round alike, moves a round's
// ratio less than it moves the pooled figures.
//
//   OverheadSamples s;  s.AddRound(latencies_ms, succeeded, wall_s, cpu_s);
//   OverheadReport r = ReportOverhead(variants, samples_by_concurrency, setup);
//
// Thread-compatible.
#ifndef MESH_BENCH_E2E_OVERHEAD_REPORT_H_
#define MESH_BENCH_E2E_OVERHEAD_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mesh::bench {

// One variant at one concurrency, over all rounds.
struct OverheadSamples {
  // Appends one round's calls (latency of each call, ms).
  void AddRound(const std::vector<double>& latencies_ms, int64_t ok,
                double wall, double cpu);

  std::vector<double> latency_ms;
  int64_t succeeded = 0;
  double wall_s = 0;
  double cpu_s = 0;  // the whole process's CPU time (client and servers)
  std::vector<double> round_p50_ms;
  std::vector<double> round_calls_per_s;
};

// A variant, by name: "grpc_raw" (raw gRPC to one backend) and "mesh_1"
// (mesh::Channel with that one endpoint) are required; "mesh_many" (mesh
// over many backends), "grpc_rr_many" (gRPC round_robin over the same) and
// "proxy_hop" (raw gRPC through a proxy to the one backend) are compared
// when present.
struct OverheadVariant {
  std::string name;   // in the CSV
  std::string label;  // in the Markdown table
};

struct OverheadReport {
  std::string csv;         // per variant and concurrency, pooled
  std::string ratios_csv;  // per concurrency, medians of per-round ratios
  std::string markdown;    // `setup`, both tables
  std::string goals;       // the goal rows, as a Markdown table
};

// REQUIRES: grpc_raw and mesh_1 among `variants`; samples[c] holds one
// entry per variant, in the same order, each with the same number of rounds.
OverheadReport ReportOverhead(
    const std::vector<OverheadVariant>& variants,
    std::map<int, std::vector<OverheadSamples>> samples,
    const std::string& setup);

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_OVERHEAD_REPORT_H_

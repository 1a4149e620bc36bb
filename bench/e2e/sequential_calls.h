// Sequential unary calls (one in flight) through a mesh::Channel, timed
// one by one, for the benchmarks that compare the same calls with and
// without something beside them (mesh_tap_load_bench, mesh_admin_bench).
//
//   LatencyStats s = SequentialCalls(channel, 2000, "none");
//   s.Percentile(50);
//
// Thread-compatible.
#ifndef MESH_BENCH_E2E_SEQUENTIAL_CALLS_H_
#define MESH_BENCH_E2E_SEQUENTIAL_CALLS_H_

#include <string>

#include "bench/e2e/latency_stats.h"
#include "mesh/channel.h"

namespace mesh::bench {

// `calls` calls of "/bench.Echo/Say" with a one-byte message (the echo
// backends answer any method), each started when the last has returned.
LatencyStats SequentialCalls(Channel& channel, int calls,
                             const std::string& name);

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_SEQUENTIAL_CALLS_H_

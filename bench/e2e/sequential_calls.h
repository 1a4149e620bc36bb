// Sequential unary calls (one in flight) through a mesh::Channel, timed
// one by one, for the benchmarks that compare the same calls with and
// without something beside them (mesh_tap_load_bench, mesh_admin_bench).
//
//   EchoDestination books = StartEchoDestination("books:7000", 2);
//   options.discovery = books.discovery;  ... mesh->NewChannel("books:7000")
//   LatencyStats s = SequentialCalls(channel, 2000, "none");
//   s.Percentile(50);
//
// Thread-compatible.
#ifndef MESH_BENCH_E2E_SEQUENTIAL_CALLS_H_
#define MESH_BENCH_E2E_SEQUENTIAL_CALLS_H_

#include <memory>
#include <string>
#include <vector>

#include "bench/e2e/latency_stats.h"
#include "mesh/channel.h"
#include "mesh/discovery.h"
#include "tools/common/echo_backend.h"

namespace mesh::bench {

// Echo backends on 127.0.0.1 and a StaticDiscovery that names them as one
// destination.
struct EchoDestination {
  std::vector<std::unique_ptr<tools::EchoBackend>> backends;
  std::shared_ptr<StaticDiscovery> discovery;
};

// `count` backends serving `target`; exits naming the fault when one
// cannot start.
EchoDestination StartEchoDestination(const std::string& target, int count);

// `calls` calls of "/bench.Echo/Say" with a one-byte message (the echo
// backends answer any method), each started when the last has returned.
LatencyStats SequentialCalls(Channel& channel, int calls,
                             const std::string& name);

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_SEQUENTIAL_CALLS_H_

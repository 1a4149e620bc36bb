// Closed-loop unary calls through a generated meshtest.TestEcho stub, for
// the end-to-end benchmarks that compare two channels side by side
// (mesh_stub_bench, mesh_tls_bench).
//
//   UnaryRun run = RunUnary(*stub, /*calls=*/2000, /*threads=*/8);
//   run.p50_ms; run.calls_per_s;
//
// Thread-compatible (each run starts and joins its own threads).
#ifndef MESH_BENCH_E2E_UNARY_LOOP_H_
#define MESH_BENCH_E2E_UNARY_LOOP_H_

#include <vector>

#include "absl/time/time.h"
#include "meshtest/echo.grpc.pb.h"

namespace mesh::bench {

struct UnaryRun {
  double p50_ms = 0;
  double calls_per_s = 0;
};

// `calls` calls split over `threads` workers, each starting its next call
// when the last returns; sync stub calls, or callback ones (the worker
// waiting for the callback). 64-byte messages, a 5 s deadline each. Dies
// (bench_cli.h's Die) if any call fails.
UnaryRun RunUnary(meshtest::TestEcho::Stub& stub, int calls, int threads,
                  bool callback = false);

// The p50 and rate of a run that started at `start` and has just ended,
// from each worker's latencies (ms) and successes; dies if any of its
// `expected` calls failed.
UnaryRun Summarize(const std::vector<std::vector<double>>& latencies,
                   const std::vector<int>& ok, int expected, absl::Time start);

// The median of `v` (0 when empty).
double Median(std::vector<double> v);

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_UNARY_LOOP_H_

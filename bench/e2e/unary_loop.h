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

#include <functional>
#include <vector>

#include "bench/e2e/latency_stats.h"
#include "meshtest/echo.grpc.pb.h"

namespace mesh::bench {

struct UnaryRun {
  double p50_ms = 0;
  double calls_per_s = 0;
  // CPU time of the whole process (callers, gRPC, mesh, the server) over
  // the run, per call: what a call costs, apart from where the scheduler
  // puts the threads that wake each other.
  double cpu_us_per_call = 0;
};

// `calls` calls split over `threads` workers, each making its next call
// when the last returns: `call` makes one (64-byte message; thread-safe),
// true if it succeeded. The p50 latency, the rate and the CPU; dies
// (bench_cli.h's Die) if any call failed.
UnaryRun RunClosedLoop(
    int calls, int threads,
    const std::function<bool(const meshtest::EchoRequest&)>& call);

// RunClosedLoop with `stub`'s Unary: sync calls, or callback ones (the
// worker waiting for the callback); a 5 s deadline each.
UnaryRun RunUnary(meshtest::TestEcho::Stub& stub, int calls, int threads,
                  bool callback = false);

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_UNARY_LOOP_H_

// An open-loop load for the tail-latency benchmarks (mesh_tail_latency_bench,
// mesh_hedge_bench): calls start at a fixed rate whatever is in flight, and
// each latency counts from the call's scheduled start, so queueing in the
// client shows.
//
//   StartCall start = [channel](std::function<void(bool)> done) {...};
//   LatencyStats s = RunOpenLoop("p2c", start, 500, 9, 5000, [](double) {});
//
// Thread-compatible (one run at a time); the calls complete on any thread.
#ifndef MESH_BENCH_E2E_OPEN_LOOP_H_
#define MESH_BENCH_E2E_OPEN_LOOP_H_

#include <functional>
#include <string>

#include "absl/time/time.h"
#include "bench/e2e/latency_stats.h"
#include "mesh/mesh.h"

namespace mesh::bench {

// Starts one call; `done(ok)` runs once, on any thread, and must not block.
using StartCall = std::function<void(std::function<void(bool)> done)>;

// Calls over a new channel of `mesh` to `target`, once it has endpoints (5 s
// at most; exits naming the fault otherwise): each one 64-byte call of
// kBenchMethod with `timeout`, done(ok) when it ends.
StartCall MeshChannelCaller(Mesh& mesh, const std::string& target,
                            const ChannelOptions& options,
                            absl::Duration timeout);

// Starts calls at `rate` per second for `duration_s`, each at its scheduled
// time (or at once if the loop is behind), and waits for them up to the
// call deadline plus 5 s. `phase(elapsed_s)` runs before each call (a
// schedule of changes to the backends). Calls not done by then count as
// failed, with the time waited as their latency.
LatencyStats RunOpenLoop(const std::string& name, const StartCall& start,
                         double rate, double duration_s, double timeout_ms,
                         const std::function<void(double)>& phase);

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_OPEN_LOOP_H_

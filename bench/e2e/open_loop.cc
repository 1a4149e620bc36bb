#include "bench/e2e/open_loop.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/grpc_caller.h"

namespace mesh::bench {
namespace {

// The calls of one open-loop run. Shared with the completions, which may
// outlive a run that timed out waiting for them.
struct RunState {
  explicit RunState(size_t n) : latency_ms(n, 0.0), ok(n, 0), done(n, 0) {}
  std::vector<double> latency_ms;  // slot i: call i, from its scheduled start
  std::vector<char> ok;
  std::vector<char> done;
  absl::Mutex mu;
  size_t completed ABSL_GUARDED_BY(mu) = 0;
};

}  // namespace

LatencyStats RunOpenLoop(const std::string& name, const StartCall& start,
                         double rate, double duration_s, double timeout_ms,
                         const std::function<void(double)>& phase) {
  using Clock = std::chrono::steady_clock;
  const size_t n = static_cast<size_t>(rate * duration_s);
  auto state = std::make_shared<RunState>(n);
  const auto t0 = Clock::now() + std::chrono::milliseconds(1);
  const std::chrono::duration<double> interval(1.0 / rate);
  for (size_t i = 0; i < n; ++i) {
    const auto scheduled =
        t0 + std::chrono::duration_cast<Clock::duration>(interval * i);
    std::this_thread::sleep_until(scheduled);
    phase(std::chrono::duration<double>(Clock::now() - t0).count());
    start([state, i, scheduled](bool ok) {
      std::chrono::duration<double, std::milli> took = Clock::now() - scheduled;
      absl::MutexLock lock(&state->mu);
      state->latency_ms[i] = took.count();
      state->ok[i] = ok ? 1 : 0;
      state->done[i] = 1;
      ++state->completed;
    });
  }
  std::vector<double> latencies;
  int64_t succeeded = 0;
  {
    absl::MutexLock lock(&state->mu);
    auto all_done = [&state]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state->mu) {
      return state->completed == state->latency_ms.size();
    };
    const absl::Duration wait =
        absl::Milliseconds(timeout_ms) + absl::Seconds(5);
    if (!state->mu.AwaitWithTimeout(absl::Condition(&all_done), wait)) {
      std::fprintf(stderr, "%s: %zu of %zu calls still in flight after %s\n",
                   name.c_str(), n - state->completed, n,
                   absl::FormatDuration(wait).c_str());
      const double waited_ms =
          std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      for (size_t i = 0; i < n; ++i) {
        if (!state->done[i]) {
          state->latency_ms[i] = waited_ms;
        }
      }
    }
    latencies = state->latency_ms;
    for (char ok : state->ok) succeeded += ok;
  }
  return LatencyStats::From(name, std::move(latencies), succeeded);
}

StartCall MeshChannelCaller(Mesh& mesh, const std::string& target,
                            const ChannelOptions& options,
                            absl::Duration timeout) {
  absl::StatusOr<std::unique_ptr<Channel>> channel =
      mesh.NewChannel(target, options);
  if (!channel.ok()) Die(channel.status().ToString());
  absl::Status s = (*channel)->WaitForEndpoints(absl::Seconds(5));
  if (!s.ok()) Die(absl::StrCat(target, ": ", s.ToString()));
  std::shared_ptr<Channel> shared = *std::move(channel);
  CallOptions call_options;
  call_options.timeout = timeout;
  return [shared, call_options](std::function<void(bool)> done) {
    shared->CallRawAsync(
        kBenchMethod, std::string(64, 'x'), call_options,
        [done = std::move(done)](CallResult r) { done(r.status.ok()); });
  };
}

}  // namespace mesh::bench

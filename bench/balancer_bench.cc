// Micro-benchmarks of the balancer's data path (Pick + Complete) and control
// path (a 10k-endpoint Reset applied and published). See docs/benchmarks.md
// for how to run them, the figures and the targets.
//
//   mesh_micro_bench --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
//
// Multi-threaded runs share one balancer: thread 0 builds it before the timed
// loop (Google Benchmark holds every thread at a barrier until the loop
// starts) and destroys it after the loop (another barrier).
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "benchmark/benchmark.h"
#include "mesh/balancer.h"
#include "mesh/endpoint.h"
#include "src/balance/balancer.h"
#include "src/base/clock.h"
#include "src/model/endpoint_set.h"

namespace mesh {
namespace {

using ::mesh::internal::Balancer;
using ::mesh::internal::CallHandle;
using ::mesh::internal::CallOutcome;
using ::mesh::internal::Clock;

// `n` distinct valid IPv4 endpoints "10.x.y.z:port". `first` offsets the
// index, so [first, first + n) sets of equal `port` overlap where the ranges
// do. Weights are 1, or cycle through 1..4 if `weighted`.
std::vector<Endpoint> MakeEndpoints(size_t n, size_t first = 0,
                                    bool weighted = false) {
  std::vector<Endpoint> out;
  out.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    size_t i = first + k;
    Endpoint e;
    e.address = absl::StrCat("10.", (i >> 16) & 0xff, ".", (i >> 8) & 0xff, ".",
                             i & 0xff, ":", 8080 + (i >> 24));
    e.weight = weighted ? static_cast<uint32_t>(1 + k % 4) : 1;
    out.push_back(std::move(e));
  }
  return out;
}

std::unique_ptr<Balancer> MakeBalancer(BalancerKind kind,
                                       const std::vector<Endpoint>& endpoints) {
  BalancerOptions options;
  options.kind = kind;
  absl::StatusOr<std::unique_ptr<Balancer>> b = Balancer::Create(options);
  if (!b.ok()) {
    std::cerr << "Balancer::Create: " << b.status() << "\n";
    std::abort();
  }
  (*b)->SetEndpoints(endpoints);
  return *std::move(b);
}

// The balancer shared by the threads of the running benchmark.
std::unique_ptr<Balancer>& Shared() {
  static auto* balancer = new std::unique_ptr<Balancer>();
  return *balancer;
}

// The timed loop both pick benchmarks share: one Pick() and one
// Complete(kSuccess) on the shared balancer per iteration.
void PickReleaseLoop(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<CallHandle> h = Shared()->Pick();
    if (!h.ok()) {
      state.SkipWithError("Pick failed");
      break;
    }
    h->Complete(CallOutcome::kSuccess);
  }
  state.SetItemsProcessed(state.iterations());
}

// One Pick() and Complete(kSuccess) per iteration, on a shared balancer of
// state.range(0) endpoints.
void BM_PickRelease(benchmark::State& state, BalancerKind kind, bool weighted) {
  size_t n = static_cast<size_t>(state.range(0));
  if (state.thread_index() == 0) {
    Shared() = MakeBalancer(kind, MakeEndpoints(n, 0, weighted));
  }
  PickReleaseLoop(state);
  if (state.thread_index() == 0) Shared().reset();
}

BENCHMARK_CAPTURE(BM_PickRelease, P2C, BalancerKind::kP2cPeakEwma,
                  /*weighted=*/false)
    ->Arg(10)
    ->Arg(1000)
    ->Arg(100000)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_PickRelease, RoundRobin, BalancerKind::kRoundRobin,
                  /*weighted=*/false)
    ->Arg(1000)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();
// Weights 1..4: P2C draws through the alias table instead of uniformly.
BENCHMARK_CAPTURE(BM_PickRelease, P2CWeighted, BalancerKind::kP2cPeakEwma,
                  /*weighted=*/true)
    ->Arg(1000)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

// One PickHashed() and Complete(kSuccess) per iteration on a shared
// ring-hash balancer of state.range(0) endpoints. The hashes are computed
// beforehand (a route's hash policy hands the balancer a hash): 65,536
// random ones in turn. (With a few thousand, the branch predictor learns
// the binary searches and hides what unpredictable hashes cost.)
void BM_RingHashPick(benchmark::State& state) {
  constexpr size_t kHashes = 65536;
  size_t n = static_cast<size_t>(state.range(0));
  if (state.thread_index() == 0) {
    Shared() = MakeBalancer(BalancerKind::kRingHash, MakeEndpoints(n));
  }
  std::mt19937_64 gen(static_cast<uint64_t>(state.thread_index()));
  std::vector<uint64_t> hashes(kHashes);
  for (uint64_t& h : hashes) h = gen();
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<CallHandle> h = Shared()->PickHashed(hashes[i++ % kHashes]);
    if (!h.ok()) {
      state.SkipWithError("PickHashed failed");
      break;
    }
    h->Complete(CallOutcome::kSuccess);
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) Shared().reset();
}
BENCHMARK(BM_RingHashPick)
    ->Arg(16)
    ->Arg(1000)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

// Pick + Complete on a P2C balancer of 1000 endpoints while a background
// thread republishes it in a loop, alternating between two sets that share
// half their addresses (each SetEndpoints replaces 500 endpoints).
void BM_PickUnderChurn(benchmark::State& state) {
  static std::atomic<bool>* stop = new std::atomic<bool>(false);
  static std::thread* churn = nullptr;
  static std::atomic<uint64_t>* publishes = new std::atomic<uint64_t>(0);
  if (state.thread_index() == 0) {
    Shared() = MakeBalancer(BalancerKind::kP2cPeakEwma, MakeEndpoints(1000));
    stop->store(false);
    publishes->store(0);
    churn = new std::thread([] {
      const std::vector<Endpoint> sets[2] = {MakeEndpoints(1000),
                                             MakeEndpoints(1000, 500)};
      for (uint64_t i = 0; !stop->load(std::memory_order_relaxed); ++i) {
        Shared()->SetEndpoints(sets[i & 1]);
        publishes->fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  PickReleaseLoop(state);
  if (state.thread_index() == 0) {
    stop->store(true);
    churn->join();
    delete churn;
    churn = nullptr;
    state.counters["publishes"] = benchmark::Counter(
        static_cast<double>(publishes->load()), benchmark::Counter::kIsRate);
    Shared().reset();
  }
}
BENCHMARK(BM_PickUnderChurn)->Threads(1)->UseRealTime();

// One read of the clock the balancer uses (Clock::Real(), steady_clock): a
// pick + release reads it three times (pick, handle start, Complete).
void BM_ClockRead(benchmark::State& state) {
  const Clock* clock = Clock::Real();
  for (auto _ : state) benchmark::DoNotOptimize(clock->NowNanos());
}
BENCHMARK(BM_ClockRead);

// The control path of one 10k-endpoint Reset as Destination does it:
// EndpointSet::Apply, then Balancer::SetSharedEndpoints over the set's
// entries (shared, not copied; load-record reuse by address, alias table,
// snapshot publish). Iterations alternate
// between two sets A and B of 10,000 endpoints; with state.range(0) == 0 they
// share half their addresses (each Reset removes 5,000 endpoints, adds 5,000
// and keeps 5,000), with 1 they are disjoint (all 10,000 replaced).
void BM_ResetApply10k(benchmark::State& state) {
  constexpr size_t kN = 10000;
  bool disjoint = state.range(0) != 0;
  const EndpointUpdate updates[2] = {
      EndpointUpdate::Reset(MakeEndpoints(kN)),
      EndpointUpdate::Reset(MakeEndpoints(kN, disjoint ? kN : kN / 2))};
  internal::EndpointSet set;
  std::unique_ptr<Balancer> balancer =
      MakeBalancer(BalancerKind::kP2cPeakEwma, {});
  // Start from A, so that the first timed iteration (B) is a real change.
  // What Destination::Feed hands a balancer: the entries, shared.
  auto feed = [&set, &balancer] {
    const internal::EndpointSet::List& list = *set.entries();
    balancer->SetSharedEndpoints(
        list.size(),
        [&list](size_t i) -> const Endpoint& { return list[i]->endpoint; },
        [&list](size_t i) {
          return std::shared_ptr<const Endpoint>(list[i], &list[i]->endpoint);
        });
  };
  if (!set.Apply(updates[0]).ok()) std::abort();
  feed();
  uint64_t i = 1;
  for (auto _ : state) {
    absl::Status s = set.Apply(updates[i++ & 1]);
    if (!s.ok()) {
      state.SkipWithError("Apply failed");
      break;
    }
    feed();
  }
  state.SetLabel(disjoint ? "all 10k replaced" : "5k replaced, 5k kept");
}
BENCHMARK(BM_ResetApply10k)
    ->ArgName("disjoint")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mesh

// Google Benchmark's main, plus one flag of ours, removed before Initialize:
//
//   --mesh_deadlock_detection=off
//
// absl::Mutex checks lock order on every Lock() unless Abseil was built with
// NDEBUG; distribution packages (Debian's libabsl-dev) are built without it.
// PeakEwma::Observe locks a Mutex on every Complete(), so this flag measures
// what a release build of Abseil would cost.
int main(int argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mesh_deadlock_detection=off") == 0) {
      absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

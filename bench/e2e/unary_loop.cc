#include "bench/e2e/unary_loop.h"

#include <algorithm>
#include <functional>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/latency_stats.h"
#include "src/base/mutex.h"

namespace mesh::bench {

using meshtest::EchoRequest;
using meshtest::EchoResponse;
using meshtest::TestEcho;

namespace {

// The p50, rate and CPU of a run that started at `start` (the process
// having used `cpu_start` seconds of CPU then) and has just ended; dies if
// any of its `expected` calls failed.
UnaryRun Summarize(const std::vector<std::vector<double>>& latencies,
                   const std::vector<int>& ok, int expected, absl::Time start,
                   double cpu_start) {
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const double cpu_s = ProcessCpuSeconds() - cpu_start;
  std::vector<double> all;
  int succeeded = 0;
  for (size_t t = 0; t < latencies.size(); ++t) {
    all.insert(all.end(), latencies[t].begin(), latencies[t].end());
    succeeded += ok[t];
  }
  if (succeeded != expected) {
    Die(absl::StrCat(expected - succeeded, " unary calls failed"));
  }
  LatencyStats stats = LatencyStats::From("run", std::move(all), succeeded);
  return {stats.Percentile(50), expected / seconds, cpu_s * 1e6 / expected};
}

}  // namespace

UnaryRun RunClosedLoop(int calls, int threads,
                       const std::function<bool(const EchoRequest&)>& call) {
  std::vector<std::vector<double>> latencies(threads);
  std::vector<int> ok(threads, 0);
  const int per_thread = std::max(1, calls / threads);
  EchoRequest request;
  request.set_message(std::string(64, 'x'));
  absl::Time start = absl::Now();
  const double cpu_start = ProcessCpuSeconds();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      latencies[t].reserve(per_thread);
      for (int i = 0; i < per_thread; ++i) {
        absl::Time begin = absl::Now();
        const bool succeeded = call(request);
        latencies[t].push_back(absl::ToDoubleMilliseconds(absl::Now() - begin));
        if (succeeded) ++ok[t];
      }
    });
  }
  for (auto& w : workers) w.join();
  return Summarize(latencies, ok, per_thread * threads, start, cpu_start);
}

UnaryRun RunUnary(TestEcho::Stub& stub, int calls, int threads, bool callback) {
  return RunClosedLoop(
      calls, threads, [&stub, callback](const EchoRequest& request) {
        grpc::ClientContext context;
        context.set_deadline(
            absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
        EchoResponse response;
        grpc::Status status;
        if (callback) {
          internal::Notification done;
          stub.async()->Unary(&context, &request, &response,
                              [&](grpc::Status s) {
                                status = std::move(s);
                                done.Notify();
                              });
          done.WaitForNotification();
        } else {
          status = stub.Unary(&context, request, &response);
        }
        return status.ok();
      });
}

}  // namespace mesh::bench

// What the route engine adds per call besides matching: classifying the
// response and recording route and endpoint metrics (counters and the
// latency histogram), single-threaded and with threads sharing one route.
#include "benchmark/benchmark.h"
#include "src/metrics/metrics_registry.h"
#include "src/route/classify.h"

namespace mesh::internal {
namespace {

// One call's worth of metrics: a request, an attempt, the endpoint's
// attempt and response, the route's response with its latency.
void BM_RecordCallMetrics(benchmark::State& state) {
  static MetricsRegistry registry;
  static std::shared_ptr<RouteMetrics> route =
      registry.Route("books.local:7001", "GetBook");
  static std::shared_ptr<EndpointMetrics> endpoint =
      registry.Endpoint("books.local:7001", "10.0.0.1:7001");
  absl::Duration latency = absl::Microseconds(1500);
  for (auto _ : state) {
    route->RecordRequest();
    route->RecordAttempt(/*is_retry=*/false);
    endpoint->RecordAttempt();
    endpoint->RecordResponse(/*failure=*/false, 0);
    route->RecordResponse(/*failure=*/false, 0, latency);
  }
}
BENCHMARK(BM_RecordCallMetrics)->Threads(1)->Threads(2);

// Classification with no response class (the default) and with a class
// list that the status falls through.
void BM_Classify(benchmark::State& state) {
  std::vector<ResponseClass> classes;
  if (state.range(0) == 1) {
    classes = {{ResponseMatch::Status(500, 599), true},
               {ResponseMatch::Status(429, 429), true}};
  }
  absl::Status status = absl::InternalError("boom");
  for (auto _ : state) {
    benchmark::DoNotOptimize(IsFailure(classes, status, 200));
  }
}
BENCHMARK(BM_Classify)->ArgName("classes")->Arg(0)->Arg(1);

}  // namespace
}  // namespace mesh::internal

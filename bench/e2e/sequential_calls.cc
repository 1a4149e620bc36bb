#include "bench/e2e/sequential_calls.h"

#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "bench/e2e/bench_cli.h"

namespace mesh::bench {

EchoDestination StartEchoDestination(const std::string& target, int count) {
  EchoDestination out;
  std::vector<Endpoint> endpoints;
  for (int i = 0; i < count; ++i) {
    auto b = tools::EchoBackend::Start();
    if (!b.ok()) Die(b.status().ToString());
    endpoints.push_back(Endpoint((*b)->address()));
    out.backends.push_back(*std::move(b));
  }
  out.discovery = StaticDiscovery::Create();
  if (absl::Status s = out.discovery->SetEndpoints(target, endpoints);
      !s.ok()) {
    Die(s.ToString());
  }
  return out;
}

LatencyStats SequentialCalls(Channel& channel, int calls,
                             const std::string& name) {
  std::vector<double> ms;
  ms.reserve(calls);
  int64_t ok = 0;
  for (int i = 0; i < calls; ++i) {
    const absl::Time start = absl::Now();
    CallResult r = channel.CallRaw("/bench.Echo/Say", "x");
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
    ok += r.status.ok();
  }
  return LatencyStats::From(name, std::move(ms), ok);
}

}  // namespace mesh::bench

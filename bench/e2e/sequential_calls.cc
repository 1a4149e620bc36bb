#include "bench/e2e/sequential_calls.h"

#include <utility>
#include <vector>

#include "absl/time/clock.h"

namespace mesh::bench {

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

// libFuzzer target for the route table builder (src/route/route_table.h):
// whatever routes a control plane or code hands over — any regexes, trees
// of any shape, any counts — the table builds within its limits or drops
// the piece with a line, and matching never crashes. The input drives a
// FuzzedDataProvider that builds a ServiceConfig and then request heads.
//
// Run through scripts/fuzz.sh. A violated invariant aborts with a message.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mesh/service_config.h"
#include "src/route/route_table.h"
#include "tests/fuzz/fuzz_require.h"

namespace {

using mesh::RequestMatch;
using mesh::internal::RouteTable;

// Deeper than the default limit (16), shallow enough that the fuzzer's own
// recursion (and RequestMatch's destructor) stays far from the stack's end.
constexpr int kMaxBuiltDepth = 64;

RequestMatch BuildMatch(FuzzedDataProvider& in, int depth, int* budget) {
  if (--*budget <= 0 || depth >= kMaxBuiltDepth || in.remaining_bytes() == 0) {
    return RequestMatch::Method(in.ConsumeRandomLengthString(8));
  }
  switch (in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0:
    case 1: {
      std::vector<RequestMatch> children(
          in.ConsumeIntegralInRange<size_t>(0, 300));
      for (RequestMatch& c : children) c = BuildMatch(in, depth + 1, budget);
      return in.ConsumeBool() ? RequestMatch::All(std::move(children))
                              : RequestMatch::Any(std::move(children));
    }
    case 2: {
      RequestMatch m = RequestMatch::Not(BuildMatch(in, depth + 1, budget));
      // Sometimes a malformed `not`: no child, or two.
      if (in.ConsumeBool()) m.children.clear();
      if (in.ConsumeBool()) m.children.push_back(RequestMatch::All({}));
      return m;
    }
    case 3:
      return RequestMatch::Path(in.ConsumeRandomLengthString(64));
    case 4: {
      mesh::HeaderMatch h;
      h.name = in.ConsumeRandomLengthString(8);
      h.kind = static_cast<mesh::HeaderMatch::Kind>(
          in.ConsumeIntegralInRange<int>(0, 3));
      h.value = in.ConsumeRandomLengthString(32);
      return RequestMatch::Header(std::move(h));
    }
    default:
      return RequestMatch::Method(in.ConsumeRandomLengthString(8));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  mesh::RouteLimits limits;
  if (in.ConsumeBool()) {  // small limits, so that they are reached often
    limits.max_routes = in.ConsumeIntegralInRange<uint32_t>(1, 20);
    limits.max_conditions_per_route =
        in.ConsumeIntegralInRange<uint32_t>(1, 50);
    limits.max_depth = in.ConsumeIntegralInRange<uint32_t>(1, 20);
    limits.max_regex_program_size = in.ConsumeIntegralInRange<int64_t>(1, 5000);
  }
  mesh::ServiceConfig config;
  int budget = 5000;  // nodes built in all, so one input stays quick
  const size_t routes = in.ConsumeIntegralInRange<size_t>(0, 40);
  for (size_t i = 0; i < routes && budget > 0; ++i) {
    mesh::Route r;
    r.name = in.ConsumeRandomLengthString(16);
    r.condition = BuildMatch(in, 0, &budget);
    config.routes.push_back(std::move(r));
  }
  std::vector<std::string> dropped;
  std::shared_ptr<const RouteTable> table =
      RouteTable::Build(config, limits, &dropped);
  REQUIRE(table != nullptr, "no table");
  REQUIRE(table->size() <= limits.max_routes, "more routes than the limit");
  // Each route left out has its line, but those past max_routes share one.
  REQUIRE(config.routes.size() > limits.max_routes ||
              table->size() + dropped.size() >= config.routes.size(),
          "a route left out without a line");
  REQUIRE(table->At(table->size()).is_default, "default route not last");
  for (int i = 0; i < 8 && in.remaining_bytes() > 0; ++i) {
    std::vector<std::pair<std::string, std::string>> headers;
    headers.emplace_back(in.ConsumeRandomLengthString(8),
                         in.ConsumeRandomLengthString(16));
    const std::string method = in.ConsumeRandomLengthString(8);
    const std::string path = in.ConsumeRandomLengthString(64);
    const mesh::internal::CompiledRoute& route =
        table->Match({method, path, &headers});
    REQUIRE(route.index <= table->size(), "match out of range");
  }
  return 0;
}

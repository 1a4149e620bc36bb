// Route matching on the data path: a table of gRPC-method routes, as a
// profile or xDS config would give, matched against typical paths.
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "src/route/route_table.h"

namespace mesh::internal {
namespace {

std::shared_ptr<const RouteTable> TableOf(int routes) {
  ServiceConfig c;
  for (int i = 0; i < routes; ++i) {
    Route r;
    r.name = "Method" + std::to_string(i);
    r.condition =
        RequestMatch::All({RequestMatch::Method("POST"),
                           RequestMatch::Path("^/books\\.Library/Method" +
                                              std::to_string(i) + "$")});
    c.routes.push_back(r);
  }
  return RouteTable::Build(c, nullptr);
}

// Arg 0: routes in the table. The path matches the last route (the worst
// case short of no match), or none with arg 1 = 1.
void BM_RouteMatch(benchmark::State& state) {
  const int routes = static_cast<int>(state.range(0));
  auto table = TableOf(routes);
  std::string path = state.range(1) == 1
                         ? "/authors.Registry/Get"
                         : "/books.Library/Method" + std::to_string(routes - 1);
  for (auto _ : state) {
    const CompiledRoute& r = table->Match({"POST", path, nullptr});
    benchmark::DoNotOptimize(&r);
  }
}
BENCHMARK(BM_RouteMatch)
    ->ArgNames({"routes", "miss"})
    ->Args({1, 0})
    ->Args({10, 0})
    ->Args({10, 1})
    ->Args({100, 0});

}  // namespace
}  // namespace mesh::internal

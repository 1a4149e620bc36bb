// CompiledRoutes: what one service config means for the calls of a
// destination: its route table, a fresh retry budget, the traffic split,
// the direct endpoint, the route metrics and the keys of every split
// backend. Built by the control path at each config; immutable once
// published, read by every call without a lock.
//
//   std::vector<std::string> dropped;  // parts left out, one line each
//   CompiledRoutes r = CompileRoutes(config, limits, generation, *metrics,
//                                    "books:7000", &dropped);
//
// Thread-safe (immutable; the budget ledger is itself thread-safe).
#ifndef MESH_SRC_CHANNEL_COMPILED_ROUTES_H_
#define MESH_SRC_CHANNEL_COMPILED_ROUTES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "mesh/endpoint.h"
#include "mesh/service_config.h"
#include "src/metrics/metrics_registry.h"
#include "src/route/retry_budget.h"
#include "src/route/route_table.h"
#include "src/route/traffic_split.h"

namespace mesh::internal {

struct CompiledRoutes {
  std::shared_ptr<const RouteTable> table;
  std::shared_ptr<RetryBudgetLedger> budget;
  std::shared_ptr<const TrafficSplit> split;  // null: no split
  // ServiceConfig::endpoint: calls go straight to it, without balancing.
  std::shared_ptr<const Endpoint> direct;
  // Per route, by CompiledRoute::index (the default route last).
  std::vector<std::shared_ptr<RouteMetrics>> route_metrics;
  // Counts the configs its destination has had (0: none yet).
  uint64_t generation = 0;
  // Every backend of the split and of the routes' splits, by
  // TrafficSplit::KeyOf.
  std::shared_ptr<const absl::flat_hash_set<std::string>> backend_keys;
};

// Compiles `config` within `limits` as generation `generation` of
// `target`'s routes, with route metrics from `metrics` (kept across configs
// by route name). Without a (valid) retry budget, Linkerd's default
// applies: 20% of requests, 10 retries/s, over 10 s; the budget starts
// afresh with each config. What is left out (an invalid budget, direct
// endpoint, route or backend) is said in `dropped`, if not null.
CompiledRoutes CompileRoutes(const ServiceConfig& config,
                             const RouteLimits& limits, uint64_t generation,
                             MetricsRegistry& metrics,
                             const std::string& target,
                             std::vector<std::string>* dropped);

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_COMPILED_ROUTES_H_

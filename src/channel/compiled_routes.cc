#include "src/channel/compiled_routes.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/clock.h"

namespace mesh::internal {

CompiledRoutes CompileRoutes(const ServiceConfig& config,
                             const RouteLimits& limits, uint64_t generation,
                             MetricsRegistry& metrics,
                             const std::string& target,
                             std::vector<std::string>* dropped) {
  RetryBudget budget;
  if (config.retry_budget) {
    absl::Status valid = ValidateRetryBudget(*config.retry_budget);
    if (valid.ok()) {
      budget = *config.retry_budget;
    } else if (dropped != nullptr) {
      dropped->push_back(absl::StrCat(valid.message(), "; using the default"));
    }
  }
  std::shared_ptr<const Endpoint> direct;
  if (config.endpoint) {
    absl::Status valid = ValidateEndpoint(*config.endpoint);
    if (valid.ok()) {
      direct = std::make_shared<const Endpoint>(*config.endpoint);
    } else if (dropped != nullptr) {
      dropped->push_back(
          absl::StrCat("direct endpoint dropped: ", valid.message()));
    }
  }
  CompiledRoutes routes{
      RouteTable::Build(config, limits, dropped),
      std::make_shared<RetryBudgetLedger>(budget, Clock::Real()),
      TrafficSplit::Build(config.backends, dropped),
      std::move(direct),
      {},
      generation,
      nullptr};
  auto keys = std::make_shared<absl::flat_hash_set<std::string>>();
  auto add = [&keys](const std::shared_ptr<const TrafficSplit>& split) {
    if (split == nullptr) return;
    for (size_t i = 0; i < split->size(); ++i) keys->insert(split->key(i));
  };
  add(routes.split);
  for (size_t i = 0; i < routes.table->size(); ++i) {
    add(routes.table->At(i).split);
  }
  routes.backend_keys = std::move(keys);
  // Metrics by route name, kept across configs.
  for (size_t i = 0; i <= routes.table->size(); ++i) {
    routes.route_metrics.push_back(
        metrics.Route(target, routes.table->At(i).metrics_name));
  }
  return routes;
}

}  // namespace mesh::internal

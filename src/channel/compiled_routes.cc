#include "src/channel/compiled_routes.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/clock.h"

namespace mesh::internal {
namespace {

// The labels of a route's identity that its metrics carry: a Linkerd policy
// route's parent and route resource, as linkerd2-proxy labels its route
// metrics. (Other metrics labels, a profile's say, stay out: their names
// are the control plane's to choose.)
LabelPairs IdentityLabels(const CompiledRoute& route) {
  static constexpr const char* kIdentity[] = {
      "parent_group", "parent_kind", "parent_namespace", "parent_name",
      "route_group",  "route_kind",  "route_namespace",  "route_name"};
  LabelPairs out;
  for (const char* name : kIdentity) {
    auto it = route.metrics_labels.find(name);
    if (it != route.metrics_labels.end()) out.emplace_back(name, it->second);
  }
  return out;
}

}  // namespace

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
  // Metrics by route name (and a policy route's identity), kept across
  // configs.
  for (size_t i = 0; i <= routes.table->size(); ++i) {
    const CompiledRoute& r = routes.table->At(i);
    routes.route_metrics.push_back(
        metrics.Route(target, r.metrics_name, IdentityLabels(r)));
  }
  return routes;
}

}  // namespace mesh::internal

// MetricsRegistry: the route and endpoint metrics of one Mesh, and their
// rendering in the Prometheus text format (the names and labels are listed
// in docs/metrics.md).
//
// The control path gets or creates the per-route and per-endpoint objects
// and hands them to the call path, which records into them without touching
// the registry. Rendering copies the pointers under the lock and formats
// without it.
//
//   MetricsRegistry registry;
//   auto route = registry.Route("books:8080", "[default]");
//   auto endpoint = registry.Endpoint("books:8080", "10.0.0.7:8080");
//   std::string text = registry.RenderPrometheus(gauges_from_balancers);
//
// Thread-safe.
#ifndef MESH_SRC_METRICS_METRICS_REGISTRY_H_
#define MESH_SRC_METRICS_METRICS_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "src/base/mutex.h"
#include "src/metrics/endpoint_metrics.h"
#include "src/metrics/route_metrics.h"

namespace mesh::internal {

// Balancer state of one endpoint as one channel sees it, collected by the
// caller at render time. Entries with the same (authority, address) — one
// per channel of the destination — are combined: ejections and pending
// summed, ejected OR-ed, the largest RTT estimate kept.
struct EndpointGauges {
  std::string authority;
  std::string address;
  uint64_t ejections = 0;  // times ejected so far
  bool ejected = false;    // ejected now
  int64_t pending = 0;     // calls in flight
  double rtt_estimate_ms = 0;
};

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // The metrics of `route` (the caller names the implicit default route
  // "[default]") of `authority`, created on first use and kept for the
  // registry's lifetime: the same object for the same three. `identity`
  // labels every series of the route after authority and route (a Linkerd
  // policy route's parent_* and route_* labels); other labels, another
  // series.
  std::shared_ptr<RouteMetrics> Route(const std::string& authority,
                                      const std::string& route,
                                      const LabelPairs& identity = {});

  // The metrics of the endpoint `address` of `authority`: the same object as
  // long as someone holds it, a fresh one after the last holder let go. The
  // registry holds it weakly: the caller (the destination, from the
  // endpoint's first attempt) keeps the shared_ptr while the endpoint is in
  // its set, and the endpoint leaves the output after that.
  // `tls` labels its traffic series (endpoint_request_total,
  // endpoint_response_total); a live object with other labels is replaced
  // by a new one (a new series).
  std::shared_ptr<EndpointMetrics> Endpoint(const std::string& authority,
                                            const std::string& address,
                                            LabelPairs tls = {});

  // Every family in the Prometheus text exposition format 0.0.4, families
  // and series in sorted order; route counters appear (at 0) as soon as the
  // route exists, response series only once non-zero. `gauges` feeds the
  // endpoint_ejections_total, endpoint_ejected, endpoint_pending and
  // endpoint_rtt_estimate_ms families.
  std::string RenderPrometheus(const std::vector<EndpointGauges>& gauges) const;

  // Endpoint entries held, live or expired; for tests of the pruning.
  size_t EndpointEntriesForTest() const;

 private:
  using Key = std::pair<std::string, std::string>;  // authority, route/addr
  static constexpr size_t kMinPruneSize = 64;

  // Drops expired endpoint entries once the map has doubled since the last
  // pruning, so churn costs amortized O(1) per insert and bounded memory.
  void MaybePruneEndpoints() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  using RouteKey = std::pair<Key, LabelPairs>;  // and identity labels
  std::map<RouteKey, std::shared_ptr<RouteMetrics>> routes_
      ABSL_GUARDED_BY(mu_);
  std::map<Key, std::weak_ptr<EndpointMetrics>> endpoints_ ABSL_GUARDED_BY(mu_);
  size_t prune_at_ ABSL_GUARDED_BY(mu_) = kMinPruneSize;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_METRICS_METRICS_REGISTRY_H_

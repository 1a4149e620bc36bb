// What an xDS cluster's calls are given: the endpoints of an assignment as
// served, and the balancing, limits, ejection and TLS of a Cluster.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "src/discovery/xds/xds_convert.h"

namespace mesh::internal::xds {
namespace {

// Ring-hash rings get at most this many entries, as gRPC's do.
constexpr uint64_t kMaxRingSize = 4096;

// `e` of locality `l` as served: labelled with the locality's names.
void AddServed(const LocalityEndpoints& l, const Endpoint& e,
               std::vector<Endpoint>* out) {
  Endpoint& served = out->emplace_back(e);
  if (!l.region.empty()) served.labels.emplace("region", l.region);
  if (!l.zone.empty()) served.labels.emplace("zone", l.zone);
  if (!l.sub_zone.empty()) served.labels.emplace("sub_zone", l.sub_zone);
}

}  // namespace

BackendPolicy::Ejection EjectionOf(const OutlierDetection& od) {
  BackendPolicy::Ejection e;
  e.consecutive_failures =
      od.enforcing_consecutive_5xx == 0 ? 0 : od.consecutive_5xx;
  e.base = od.base_ejection_time;
  // Envoy: max_ejection_time, or base_ejection_time if that is larger.
  e.max = std::max(od.base_ejection_time, od.max_ejection_time);
  e.max_share = od.max_ejection_percent / 100.0;
  e.interval.interval = od.interval;
  if (od.success_rate) {
    IntervalEjection::SuccessRate& r = e.interval.success_rate.emplace();
    r.stdev_factor = od.success_rate->stdev_factor;
    r.enforcement_percentage = od.success_rate->enforcement_percentage;
    r.minimum_hosts = od.success_rate->minimum_hosts;
    r.request_volume = od.success_rate->request_volume;
  }
  if (od.failure_percentage) {
    IntervalEjection::FailurePercentage& r =
        e.interval.failure_percentage.emplace();
    r.threshold = od.failure_percentage->threshold;
    r.enforcement_percentage = od.failure_percentage->enforcement_percentage;
    r.minimum_hosts = od.failure_percentage->minimum_hosts;
    r.request_volume = od.failure_percentage->request_volume;
  }
  return e;
}

std::vector<Endpoint> EndpointsToServe(const EndpointsResource& resource) {
  // Localities are sorted by priority: the first priority with endpoints.
  size_t begin = 0;
  while (begin < resource.localities.size()) {
    size_t end = begin;
    bool any = false;
    while (end < resource.localities.size() &&
           resource.localities[end].priority ==
               resource.localities[begin].priority) {
      any = any || !resource.localities[end].endpoints.empty();
      ++end;
    }
    if (!any) {
      begin = end;
      continue;
    }
    std::vector<Endpoint> out;
    size_t n = 0;
    for (size_t i = begin; i < end; ++i) {
      n += resource.localities[i].endpoints.size();
    }
    out.reserve(n);
    if (end - begin == 1) {
      const LocalityEndpoints& l = resource.localities[begin];
      for (const Endpoint& e : l.endpoints) AddServed(l, e, &out);
      return out;  // its own weights
    }
    // Each endpoint's share: its locality's weight split among the
    // locality's endpoints by theirs. In long double (weight × weight does
    // not fit 64 bits), then scaled together so that the largest is 2^31 at
    // most and the ratios stay.
    std::vector<long double> shares;
    long double largest = 0;
    for (size_t i = begin; i < end; ++i) {
      const LocalityEndpoints& l = resource.localities[i];
      long double sum = 0;
      for (const Endpoint& e : l.endpoints) sum += e.weight;
      for (const Endpoint& e : l.endpoints) {
        AddServed(l, e, &out);
        shares.push_back(static_cast<long double>(l.weight) * e.weight /
                         std::max<long double>(sum, 1));
        largest = std::max(largest, shares.back());
      }
    }
    const long double scale =
        2147483648.0L / std::max<long double>(largest, 1e-300L);
    for (size_t k = 0; k < out.size(); ++k) {
      out[k].weight = static_cast<uint32_t>(std::clamp<long double>(
          std::round(shares[k] * scale), 1, 2147483648.0L));
    }
    return out;
  }
  return {};
}

BackendPolicy ClusterBackendPolicy(const ClusterResource& cluster,
                                   bool honour_round_robin) {
  BackendPolicy policy;
  switch (cluster.lb_policy) {
    case ClusterResource::LbPolicy::kRoundRobin:
      if (honour_round_robin) {
        policy.balancing = BackendPolicy::Balancing::kRoundRobin;
      }
      break;
    case ClusterResource::LbPolicy::kLeastRequest:
      break;  // P2C is least-request's better cousin
    case ClusterResource::LbPolicy::kRingHash:
      // Rings are built on every endpoint update, per channel: capped at
      // kMaxRingSize entries as gRPC caps them (4096).
      policy.balancing = BackendPolicy::Balancing::kRingHash;
      policy.ring_max_size = std::min(cluster.max_ring_size, kMaxRingSize);
      policy.ring_min_size =
          std::min(cluster.min_ring_size, policy.ring_max_size);
      break;
  }
  policy.max_requests = cluster.max_requests;
  if (cluster.outlier_detection) {
    policy.ejection = EjectionOf(*cluster.outlier_detection);
  }
  return policy;
}

void GiveClusterTls(const ClusterResource& cluster,
                    std::vector<Endpoint>* endpoints) {
  if (cluster.tls == nullptr) return;
  for (Endpoint& e : *endpoints) {
    e.tls = cluster.tls;
    e.tls_identity = cluster.tls_identity;
  }
}

}  // namespace mesh::internal::xds

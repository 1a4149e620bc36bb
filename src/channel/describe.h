// JSON rendering for Mesh::Describe(): what the client believes about each
// destination — endpoints with their load, the service config, and the state
// of the discovery streams — for debugging stale endpoints and odd routing.
//
// Pure functions over plain values: thread-safe.
#ifndef MESH_SRC_CHANNEL_DESCRIBE_H_
#define MESH_SRC_CHANNEL_DESCRIBE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "mesh/balancer.h"
#include "mesh/discovery.h"
#include "mesh/endpoint.h"
#include "mesh/service_config.h"

namespace mesh::internal {

// Everything Describe() shows for one destination, copied out under its lock.
struct DestinationView {
  std::string target;
  // The discovery source: "static", "linkerd", "xds", "dns", "application".
  std::string source;
  bool has_update = false;
  bool exists = true;
  std::vector<Endpoint> endpoints;
  // Per endpoint (same order): what the transport says of its connection
  // (Transport::DescribeConnection).
  std::vector<std::vector<std::pair<std::string, std::string>>> connections;
  // One entry per channel (each has its own balancer and load statistics).
  std::vector<std::vector<EndpointStats>> channel_stats;
  std::optional<ServiceConfig> config;
  // Retries the destination's retry budget allows now (its routes share
  // it); -1 without a budget.
  int64_t retry_budget_available = -1;
  std::optional<BackendPolicy> policy;
  int64_t in_flight = 0;
  int64_t dropped = 0;
  int64_t circuit_breaker_refusals = 0;
  absl::Status last_error;
  absl::Status last_config_error;
  DiscoverySubscription::State endpoint_stream;
  DiscoverySubscription::State config_stream;
};

// One JSON object for the destination.
std::string DescribeJson(const DestinationView& view);

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_DESCRIBE_H_

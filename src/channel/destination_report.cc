// Destination's reports: what Mesh::Describe shows of it, its balancers'
// gauges, and the statuses that tell a caller why there is no endpoint or
// no route to call. (Its updates, waiters and routes: destination.cc.)
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/mutex.h"
#include "src/channel/destination.h"  // the class whose methods these are

namespace mesh::internal {
namespace {

absl::Status ShutDownStatus(const std::string& target) {
  return absl::UnavailableError(
      absl::StrCat("mesh is shut down; call to '", target, "'"));
}

}  // namespace

absl::Status Destination::NoEndpointsStatus() const {
  MutexLock lock(&mu_);
  if (shut_down_) return ShutDownStatus(target_);
  if (!set_.has_update()) {
    std::string why =
        last_error_.ok()
            ? std::string("discovery has not answered yet")
            : absl::StrCat("discovery failed: ", last_error_.message());
    return absl::UnavailableError(
        absl::StrCat("no endpoints for target '", target_, "' (", why, ")"));
  }
  // Why there are none, if the source said (e.g. DNS: the name does not
  // exist).
  const std::string said = no_endpoints_reason_.empty()
                               ? std::string()
                               : absl::StrCat(" (", no_endpoints_reason_, ")");
  if (!set_.exists()) {
    return absl::UnavailableError(
        absl::StrCat("target '", target_, "' does not exist", said));
  }
  return absl::UnavailableError(absl::StrCat(
      "no endpoints for target '", target_, "'",
      identity_left_out_.empty() ? ""
                                 : absl::StrCat(" (", identity_left_out_, ")"),
      said));
}

DestinationView Destination::View() const {
  DestinationView v;
  v.target = target_;
  v.source = source_kind_;
  {
    MutexLock lock(&subscription_mu_);
    if (subscription_) v.endpoint_stream = subscription_->GetState();
    if (config_subscription_)
      v.config_stream = config_subscription_->GetState();
  }
  {
    MutexLock lock(&mu_);
    v.has_update = set_.has_update();
    v.exists = set_.exists();
    v.endpoints = set_.Endpoints();
    for (const Balancer* b : balancers_) v.channel_stats.push_back(b->Stats());
    v.config = config_;
    v.last_error = last_error_;
    v.last_config_error = last_config_error_;
  }
  if (std::shared_ptr<const Routes> routes = this->routes();
      routes != nullptr && routes->budget != nullptr) {
    v.retry_budget_available = routes->budget->Balance();
  }
  v.policy = backend_policy_.policy();
  v.in_flight = backend_policy_.in_flight();
  v.dropped = backend_policy_.dropped();
  v.circuit_breaker_refusals = backend_policy_.refusals();
  // Out of mu_: the transport takes its own lock.
  for (const Endpoint& e : v.endpoints) {
    v.connections.push_back(transports_.All().DescribeConnection(e.address));
  }
  return v;
}

void Destination::CollectGauges(std::vector<EndpointGauges>* out) const {
  MutexLock lock(&mu_);
  for (const Balancer* b : balancers_) {
    for (const EndpointStats& s : b->Stats()) {
      EndpointGauges g;
      g.authority = target_;
      g.address = s.address;
      g.ejections = s.ejections;
      g.ejected = s.ejected;
      g.pending = s.pending;
      g.rtt_estimate_ms = s.rtt_estimate_ms;
      out->push_back(std::move(g));
    }
  }
}

absl::Status Destination::NoRoutesStatus() const {
  MutexLock lock(&mu_);
  if (shut_down_) return ShutDownStatus(target_);
  if (!last_config_error_.ok()) {
    return absl::UnavailableError(
        absl::StrCat("no routes for target '", target_,
                     "': ", last_config_error_.message()));
  }
  // What the source said meanwhile (its stream's last error, the resource
  // it still waits for), so that the caller learns more than "nothing yet".
  return absl::UnavailableError(absl::StrCat(
      "no routes for target '", target_, "' (discovery has not answered yet",
      last_error_.ok() ? "" : absl::StrCat(": ", last_error_.message()), ")"));
}

}  // namespace mesh::internal

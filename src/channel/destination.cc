#include "src/channel/destination.h"

#include <grpc/support/log.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace mesh::internal {

// A config's routes, retry budget, traffic split and direct endpoint. Without a
// (valid) budget, Linkerd's default applies: 20% of requests, 10 retries/s,
// over 10 s. The budget starts afresh with each new config.
Destination::Routes Destination::RoutesFor(const ServiceConfig& config,
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
  Routes routes{RouteTable::Build(config, dropped),
                std::make_shared<RetryBudgetLedger>(budget, Clock::Real()),
                TrafficSplit::Build(config.backends, dropped),
                std::move(direct),
                {},
                config_generation_.fetch_add(1) + 1};
  // Metrics by route name, kept across configs.
  for (size_t i = 0; i <= routes.table->size(); ++i) {
    routes.route_metrics.push_back(
        metrics_->Route(target_, routes.table->At(i).metrics_name));
  }
  return routes;
}

Destination::Destination(std::string target,
                         std::unique_ptr<Transport> transport,
                         std::shared_ptr<MetricsRegistry> metrics)
    : target_(std::move(target)),
      transport_(std::move(transport)),
      metrics_(std::move(metrics)),
      endpoint_metrics_(std::make_unique<EndpointMetricsMap>()),
      routes_(std::make_unique<Routes>(RoutesFor(ServiceConfig{}, nullptr))) {}

Destination::Routes Destination::routes() const { return *routes_.Read(); }

Destination::~Destination() { Shutdown(); }

void Destination::Start(DiscoverySource& source) {
  std::unique_ptr<DiscoverySubscription> sub = source.Subscribe(target_, this);
  std::unique_ptr<DiscoverySubscription> config_sub =
      source.SubscribeConfig(target_, this);
  absl::MutexLock lock(&subscription_mu_);
  subscription_ = std::move(sub);
  config_subscription_ = std::move(config_sub);
}

void Destination::Shutdown() {
  std::unique_ptr<DiscoverySubscription> sub, config_sub;
  {
    absl::MutexLock lock(&subscription_mu_);
    sub = std::move(subscription_);
    config_sub = std::move(config_subscription_);
  }
  {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
  }
  // Outside our locks: the source may be mid-delivery.
  sub.reset();
  config_sub.reset();
  transport_->Shutdown();
}

void Destination::Attach(Balancer* balancer) {
  absl::MutexLock lock(&mu_);
  balancers_.push_back(balancer);
  balancer->SetEndpoints(current_);
}

void Destination::Detach(Balancer* balancer) {
  absl::MutexLock lock(&mu_);
  balancers_.erase(std::remove(balancers_.begin(), balancers_.end(), balancer),
                   balancers_.end());
}

absl::Status Destination::NoEndpointsStatus() const {
  absl::MutexLock lock(&mu_);
  if (shut_down_) {
    return absl::UnavailableError(
        absl::StrCat("mesh is shut down; call to '", target_, "'"));
  }
  if (!set_.has_update()) {
    std::string why =
        last_error_.ok()
            ? std::string("discovery has not answered yet")
            : absl::StrCat("discovery failed: ", last_error_.message());
    return absl::UnavailableError(
        absl::StrCat("no endpoints for target '", target_, "' (", why, ")"));
  }
  if (!set_.exists()) {
    return absl::UnavailableError(
        absl::StrCat("target '", target_, "' does not exist"));
  }
  return absl::UnavailableError(
      absl::StrCat("no endpoints for target '", target_, "'"));
}

void Destination::OnEndpointUpdate(const EndpointUpdate& update) {
  std::vector<std::string> addresses;
  {
    absl::MutexLock lock(&mu_);
    absl::Status s = set_.Apply(update);
    if (!s.ok()) {
      last_error_ = s;
      gpr_log(GPR_ERROR,
              "mesh: rejected update for '%s', keeping %zu endpoints: %s",
              target_.c_str(), set_.size(), std::string(s.message()).c_str());
      return;
    }
    current_ = set_.Endpoints();
    last_error_ = absl::OkStatus();
    // Endpoint metrics follow the set: kept for endpoints that stay, made
    // for newcomers, let go for those that left.
    auto next = std::make_unique<EndpointMetricsMap>();
    next->reserve(current_.size());
    {
      // Out of the read section before publishing: Publish waits for it.
      auto previous = endpoint_metrics_.Read();
      for (const Endpoint& e : current_) {
        auto found = previous->find(e.address);
        next->emplace(e.address, found != previous->end()
                                     ? found->second
                                     : metrics_->Endpoint(target_, e.address));
      }
    }
    endpoint_metrics_.Publish(std::move(next));
    for (Balancer* b : balancers_) b->SetEndpoints(current_);
    addresses.reserve(current_.size());
    for (const Endpoint& e : current_) addresses.push_back(e.address);
  }
  transport_->RetainOnly(addresses);
}

void Destination::OnDiscoveryError(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  last_error_ = status;
}

absl::Status Destination::WaitForEndpoints(absl::Duration timeout) const {
  {
    absl::MutexLock lock(&mu_);
    // Done when there are endpoints, or discovery said none for good: the
    // target does not exist, or the source gave up (not a mesh service).
    auto settled = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return set_.size() > 0 || (set_.has_update() && !set_.exists()) ||
             absl::IsFailedPrecondition(last_error_) || shut_down_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&settled), timeout);
    if (set_.size() > 0 && !shut_down_) return absl::OkStatus();
  }
  return NoEndpointsStatus();
}

DestinationView Destination::View() const {
  DestinationView v;
  v.target = target_;
  {
    absl::MutexLock lock(&subscription_mu_);
    if (subscription_) v.endpoint_stream = subscription_->GetState();
    if (config_subscription_)
      v.config_stream = config_subscription_->GetState();
  }
  absl::MutexLock lock(&mu_);
  v.has_update = set_.has_update();
  v.exists = set_.exists();
  v.endpoints = current_;
  for (const Balancer* b : balancers_) v.channel_stats.push_back(b->Stats());
  v.config = config_;
  v.last_error = last_error_;
  v.last_config_error = last_config_error_;
  return v;
}

std::shared_ptr<EndpointMetrics> Destination::EndpointMetricsFor(
    const std::string& address) const {
  auto map = endpoint_metrics_.Read();
  auto found = map->find(address);
  return found != map->end() ? found->second : nullptr;
}

void Destination::CollectGauges(std::vector<EndpointGauges>* out) const {
  absl::MutexLock lock(&mu_);
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

std::optional<ServiceConfig> Destination::service_config() const {
  absl::MutexLock lock(&mu_);
  return config_;
}

void Destination::OnServiceConfig(const ServiceConfig& config) {
  std::vector<std::string> dropped;
  Routes next = RoutesFor(config, &dropped);
  for (const std::string& line : dropped) {
    gpr_log(GPR_ERROR, "mesh: routes for '%s': %s", target_.c_str(),
            line.c_str());
  }
  routes_.Publish(std::make_unique<Routes>(std::move(next)));
  absl::MutexLock lock(&mu_);
  config_ = config;
  last_config_error_ = absl::OkStatus();
}

void Destination::OnServiceConfigError(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  last_config_error_ = status;
}

}  // namespace mesh::internal

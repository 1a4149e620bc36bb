#include "src/channel/destination.h"

#include <grpc/support/log.h>

#include <algorithm>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "src/balance/balancer.h"
#include "src/base/clock.h"
#include "src/base/mutex.h"
#include "src/model/endpoint_tls.h"
#include "src/tls/server_name_match.h"

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
  Routes routes{RouteTable::Build(config, route_limits_, dropped),
                std::make_shared<RetryBudgetLedger>(budget, Clock::Real()),
                TrafficSplit::Build(config.backends, dropped),
                std::move(direct),
                {},
                config_generation_.fetch_add(1) + 1,
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
        metrics_->Route(target_, routes.table->At(i).metrics_name));
  }
  return routes;
}

void Destination::OnBackendPolicy(const BackendPolicy& policy) {
  backend_policy_.Apply(policy);
}

Destination::Destination(std::string target, std::string authority,
                         std::unique_ptr<Transport> transport,
                         std::shared_ptr<TapHub> tap_hub,
                         std::shared_ptr<MetricsRegistry> metrics,
                         std::shared_ptr<TimerThread> timers,
                         const RouteLimits& route_limits,
                         const DestinationTls& tls)
    : target_(std::move(target)),
      authority_(std::move(authority)),
      backend_policy_(target_),
      timers_(std::move(timers)),
      route_limits_(route_limits),
      tls_(tls),
      transports_(std::move(transport), std::move(tap_hub)),
      metrics_(std::move(metrics)),
      metrics_index_(target_, metrics_, tls.identity_in_use,
                     tls.default_transport),
      routes_(std::make_unique<std::shared_ptr<const Routes>>(
          std::make_shared<const Routes>(
              RoutesFor(ServiceConfig{}, nullptr)))) {}

std::shared_ptr<const Destination::Routes> Destination::routes() const {
  return *routes_.Read();
}

Destination::~Destination() { Shutdown(); }

void Destination::Start(DiscoverySource& source, const std::string& name,
                        bool cluster) {
  std::unique_ptr<DiscoverySubscription> sub, config_sub;
  if (cluster) {
    sub = source.SubscribeCluster(name, this);
    if (sub == nullptr) {
      OnDiscoveryError(absl::FailedPreconditionError(absl::StrCat(
          "the discovery source has no clusters (cluster '", name, "')")));
      OnEndpointUpdate(EndpointUpdate::NoEndpoints(/*exists=*/false));
    }
  } else {
    routes_required_ = source.RoutesRequired();
    sub = source.Subscribe(name, this);
    config_sub = source.SubscribeConfig(name, this);
  }
  MutexLock lock(&subscription_mu_);
  subscription_ = std::move(sub);
  config_subscription_ = std::move(config_sub);
}

void Destination::OnConnectFailure() {
  const int64_t now = Clock::Real()->NowNanos();
  int64_t last = last_refresh_ns_.load(std::memory_order_relaxed);
  if (now - last < 100'000'000 || !last_refresh_ns_.compare_exchange_strong(
                                      last, now, std::memory_order_relaxed)) {
    return;  // passed on lately, or by another thread just now
  }
  MutexLock lock(&subscription_mu_);
  if (subscription_ != nullptr) subscription_->RefreshSoon();
}

void Destination::Shutdown() {
  std::unique_ptr<DiscoverySubscription> sub, config_sub;
  {
    MutexLock lock(&subscription_mu_);
    sub = std::move(subscription_);
    config_sub = std::move(config_subscription_);
  }
  std::vector<std::shared_ptr<PickWaiter>> waiters;
  {
    MutexLock lock(&mu_);
    shut_down_ = true;
    waiters = TakeSettledWaiters();
    for (auto& w : routes_waiters_) waiters.push_back(std::move(w));
    routes_waiters_.clear();
  }
  Release(std::move(waiters));
  // Outside our locks: the source may be mid-delivery.
  sub.reset();
  config_sub.reset();
  transports_.All().Shutdown();
}

void Destination::Feed(Balancer* balancer) {
  const List& list = *set_.entries();
  balancer->SetSharedEndpoints(
      list.size(),
      [&list](size_t i) -> const Endpoint& { return list[i]->endpoint; },
      [&list](size_t i) {
        // Aliasing: keeps the entry alive, points at its endpoint.
        return std::shared_ptr<const Endpoint>(list[i], &list[i]->endpoint);
      });
}

void Destination::Attach(Balancer* balancer) {
  MutexLock lock(&mu_);
  balancers_.push_back(balancer);
  Feed(balancer);
}

void Destination::Detach(Balancer* balancer) {
  MutexLock lock(&mu_);
  balancers_.erase(std::remove(balancers_.begin(), balancers_.end(), balancer),
                   balancers_.end());
}

absl::Status Destination::NoEndpointsStatus() const {
  MutexLock lock(&mu_);
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

namespace {

// OK, or the first EndpointTls of `endpoints` whose server-name matchers
// cannot work (an empty value, a bad regex), named. Each context once.
absl::Status ValidateEndpointTls(const std::vector<Endpoint>& endpoints) {
  const EndpointTls* last = nullptr;
  for (const Endpoint& e : endpoints) {
    if (e.tls == nullptr || e.tls.get() == last) continue;
    last = e.tls.get();
    for (const ServerNameMatcher& m : e.tls->server_names) {
      if (absl::Status s = ValidateServerNameMatcher(m); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "endpoint '", e.address, "': tls.server_names: ", s.message()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

void Destination::OnEndpointUpdate(const EndpointUpdate& update) {
  if (update.kind != EndpointUpdate::Kind::kReset &&
      update.kind != EndpointUpdate::Kind::kAdd) {
    return ApplyEndpointUpdate(update);
  }
  // Checked whole first, as the set would: an invalid endpoint rejects the
  // update even if it is one of those left out.
  if (absl::Status valid = ValidateEndpointList(update.endpoints);
      !valid.ok()) {
    return ApplyEndpointUpdate(update);  // rejected there, and logged
  }
  if (absl::Status valid = ValidateEndpointTls(update.endpoints); !valid.ok()) {
    MutexLock lock(&mu_);
    last_error_ = valid;
    gpr_log(GPR_ERROR,
            "mesh: rejected update for '%s', keeping %zu endpoints: %s",
            target_.c_str(), set_.size(), std::string(valid.message()).c_str());
    return;
  }
  // Left out: without an identity when one is required; with the control
  // plane's TLS (EndpointTls) when an application's transport, which does
  // not honour it, would call them in plaintext.
  auto left_out_because = [this](const Endpoint& e) -> const char* {
    if (tls_.require_identity && e.tls_identity.empty() && e.tls == nullptr) {
      return "without a TLS identity left out "
             "(MeshOptions.identity.require_identity)";
    }
    if (!tls_.default_transport && e.tls != nullptr) {
      return "with the control plane's TLS (EndpointTls) left out: "
             "MeshOptions.transport_factory's transport does not carry it "
             "out, and would call them in plaintext";
    }
    return nullptr;
  };
  if (!tls_.require_identity && tls_.default_transport) {
    return ApplyEndpointUpdate(update);
  }
  EndpointUpdate kept = update;
  std::vector<std::string> left_out;
  const char* reason = nullptr;
  for (const Endpoint& e : update.endpoints) {
    if (const char* r = left_out_because(e); r != nullptr) {
      left_out.push_back(e.address);
      if (reason == nullptr) reason = r;
    }
  }
  kept.endpoints.erase(
      std::remove_if(
          kept.endpoints.begin(), kept.endpoints.end(),
          [&](const Endpoint& e) { return left_out_because(e) != nullptr; }),
      kept.endpoints.end());
  std::string why;
  if (!left_out.empty()) {
    why = absl::StrCat(left_out.size(), " endpoint(s) ", reason, ", e.g. ",
                       left_out.front());
  }
  bool log;
  {
    MutexLock lock(&mu_);
    // Once per distinct reason, not at every update.
    log = !why.empty() && why != identity_left_out_;
    if (update.kind == EndpointUpdate::Kind::kReset || !why.empty()) {
      identity_left_out_ = why;
    }
  }
  if (log) gpr_log(GPR_ERROR, "mesh: '%s': %s", target_.c_str(), why.c_str());
  ApplyEndpointUpdate(kept);
  // An Add re-sending an address without its identity must not leave the
  // entry that had one.
  if (update.kind == EndpointUpdate::Kind::kAdd && !left_out.empty()) {
    ApplyEndpointUpdate(EndpointUpdate::Remove(std::move(left_out)));
  }
}

void Destination::ApplyEndpointUpdate(const EndpointUpdate& update) {
  std::vector<std::string> addresses;
  std::vector<std::shared_ptr<PickWaiter>> waiters;
  {
    MutexLock lock(&mu_);
    std::shared_ptr<const List> previous = set_.entries();
    absl::Status s = set_.Apply(update);
    if (!s.ok()) {
      last_error_ = s;
      gpr_log(GPR_ERROR,
              "mesh: rejected update for '%s', keeping %zu endpoints: %s",
              target_.c_str(), set_.size(), std::string(s.message()).c_str());
      return;
    }
    last_error_ = absl::OkStatus();
    // Why there are none, as the source said; any other update ends it.
    no_endpoints_reason_ = update.kind == EndpointUpdate::Kind::kNoEndpoints
                               ? update.reason
                               : std::string();
    const std::shared_ptr<const List>& current = set_.entries();
    if (current != previous) {
      metrics_index_.Update(*previous, current);
      for (Balancer* b : balancers_) Feed(b);
    }
    addresses.reserve(current->size());
    for (const auto& entry : *current) {
      addresses.push_back(entry->endpoint.address);
    }
    // After the balancers have the new set: a released call picks from it.
    waiters = TakeSettledWaiters();
  }
  Release(std::move(waiters));
  transports_.All().RetainOnly(addresses);
}

void Destination::OnDiscoveryError(const absl::Status& status) {
  std::vector<std::shared_ptr<PickWaiter>> waiters;
  {
    MutexLock lock(&mu_);
    last_error_ = status;
    waiters = TakeSettledWaiters();
  }
  Release(std::move(waiters));
}

bool Destination::SettledLocked() const {
  // Endpoints, or an answer that there will be none: the target does not
  // exist, the source gave up (not a mesh service), the mesh shuts down.
  return set_.size() > 0 || (set_.has_update() && !set_.exists()) ||
         absl::IsFailedPrecondition(last_error_) || shut_down_;
}

std::vector<std::shared_ptr<PickWaiter>> Destination::TakeSettledWaiters() {
  if (waiters_.empty() || !SettledLocked()) return {};
  return std::exchange(waiters_, {});
}

void Destination::Release(std::vector<std::shared_ptr<PickWaiter>> waiters) {
  if (waiters.empty()) return;
  auto list = std::make_shared<std::vector<std::shared_ptr<PickWaiter>>>(
      std::move(waiters));
  absl::AnyInvocable<void()> fire = [list] {
    for (const std::shared_ptr<PickWaiter>& w : *list) {
      w->Fire(PickWaiter::Why::kReleased);
    }
  };
  // Not on the source's thread: a released call may complete, and its
  // callback must not run under the source's locks.
  if (timers_->TryRunAfter(absl::ZeroDuration(), fire) != 0) return;
  // The Mesh is shutting down: its Shutdown() fires what still waits, on
  // its own thread, through this destination's Shutdown(). Hand them back,
  // ahead of any newer ones, unless that has happened already.
  {
    MutexLock lock(&mu_);
    if (!shut_down_) {
      waiters_.insert(waiters_.begin(), list->begin(), list->end());
      return;
    }
  }
  fire();  // from Shutdown() itself, or a last update racing it
}

Destination::WaitResult Destination::AddWaiter(
    std::shared_ptr<PickWaiter> waiter) {
  MutexLock lock(&mu_);
  if (set_.size() > 0 && !shut_down_) return WaitResult::kReady;
  if (SettledLocked()) return WaitResult::kNever;
  // Waiters that fired elsewhere (timeout, another backend) are dropped
  // now and then, so the queue holds about the calls really waiting.
  if (waiters_.size() >= 64 && (waiters_.size() & (waiters_.size() - 1)) == 0) {
    waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(),
                                  [](const auto& w) { return w->fired(); }),
                   waiters_.end());
  }
  waiters_.push_back(std::move(waiter));
  return WaitResult::kQueued;
}

absl::Status Destination::WaitForEndpoints(absl::Duration timeout) const {
  {
    MutexLock lock(&mu_);
    // Done when there are endpoints, or discovery said none for good: the
    // target does not exist, or the source gave up (not a mesh service).
    auto settled = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return SettledLocked();
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

std::optional<ServiceConfig> Destination::service_config() const {
  MutexLock lock(&mu_);
  return config_;
}

void Destination::OnServiceConfig(const ServiceConfig& config) {
  std::vector<std::string> dropped;
  Routes next = RoutesFor(config, &dropped);
  for (const std::string& line : dropped) {
    gpr_log(GPR_ERROR, "mesh: routes for '%s': %s", target_.c_str(),
            line.c_str());
  }
  routes_.Publish(std::make_unique<std::shared_ptr<const Routes>>(
      std::make_shared<const Routes>(std::move(next))));
  std::vector<std::shared_ptr<PickWaiter>> waiters;
  {
    MutexLock lock(&mu_);
    config_ = config;
    last_config_error_ = absl::OkStatus();
    // After the routes are published: a call released here matches them.
    has_config_.store(true, std::memory_order_release);
    waiters = std::exchange(routes_waiters_, {});
  }
  Release(std::move(waiters));
}

void Destination::OnServiceConfigError(const absl::Status& status) {
  std::vector<std::shared_ptr<PickWaiter>> waiters;
  {
    MutexLock lock(&mu_);
    last_config_error_ = status;
    // Calls waiting for a first config fail with this error.
    waiters = std::exchange(routes_waiters_, {});
  }
  Release(std::move(waiters));
}

Destination::WaitResult Destination::AddRoutesWaiter(
    std::shared_ptr<PickWaiter> waiter) {
  MutexLock lock(&mu_);
  if (shut_down_) return WaitResult::kNever;
  if (has_config_.load(std::memory_order_relaxed)) return WaitResult::kReady;
  // The source said it will not answer (e.g. the server does not serve the
  // API): the call fails at once, naming why.
  if (absl::IsFailedPrecondition(last_config_error_)) return WaitResult::kNever;
  routes_waiters_.push_back(std::move(waiter));
  return WaitResult::kQueued;
}

bool Destination::WaitForRoutes(absl::Duration timeout) const {
  MutexLock lock(&mu_);
  auto settled = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return has_config_.load(std::memory_order_relaxed) || shut_down_ ||
           !last_config_error_.ok();
  };
  mu_.AwaitWithTimeout(absl::Condition(&settled), timeout);
  return has_config_.load(std::memory_order_relaxed);
}

absl::Status Destination::NoRoutesStatus() const {
  MutexLock lock(&mu_);
  if (shut_down_) {
    return absl::UnavailableError(
        absl::StrCat("mesh is shut down; call to '", target_, "'"));
  }
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

#include "src/channel/destination.h"

#include <grpc/support/log.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/balance/balancer.h"
#include "src/base/clock.h"
#include "src/base/mutex.h"
#include "src/discovery/common/builtin_source.h"

namespace mesh::internal {

Destination::Routes Destination::RoutesFor(const ServiceConfig& config,
                                           std::vector<std::string>* dropped) {
  return CompileRoutes(config, route_limits_,
                       config_generation_.fetch_add(1) + 1, *metrics_, target_,
                       dropped);
}

void Destination::OnBackendPolicy(const BackendPolicy& policy) {
  // A policy sent again unchanged (xDS resends) builds no picker.
  if (backend_policy_.Apply(policy)) Changed();
}

uint64_t Destination::AddChangeListener(absl::AnyInvocable<void()> on_change) {
  MutexLock lock(&listeners_mu_);
  uint64_t id = next_listener_++;
  listeners_.emplace_back(
      id, std::make_shared<absl::AnyInvocable<void()>>(std::move(on_change)));
  return id;
}

void Destination::RemoveChangeListener(uint64_t id) {
  MutexLock lock(&listeners_mu_);
  listeners_.erase(
      std::remove_if(listeners_.begin(), listeners_.end(),
                     [id](const auto& entry) { return entry.first == id; }),
      listeners_.end());
}

void Destination::Changed() {
  change_epoch_.fetch_add(1, std::memory_order_acq_rel);
  std::vector<Listener> listeners;
  {
    MutexLock lock(&listeners_mu_);
    listeners.reserve(listeners_.size());
    for (const auto& [id, listener] : listeners_) listeners.push_back(listener);
  }
  if (listeners.empty()) return;
  // Not on the source's thread, which may hold the source's locks: a
  // listener may subscribe to other destinations of the same source.
  absl::AnyInvocable<void()> tell = [listeners = std::move(listeners)] {
    for (const Listener& l : listeners) (*l)();
  };
  timers_->TryRunAfter(absl::ZeroDuration(), tell);
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
  // What the source is, for Describe(): a built-in one says; StaticDiscovery
  // is "static"; an application's own is "application".
  if (const BuiltinSource* builtin = AsBuiltin(&source)) {
    source_kind_ = builtin->KindName();
  } else if (dynamic_cast<StaticDiscovery*>(&source) != nullptr) {
    source_kind_ = "static";
  } else {
    source_kind_ = "application";
  }
  if (cluster) {
    BuiltinSource* builtin = AsBuiltin(&source);
    if (builtin != nullptr) sub = builtin->SubscribeCluster(name, this);
    if (sub == nullptr) {
      OnDiscoveryError(absl::FailedPreconditionError(absl::StrCat(
          "the discovery source has no clusters (cluster '", name, "')")));
      OnEndpointUpdate(EndpointUpdate::NoEndpoints(/*exists=*/false));
    }
  } else {
    const BuiltinSource* builtin = AsBuiltin(&source);
    routes_required_ = builtin != nullptr && builtin->RoutesRequired();
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
  WaiterQueue::List waiters;
  {
    MutexLock lock(&mu_);
    shut_down_ = true;
    waiters = TakeSettledWaiters();
    for (auto& w : routes_waiters_.TakeAll()) waiters.push_back(std::move(w));
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

void Destination::OnEndpointUpdate(const EndpointUpdate& update) {
  AdmittedUpdate admitted = AdmitEndpoints(update, tls_);
  if (!admitted.rejected.ok()) {
    MutexLock lock(&mu_);
    last_error_ = admitted.rejected;
    gpr_log(GPR_ERROR,
            "mesh: rejected update for '%s', keeping %zu endpoints: %s",
            target_.c_str(), set_.size(),
            std::string(admitted.rejected.message()).c_str());
    return;
  }
  if (!admitted.filtered) return ApplyEndpointUpdate(update);
  bool log;
  {
    MutexLock lock(&mu_);
    // Once per distinct reason, not at every update.
    log = !admitted.why.empty() && admitted.why != identity_left_out_;
    if (update.kind == EndpointUpdate::Kind::kReset || !admitted.why.empty()) {
      identity_left_out_ = admitted.why;
    }
  }
  if (log) {
    gpr_log(GPR_ERROR, "mesh: '%s': %s", target_.c_str(), admitted.why.c_str());
  }
  ApplyEndpointUpdate(admitted.kept);
  // An Add re-sending an address without its identity must not leave the
  // entry that had one.
  if (update.kind == EndpointUpdate::Kind::kAdd && !admitted.left_out.empty()) {
    ApplyEndpointUpdate(EndpointUpdate::Remove(std::move(admitted.left_out)));
  }
}

void Destination::ApplyEndpointUpdate(const EndpointUpdate& update) {
  std::vector<std::string> addresses;
  WaiterQueue::List waiters;
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
  WaiterQueue::List waiters;
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

WaiterQueue::List Destination::TakeSettledWaiters() {
  if (waiters_.empty() || !SettledLocked()) return {};
  return waiters_.TakeAll();
}

void Destination::Release(WaiterQueue::List waiters) {
  if (waiters.empty() || ReleaseOnTimer(*timers_, waiters)) return;
  // The Mesh is shutting down: its Shutdown() fires what still waits, on
  // its own thread, through this destination's Shutdown(). Hand them back,
  // ahead of any newer ones, unless that has happened already.
  {
    MutexLock lock(&mu_);
    if (!shut_down_) {
      waiters_.PutBack(waiters);
      return;
    }
  }
  FireReleased(waiters);  // from Shutdown() itself, or a last update racing it
}

Destination::WaitResult Destination::AddWaiter(
    std::shared_ptr<PickWaiter> waiter) {
  MutexLock lock(&mu_);
  if (set_.size() > 0 && !shut_down_) return WaitResult::kReady;
  if (SettledLocked()) return WaitResult::kNever;
  const uint32_t capacity = backend_policy_.queue_capacity();
  if (capacity > 0 && waiters_.Live() >= capacity) return WaitResult::kFull;
  waiters_.Add(std::move(waiter));
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
  WaiterQueue::List waiters;
  {
    MutexLock lock(&mu_);
    config_ = config;
    last_config_error_ = absl::OkStatus();
    config_removed_ = false;
    // After the routes are published: a call released here matches them.
    has_config_.store(true, std::memory_order_release);
    waiters = routes_waiters_.TakeAll();
  }
  // After the routes and has_config_: a picker built at this epoch sees
  // both.
  Changed();
  Release(std::move(waiters));
}

void Destination::OnServiceConfigError(const absl::Status& status) {
  WaiterQueue::List waiters;
  {
    MutexLock lock(&mu_);
    last_config_error_ = status;
    // Calls waiting for a first config fail with this error.
    waiters = routes_waiters_.TakeAll();
  }
  Release(std::move(waiters));
}

void Destination::OnServiceConfigRemoved(const absl::Status& why) {
  routes_.Publish(std::make_unique<std::shared_ptr<const Routes>>(
      std::make_shared<const Routes>(RoutesFor(ServiceConfig{}, nullptr))));
  WaiterQueue::List waiters;
  {
    MutexLock lock(&mu_);
    config_.reset();
    last_config_error_ = why;
    config_removed_ = true;
    // Before the change is counted: a picker built at the new epoch awaits
    // routes, and its calls find config_removed_.
    has_config_.store(false, std::memory_order_release);
    waiters = routes_waiters_.TakeAll();
  }
  Changed();
  Release(std::move(waiters));
}

Destination::WaitResult Destination::AddRoutesWaiter(
    std::shared_ptr<PickWaiter> waiter) {
  MutexLock lock(&mu_);
  if (shut_down_) return WaitResult::kNever;
  if (has_config_.load(std::memory_order_relaxed)) return WaitResult::kReady;
  // The source said it will not answer (e.g. the server does not serve the
  // API): the call fails at once, naming why.
  if (absl::IsFailedPrecondition(last_config_error_) || config_removed_) {
    return WaitResult::kNever;
  }
  routes_waiters_.Add(std::move(waiter));
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

}  // namespace mesh::internal

#include "bench/e2e/churn_discovery.h"

#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace mesh::bench {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void UpdateLedger::Sent(const std::string& target, const std::string& address,
                        int64_t ns) {
  absl::MutexLock lock(&mu_);
  if (sent_.insert_or_assign(absl::StrCat(target, " ", address), ns).second) {
    ++pending_[target];
  }
}

int64_t UpdateLedger::Take(const std::string& target,
                           const std::string& address) {
  absl::MutexLock lock(&mu_);
  auto it = sent_.find(absl::StrCat(target, " ", address));
  if (it == sent_.end()) return -1;
  int64_t ns = it->second;
  sent_.erase(it);
  --pending_[target];
  return ns;
}

int64_t UpdateLedger::pending(const std::string& target) const {
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(target);
  return it == pending_.end() ? 0 : it->second;
}

// Sits between a source and the Mesh's observer, timing each update.
class CountingSource::Observer final : public EndpointObserver {
 public:
  Observer(CountingSource* owner, std::string target, EndpointObserver* inner)
      : owner_(owner), target_(std::move(target)), inner_(inner) {}

  void OnEndpointUpdate(const EndpointUpdate& update) override {
    const int64_t began = NowNs();
    inner_->OnEndpointUpdate(update);
    owner_->Record(target_, update, began, NowNs());
  }
  void OnDiscoveryError(const absl::Status& status) override {
    inner_->OnDiscoveryError(status);
    owner_->RecordError(target_, status);
  }

 private:
  CountingSource* const owner_;
  const std::string target_;
  EndpointObserver* const inner_;
};

namespace {

// Owns the counting observer; stops the inner subscription before it goes.
class Subscription final : public DiscoverySubscription {
 public:
  Subscription(std::unique_ptr<EndpointObserver> observer,
               std::unique_ptr<DiscoverySubscription> inner)
      : observer_(std::move(observer)), inner_(std::move(inner)) {}
  ~Subscription() override { inner_.reset(); }
  State GetState() const override {
    return inner_ ? inner_->GetState() : State{};
  }
  void set_inner(std::unique_ptr<DiscoverySubscription> inner) {
    inner_ = std::move(inner);
  }

 private:
  std::unique_ptr<EndpointObserver> observer_;
  std::unique_ptr<DiscoverySubscription> inner_;
};

// For a target no source was given: never delivers.
class NoSubscription final : public DiscoverySubscription {};

}  // namespace

void CountingSource::Route(const std::string& target,
                           std::shared_ptr<DiscoverySource> source) {
  absl::MutexLock lock(&mu_);
  routes_[target] = std::move(source);
}

std::shared_ptr<DiscoverySource> CountingSource::SourceFor(
    const std::string& target) const {
  absl::MutexLock lock(&mu_);
  auto it = routes_.find(target);
  return it == routes_.end() ? nullptr : it->second;
}

ApplyStats CountingSource::Stats(const std::string& target) const {
  absl::MutexLock lock(&mu_);
  auto it = stats_.find(target);
  return it == stats_.end() ? ApplyStats{} : it->second;
}

void CountingSource::ClearStats() {
  absl::MutexLock lock(&mu_);
  stats_.clear();
}

std::unique_ptr<DiscoverySubscription> CountingSource::Subscribe(
    const std::string& target, EndpointObserver* observer) {
  std::shared_ptr<DiscoverySource> source = SourceFor(target);
  if (source == nullptr) return std::make_unique<NoSubscription>();
  auto counting = std::make_unique<Observer>(this, target, observer);
  EndpointObserver* raw = counting.get();
  // The observer must exist before Subscribe: the first update may come
  // before it returns.
  auto sub = std::make_unique<Subscription>(std::move(counting), nullptr);
  sub->set_inner(source->Subscribe(target, raw));
  return sub;
}

std::unique_ptr<DiscoverySubscription> CountingSource::SubscribeConfig(
    const std::string& target, ServiceConfigObserver* observer) {
  std::shared_ptr<DiscoverySource> source = SourceFor(target);
  if (source == nullptr) return nullptr;
  return source->SubscribeConfig(target, observer);
}

void CountingSource::Record(const std::string& target,
                            const EndpointUpdate& update, int64_t began_ns,
                            int64_t ended_ns) {
  // A churn update's key is the newest address it adds: among a few added
  // ones (Add messages, possibly several updates coalesced) any of them; in
  // a whole set (Reset) the last, where the generator puts it.
  std::vector<int64_t> sent;
  if (update.kind == EndpointUpdate::Kind::kAdd &&
      update.endpoints.size() <= 1000) {
    for (const Endpoint& e : update.endpoints) {
      int64_t ns = ledger_->Take(target, e.address);
      if (ns >= 0) sent.push_back(ns);
    }
  } else if (update.kind == EndpointUpdate::Kind::kReset &&
             !update.endpoints.empty()) {
    int64_t ns = ledger_->Take(target, update.endpoints.back().address);
    if (ns >= 0) sent.push_back(ns);
  }
  absl::MutexLock lock(&mu_);
  ApplyStats& s = stats_[target];
  ++s.messages;
  s.apply_ns.Record(ended_ns - began_ns);
  for (int64_t ns : sent) {
    ++s.matched;
    s.visible_ns.Record(ended_ns - ns);
  }
}

void CountingSource::RecordError(const std::string& target,
                                 const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  ApplyStats& s = stats_[target];
  ++s.discovery_errors;
  s.last_error = status.ToString();
}

}  // namespace mesh::bench

#include "src/channel/destination.h"

#include <grpc/support/log.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace mesh::internal {

Destination::Destination(std::string target,
                         std::unique_ptr<Transport> transport)
    : target_(std::move(target)), transport_(std::move(transport)) {}

Destination::~Destination() { Shutdown(); }

void Destination::Start(DiscoverySource& source) {
  std::unique_ptr<DiscoverySubscription> sub = source.Subscribe(target_, this);
  absl::MutexLock lock(&subscription_mu_);
  subscription_ = std::move(sub);
}

void Destination::Shutdown() {
  std::unique_ptr<DiscoverySubscription> sub;
  {
    absl::MutexLock lock(&subscription_mu_);
    sub = std::move(subscription_);
  }
  sub.reset();  // outside our locks: the source may be mid-delivery
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

}  // namespace mesh::internal

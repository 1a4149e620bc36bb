#include "src/discovery/linkerd/routing_combiner.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace mesh::internal::linkerd {
namespace {

// A profile that routes by itself: linkerd2-proxy then ignores the policy.
bool Overrides(const std::optional<ServiceConfig>& profile) {
  return profile.has_value() &&
         (!profile->routes.empty() || !profile->backends.empty());
}

}  // namespace

std::optional<ServiceConfig> RoutingCombiner::Effective(
    std::string* routing) const {
  if (Overrides(profile_)) {
    *routing = "profile";
    return profile_;
  }
  if (policy_.has_value() && gone_.empty()) {
    // The profile may still override it: wait for the profile too, unless
    // its stream has failed.
    if (!profile_.has_value() && !profile_failed_) return std::nullopt;
    *routing = policy_->config.routes.empty() ? "default" : "policy";
    ServiceConfig config = policy_->config;
    if (profile_.has_value() && profile_->endpoint.has_value()) {
      config.endpoint = profile_->endpoint;
    }
    return config;
  }
  // A policy may still come: the calls wait for it, unless its stream has
  // failed (then the profile routes until it comes).
  if (watching_ && !policy_.has_value() && gone_.empty() && !policy_failed_) {
    return std::nullopt;
  }
  if (profile_.has_value()) {
    *routing = "default";
    return profile_;
  }
  return std::nullopt;
}

bool RoutingCombiner::ForwardError() const {
  MutexLock lock(&mu_);
  if (delivered_) return true;  // the last good config stays; news only
  // Before any config, an error fails the calls waiting for routes: only
  // when no answer can come from the other stream either (it failed too,
  // or there is none).
  const bool policy_pending =
      watching_ && gone_.empty() && !policy_failed_ && !policy_.has_value();
  const bool profile_pending = !profile_failed_ && !profile_.has_value();
  return !policy_pending && !profile_pending;
}

void RoutingCombiner::Deliver() {
  std::optional<ServiceConfig> config;
  {
    MutexLock lock(&mu_);
    std::string routing;
    config = Effective(&routing);
    routing_ = std::move(routing);
    delivered_ |= config.has_value();
  }
  if (config.has_value()) observer_->OnServiceConfig(*config);
}

void RoutingCombiner::OnProfile(ServiceConfig config) {
  MutexLock deliver(&deliver_mu_);
  {
    MutexLock lock(&mu_);
    profile_ = std::move(config);
  }
  Deliver();
}

void RoutingCombiner::OnProfileError(const absl::Status& status) {
  MutexLock deliver(&deliver_mu_);
  bool first_failure;
  {
    MutexLock lock(&mu_);
    first_failure = !profile_failed_ && !profile_.has_value();
    profile_failed_ = true;
  }
  // The config first: an error before any config fails the calls waiting
  // for one, and the policy can route them.
  if (first_failure) Deliver();  // the policy routes meanwhile
  if (ForwardError()) observer_->OnServiceConfigError(status);
}

void RoutingCombiner::OnProfileGone(const absl::Status& why) {
  MutexLock deliver(&deliver_mu_);
  {
    MutexLock lock(&mu_);
    if (!profile_.has_value()) profile_.emplace();
  }
  Deliver();
  observer_->OnServiceConfigError(why);
}

void RoutingCombiner::OnPolicy(PolicyConversion policy) {
  MutexLock deliver(&deliver_mu_);
  bool overridden;
  {
    MutexLock lock(&mu_);
    policy_ = std::move(policy);
    policy_error_.clear();
    overridden = Overrides(profile_);
  }
  if (!overridden) Deliver();
}

void RoutingCombiner::OnPolicyError(const absl::Status& status) {
  MutexLock deliver(&deliver_mu_);
  bool first_failure;
  {
    MutexLock lock(&mu_);
    policy_error_ = std::string(status.message());
    first_failure = !policy_failed_ && !policy_.has_value();
    policy_failed_ = true;
  }
  // The config first, as in OnProfileError.
  if (first_failure) Deliver();  // the profile routes meanwhile
  if (ForwardError()) observer_->OnServiceConfigError(status);
}

void RoutingCombiner::OnPolicyGone(const absl::Status& why) {
  MutexLock deliver(&deliver_mu_);
  bool was_policy;
  {
    MutexLock lock(&mu_);
    gone_ =
        absl::StrCat(absl::StatusCodeToString(why.code()), ": ", why.message());
    was_policy = !Overrides(profile_);
  }
  if (was_policy) Deliver();
}

void RoutingCombiner::SetWatching() {
  MutexLock lock(&mu_);
  watching_ = true;
}

RoutingCombiner::Report RoutingCombiner::GetReport() const {
  MutexLock lock(&mu_);
  Report r;
  r.routing = routing_;
  if (!gone_.empty()) {
    r.policy_state = absl::StrCat("none (", gone_, ")");
  } else if (policy_.has_value()) {
    r.policy_state = "received";
    r.policy_parent = policy_->parent;
    r.policy_protocol = policy_->protocol;
  } else if (watching_) {
    r.policy_state = "watching";
  }
  r.policy_error = policy_error_;
  return r;
}

}  // namespace mesh::internal::linkerd

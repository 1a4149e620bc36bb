// SelfDroppingObserver: an endpoint observer that, inside its first update,
// reads its own subscription's state and then destroys the subscription —
// the calls back into a discovery source that a delivery made under the
// source's lock would deadlock on. Later updates are only counted.
//
//   SelfDroppingObserver dropping;
//   dropping.Set(source->Subscribe(target, &dropping));
//   std::optional<SelfDroppingObserver::Seen> seen = dropping.WaitUntilDone();
//
// Thread-safe.
#ifndef MESH_TESTS_SUPPORT_SELF_DROPPING_OBSERVER_H_
#define MESH_TESTS_SUPPORT_SELF_DROPPING_OBSERVER_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <utility>

#include "absl/time/time.h"
#include "mesh/discovery.h"
#include "src/base/mutex.h"

namespace mesh::testing {

class SelfDroppingObserver final : public EndpointObserver {
 public:
  // What the first update held, and the state read inside it.
  struct Seen {
    size_t endpoints = 0;
    DiscoverySubscription::State state;
  };

  // The subscription to drop (what Subscribe returned). An update that
  // comes before this, on another thread, waits for it (up to 10 s); so
  // not for a source that answers inside Subscribe, on the caller's thread.
  void Set(std::unique_ptr<DiscoverySubscription> subscription) {
    internal::MutexLock lock(&mu_);
    subscription_ = std::move(subscription);
    set_ = true;
  }

  void OnEndpointUpdate(const EndpointUpdate& update) override {
    std::unique_ptr<DiscoverySubscription> mine;
    {
      internal::MutexLock lock(&mu_);
      ++updates_;
      mu_.AwaitWithTimeout(absl::Condition(&set_), absl::Seconds(10));
      mine = std::move(subscription_);
    }
    if (mine == nullptr) return;  // a later update
    Seen seen{update.endpoints.size(), mine->GetState()};
    mine.reset();  // on the delivering thread: must not wait for itself
    internal::MutexLock lock(&mu_);
    seen_ = std::move(seen);
  }

  // What the first update saw, once it has dropped the subscription;
  // nullopt if that does not happen within `timeout`.
  std::optional<Seen> WaitUntilDone(
      absl::Duration timeout = absl::Seconds(10)) {
    internal::MutexLock lock(&mu_);
    auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return seen_.has_value();
    };
    mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
    return seen_;
  }

  int updates() {
    internal::MutexLock lock(&mu_);
    return updates_;
  }

 private:
  internal::Mutex mu_;
  std::unique_ptr<DiscoverySubscription> subscription_ ABSL_GUARDED_BY(mu_);
  bool set_ ABSL_GUARDED_BY(mu_) = false;
  int updates_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<Seen> seen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_SELF_DROPPING_OBSERVER_H_

#include "src/channel/mesh_core.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace mesh::internal {

MeshCore::MeshCore(MeshOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::shared_ptr<Destination>> MeshCore::GetDestination(
    const std::string& target) {
  std::shared_ptr<Destination> dest;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down()) {
      return absl::FailedPreconditionError("mesh is shut down");
    }
    auto found = destinations_.find(target);
    if (found != destinations_.end()) {
      dest = found->second.lock();
      if (dest != nullptr) return dest;
    }
    // Targets no channel uses any more leave the map here, so it holds at
    // most the live targets plus those dropped since the last new one.
    absl::erase_if(destinations_,
                   [](const auto& entry) { return entry.second.expired(); });
    std::unique_ptr<Transport> transport = options_.transport_factory
                                               ? options_.transport_factory()
                                               : NewGrpcTransport();
    if (transport == nullptr) {
      return absl::InvalidArgumentError(
          "MeshOptions.transport_factory returned null");
    }
    // Not make_shared: a weak_ptr left in the map must not keep the whole
    // Destination's memory.
    dest = std::shared_ptr<Destination>(
        new Destination(target, std::move(transport), metrics_));
    destinations_[target] = dest;
    // Subscribing under mu_ keeps a second channel for the same target from
    // seeing the destination before its first update. REQUIRES (see
    // DiscoverySource::Subscribe): sources do not call back into the Mesh.
    dest->Start(*options_.discovery);
  }
  return dest;
}

std::vector<std::shared_ptr<Destination>> MeshCore::LiveDestinations() {
  std::vector<std::shared_ptr<Destination>> live;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [target, weak] : destinations_) {
      if (auto d = weak.lock()) live.push_back(std::move(d));
    }
  }
  std::sort(live.begin(), live.end(), [](const auto& a, const auto& b) {
    return a->target() < b->target();
  });
  return live;
}

std::string MeshCore::Describe() {
  std::vector<std::shared_ptr<Destination>> live = LiveDestinations();
  std::string out = "[";
  for (size_t i = 0; i < live.size(); ++i) {
    if (i > 0) out += ",";
    out += DescribeJson(live[i]->View());
  }
  return out + "]";
}

std::string MeshCore::Metrics() {
  std::vector<EndpointGauges> gauges;
  for (const auto& d : LiveDestinations()) d->CollectGauges(&gauges);
  return metrics_->RenderPrometheus(gauges);
}

bool MeshCore::RunLater(absl::Duration delay,
                        absl::AnyInvocable<void()>& task) {
  return timers_.TryRunAfter(delay, task);
}

void MeshCore::Shutdown() {
  std::vector<std::shared_ptr<Destination>> live;
  {
    absl::MutexLock lock(&mu_);
    shut_down_.store(true, std::memory_order_release);
    for (auto& [target, weak] : destinations_) {
      if (auto d = weak.lock()) live.push_back(std::move(d));
    }
    destinations_.clear();
  }
  // Retries waiting out their backoff see the shutdown and fail at once.
  for (auto& retry : timers_.Close()) retry();
  for (auto& d : live) d->Shutdown();
}

}  // namespace mesh::internal

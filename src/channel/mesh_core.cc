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
    std::weak_ptr<Destination>& slot = destinations_[target];
    dest = slot.lock();
    if (dest != nullptr) return dest;
    std::unique_ptr<Transport> transport = options_.transport_factory
                                               ? options_.transport_factory()
                                               : NewGrpcTransport();
    if (transport == nullptr) {
      return absl::InvalidArgumentError(
          "MeshOptions.transport_factory returned null");
    }
    dest = std::make_shared<Destination>(target, std::move(transport));
    slot = dest;
    // Subscribing under mu_ keeps a second channel for the same target from
    // seeing the destination before its first update; sources deliver
    // without calling back into the mesh, so this cannot deadlock.
    dest->Start(*options_.discovery);
  }
  return dest;
}

std::string MeshCore::Describe() {
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
  std::string out = "[";
  for (size_t i = 0; i < live.size(); ++i) {
    if (i > 0) out += ",";
    out += DescribeJson(live[i]->View());
  }
  return out + "]";
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
  for (auto& d : live) d->Shutdown();
}

}  // namespace mesh::internal

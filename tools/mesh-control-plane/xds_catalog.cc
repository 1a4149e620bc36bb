#include "tools/mesh-control-plane/xds_catalog.h"

#include <utility>

namespace mesh::controlplane {

std::shared_ptr<const XdsCatalog> XdsCatalog::Next(const XdsCatalog* previous,
                                                   XdsResourceSet next) {
  auto catalog = std::make_shared<XdsCatalog>();
  for (XdsType type : kAllXdsTypes) {
    const int t = static_cast<int>(type);
    if (previous == nullptr) {
      catalog->versions_[t] = 1;
      for (auto& [name, any] : next[type]) {
        catalog->resources_[t].emplace(name,
                                       VersionedResource{std::move(any), 1});
      }
      continue;
    }
    const auto& before = previous->resources_[t];
    const int64_t bumped = previous->versions_[t] + 1;
    bool changed = before.size() != next[type].size();
    for (auto& [name, any] : next[type]) {
      auto old = before.find(name);
      int64_t version = bumped;
      if (old != before.end() &&
          old->second.resource.type_url() == any.type_url() &&
          old->second.resource.value() == any.value()) {
        version = old->second.version;
      } else {
        changed = true;
      }
      catalog->resources_[t].emplace(
          name, VersionedResource{std::move(any), version});
    }
    catalog->versions_[t] = changed ? bumped : previous->versions_[t];
  }
  return catalog;
}

}  // namespace mesh::controlplane

// XdsCatalog: the xDS resources served now, versioned by content. A
// resource keeps its version while its bytes stay the same; a type whose
// resources changed in any way (added, changed, removed) gets a new version,
// which its changed resources take. So a file edit touching one target
// bumps only the types it touched, and a stream re-sends only what changed.
//
//   auto first = XdsCatalog::Next(nullptr, BuildXdsResources(config));
//   auto second = XdsCatalog::Next(first.get(), BuildXdsResources(edited));
//
// Immutable once built; shared between streams as shared_ptr<const>.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_XDS_CATALOG_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_XDS_CATALOG_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "google/protobuf/any.pb.h"
#include "tools/mesh-control-plane/xds_resources.h"

namespace mesh::controlplane {

struct VersionedResource {
  google::protobuf::Any resource;
  int64_t version = 0;  // the type's version when this content arrived
};

class XdsCatalog {
 public:
  // The catalog after `next` replaces `previous` (nullptr: the first, every
  // type at version 1).
  static std::shared_ptr<const XdsCatalog> Next(const XdsCatalog* previous,
                                                XdsResourceSet next);

  int64_t version(XdsType type) const {
    return versions_[static_cast<int>(type)];
  }
  const std::map<std::string, VersionedResource>& resources(
      XdsType type) const {
    return resources_[static_cast<int>(type)];
  }

 private:
  std::array<int64_t, kXdsTypes> versions_{};
  std::array<std::map<std::string, VersionedResource>, kXdsTypes> resources_;
};

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_XDS_CATALOG_H_

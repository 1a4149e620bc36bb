// EndpointSet applies the update vocabulary to one destination's endpoints.
//
// Applying is all-or-nothing: an update with any invalid endpoint (or an
// address twice) is rejected whole and the set is unchanged. Applying the same
// update twice gives the same set.
//
//   EndpointSet set;
//   absl::Status s = set.Apply(EndpointUpdate::Add({e1, e2}));
//   std::vector<Endpoint> now = set.Endpoints();  // sorted by address
//
// Thread-compatible.
#ifndef MESH_SRC_MODEL_ENDPOINT_SET_H_
#define MESH_SRC_MODEL_ENDPOINT_SET_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "mesh/endpoint.h"

namespace mesh::internal {

class EndpointSet {
 public:
  // OK, or INVALID_ARGUMENT naming the first bad endpoint (nothing applied).
  absl::Status Apply(const EndpointUpdate& update);

  // The current endpoints, sorted by address.
  std::vector<Endpoint> Endpoints() const;
  size_t size() const { return endpoints_.size(); }
  // False after NoEndpoints{exists=false}, true after anything else.
  bool exists() const { return exists_; }
  // True once any update has been applied.
  bool has_update() const { return has_update_; }

 private:
  absl::flat_hash_map<std::string, Endpoint> endpoints_;
  bool exists_ = true;
  bool has_update_ = false;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_MODEL_ENDPOINT_SET_H_

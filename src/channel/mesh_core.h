// MeshCore is the shared state behind mesh::Mesh: options, the destinations
// in use (shared by channels, dropped when unused) and the shutdown flag.
// Channels hold it by shared_ptr so they may outlive the Mesh.
//
// Thread-safe.
#ifndef MESH_SRC_CHANNEL_MESH_CORE_H_
#define MESH_SRC_CHANNEL_MESH_CORE_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "mesh/mesh.h"
#include "src/channel/destination.h"

namespace mesh::internal {

class MeshCore {
 public:
  explicit MeshCore(MeshOptions options);

  // The destination for `target`, shared with other channels; created and
  // subscribed on first use. FAILED_PRECONDITION after Shutdown.
  absl::StatusOr<std::shared_ptr<Destination>> GetDestination(
      const std::string& target);

  // A JSON array with one object per destination in use (Mesh::Describe).
  std::string Describe();

  // Ends every destination's calls and discovery; later calls fail.
  void Shutdown();
  bool shut_down() const { return shut_down_.load(std::memory_order_acquire); }

 private:
  const MeshOptions options_;
  std::atomic<bool> shut_down_{false};
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::weak_ptr<Destination>> destinations_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_MESH_CORE_H_

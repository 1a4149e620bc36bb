// TrafficSplit: the weighted backends of a destination (Linkerd
// dst_overrides, xDS weighted_clusters) compiled for a per-request draw.
// Each backend is a destination of its own ("name:port"), with its own
// endpoint set from discovery.
//
//   std::vector<std::string> dropped;
//   auto split = TrafficSplit::Build(config.backends, &dropped);
//   size_t first = split->Draw(gen, {});  // an index into split->backends()
//
// Immutable after Build; safe to share.
#ifndef MESH_SRC_ROUTE_TRAFFIC_SPLIT_H_
#define MESH_SRC_ROUTE_TRAFFIC_SPLIT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "mesh/service_config.h"

namespace mesh::internal {

class TrafficSplit {
 public:
  // Keeps the backends with a non-zero weight and a valid "name:port"
  // authority or a cluster name (at most kMaxClusterName bytes, no
  // authority beside it), in order, merging repeats of one backend (their
  // weights summed in 64 bits); each one dropped adds a line naming it to
  // `dropped` (may be null). Null when none is left: calls go to the
  // destination itself. Weights are then normalised so that each fits 32 bits
  // (scaled down together when a sum does not, none below 1): the draw's
  // proportions are those of the configured weights, whatever their size.
  // `first_available`: Draw gives the first backend not excluded, in order
  // (Route::backends_first_available).
  static std::shared_ptr<const TrafficSplit> Build(
      const std::vector<WeightedBackend>& backends,
      std::vector<std::string>* dropped, bool first_available = false);

  const std::vector<WeightedBackend>& backends() const { return backends_; }
  // Backend i's key among a channel's legs (KeyOf), made once here so that
  // a pick does not make it.
  const std::string& key(size_t i) const { return keys_[i]; }
  // A backend's key: its authority, or a cluster's name after " cluster "
  // (authorities hold no spaces).
  static std::string KeyOf(const WeightedBackend& b);

  // A backend index drawn with probability proportional to weight among
  // those whose bit in `excluded` is clear (bit i: backend i) — or the
  // first of them, built first_available; size() when all are excluded.
  // At most 64 backends are kept.
  size_t Draw(absl::BitGenRef gen, uint64_t excluded) const;
  size_t size() const { return backends_.size(); }

  static constexpr size_t kMaxBackends = 64;
  static constexpr size_t kMaxClusterName = 1024;
  // The cluster's name, else the authority: for messages.
  static const std::string& NameOf(const WeightedBackend& b);

 private:
  std::vector<WeightedBackend> backends_;
  std::vector<std::string> keys_;  // beside backends_
  bool first_available_ = false;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_ROUTE_TRAFFIC_SPLIT_H_

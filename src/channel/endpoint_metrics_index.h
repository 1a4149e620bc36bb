// EndpointMetricsIndex: the metrics of a destination's current endpoints, by
// address, for the attempts that end on them. An endpoint's metrics are
// made on its first call and follow it through updates that keep it (or
// replace its entry with the same identity); the lookup is an immutable
// index of 4-byte positions into the endpoint set's list.
//
//   index.Update(previous, current);       // after each change of the set
//   auto m = index.For("10.0.0.1:8080");  // null for an address not in it
//
// Thread-safe.
#ifndef MESH_SRC_CHANNEL_ENDPOINT_METRICS_INDEX_H_
#define MESH_SRC_CHANNEL_ENDPOINT_METRICS_INDEX_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "mesh/endpoint.h"
#include "src/base/mutex.h"
#include "src/base/snapshot_cell.h"
#include "src/metrics/metrics_registry.h"
#include "src/model/endpoint_set.h"

namespace mesh::internal {

// One endpoint of a destination, shared by the endpoint set, the index and
// (through aliasing shared_ptrs to `endpoint`) the balancers' records.
struct DestinationEndpoint {
  explicit DestinationEndpoint(const Endpoint& e) : endpoint(e) {}
  const Endpoint endpoint;
  // Made on the endpoint's first call (EndpointMetricsIndex::For), or
  // carried over from the entry this one replaced. `metrics_owner` is set
  // under the index's lock before `metrics` publishes it (release); readers
  // load `metrics` (acquire) and never touch `metrics_owner`.
  mutable std::atomic<EndpointMetrics*> metrics{nullptr};
  mutable std::shared_ptr<EndpointMetrics> metrics_owner;
};

class EndpointMetricsIndex {
 public:
  using List = BasicEndpointSet<DestinationEndpoint>::List;

  // Metrics are made in `registry` under `target`, labelled as
  // TlsLabels(endpoint, identity_in_use, default_transport) says.
  EndpointMetricsIndex(std::string target,
                       std::shared_ptr<MetricsRegistry> registry,
                       bool identity_in_use, bool default_transport);

  // The set's list went from `previous` to `current`: indexes `current`,
  // and a new entry for an address of `previous` takes its predecessor's
  // metrics when the identity is the same. Called by one thread at a time
  // (the destination's updates); O(changed) under the lock.
  void Update(const List& previous, std::shared_ptr<const List> current);

  // The metrics of one of the current endpoints, made on its first call;
  // null for an address not in the set. Once made: one snapshot read and a
  // hash lookup.
  std::shared_ptr<EndpointMetrics> For(const std::string& address) const;

 private:
  // An immutable lookup by address into one list: positions into
  // `entries`, hashed and compared by the address they point at.
  struct Index {
    struct Hash {
      using is_transparent = void;
      size_t operator()(uint32_t i) const {
        return (*this)((*list)[i]->endpoint.address);
      }
      size_t operator()(absl::string_view address) const {
        return absl::Hash<absl::string_view>()(address);
      }
      const List* list = nullptr;
    };
    struct Eq {
      using is_transparent = void;
      bool operator()(uint32_t a, uint32_t b) const { return a == b; }
      bool operator()(uint32_t a, absl::string_view b) const {
        return (*list)[a]->endpoint.address == b;
      }
      bool operator()(absl::string_view a, uint32_t b) const {
        return (*this)(b, a);
      }
      const List* list = nullptr;
    };
    explicit Index(std::shared_ptr<const List> l);
    Index(const Index&) = delete;
    Index& operator=(const Index&) = delete;

    const std::shared_ptr<const List> entries;  // never null
    absl::flat_hash_set<uint32_t, Hash, Eq> by_address;
  };

  // The entry of `address` in the current index; null if none.
  std::shared_ptr<const DestinationEndpoint> Find(
      absl::string_view address) const;
  LabelPairs LabelsOf(const Endpoint& endpoint) const;

  const std::string target_;
  const std::shared_ptr<MetricsRegistry> registry_;
  const bool identity_in_use_;
  const bool default_transport_;
  SnapshotCell<Index> index_;  // published under mu_
  // Serializes making an endpoint's metrics (its first call) with carrying
  // them over and publishing the index (updates). Takes no other lock.
  mutable Mutex mu_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_ENDPOINT_METRICS_INDEX_H_

// HashRing: the consistent-hash ring of gRFC A42 (xDS RING_HASH, after
// Envoy's ring hash), built once per endpoint set on the control path.
//
// Each endpoint i of weight_i gets a share w_i = weight_i / Σ weight of
//   scale = min(ceil(min_j w_j × min_size) / min_j w_j, max_size)
// entries, rounded as A42 (and gRPC) do: a running target Σ_{j<=i} scale·w_j
// and each endpoint adding entries while the running count is below it, so
// the counts are differences of successive ceilings. The k-th entry of
// endpoint i (k = 0, 1, ...) sits at XxHash64("<address_i>_<k>"); a hash
// belongs to the first entry at or after it, wrapping past the last.
//
// Consistency as A42 has it: a change of the set moves the hashes of the
// endpoints that came or went, and also those of the entries that the
// rescaling drops or adds (the equal-weight count is ceil(min_size / n), so
// a fifth equal endpoint takes each of the four others from 256 entries to
// 205: about 30% of hashes move, 20% to the newcomer). Following A42 exactly
// keeps mesh's ring equal to gRPC's for the same endpoints, so that clients
// of both send a hash to the same endpoint.
//
// Memory: 12 bytes per entry. At equal weights the ring has ceil(min_size /
// n) × n entries; skewed weights grow it up to max_size (8M: 96 MiB).
//
//   HashRing ring(n, [&](size_t i) -> const Endpoint& { return eps[i]; },
//                 1024, 8 << 20);
//   size_t endpoint = ring.index(ring.Find(XxHash64(key)));
//
// Immutable after construction; safe to share.
#ifndef MESH_SRC_BALANCE_HASH_RING_H_
#define MESH_SRC_BALANCE_HASH_RING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "mesh/endpoint.h"

namespace mesh::internal {

class HashRing {
 public:
  // The ring of the `n` endpoints endpoint(0) .. endpoint(n - 1), with at
  // most max_size entries (an endpoint whose share of max_size rounds to
  // nothing gets none) and, when n >= 1, at least min_size.
  // REQUIRES: 1 <= min_size <= max_size < 2^32; n < 2^32; every weight >= 1.
  HashRing(size_t n, absl::FunctionRef<const Endpoint&(size_t)> endpoint,
           uint64_t min_size, uint64_t max_size);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // The position of the first entry whose hash is >= `hash`, or 0 if there
  // is none (the ring wraps). REQUIRES: !empty().
  size_t Find(uint64_t hash) const;
  // The hash of the entry at `pos`, and the endpoint it belongs to (an
  // index into the endpoints the ring was built from). REQUIRES: pos < size().
  uint64_t hash(size_t pos) const { return entries_[pos].hash(); }
  uint32_t index(size_t pos) const { return entries_[pos].index; }

 private:
  // 12 bytes, not 16: the hash as two 32-bit halves keeps the struct
  // 4-aligned without packing pragmas.
  struct Entry {
    uint32_t hash_high;
    uint32_t hash_low;
    uint32_t index;
    uint64_t hash() const {
      return (static_cast<uint64_t>(hash_high) << 32) | hash_low;
    }
  };
  static_assert(sizeof(Entry) == 12, "ring entries are 12 bytes");

  std::vector<Entry> entries_;  // sorted by (hash, index)
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_HASH_RING_H_

// XxHash64: the 64-bit xxHash (XXH64) of a byte string, written from its
// specification (Yann Collet, xxhash's doc/xxhash_spec.md). The ring-hash
// balancer hashes "<address>_<n>" with it, seed 0, as gRFC A42 and Envoy
// do, so that mesh and gRPC clients place endpoints on the same ring.
//
//   uint64_t h = XxHash64("10.0.0.1:80_0");
//
// Not a cryptographic hash: anyone can choose inputs that collide.
// Thread-safe (a pure function).
#ifndef MESH_SRC_BASE_XXHASH_H_
#define MESH_SRC_BASE_XXHASH_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace mesh::internal {

// XXH64(data, seed): equal to the reference implementation's XXH64() and
// to `xxhsum -H64` for seed 0, on any byte order.
uint64_t XxHash64(absl::string_view data, uint64_t seed = 0);

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_XXHASH_H_

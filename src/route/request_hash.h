// The hash a call goes by on a ring-hash backend: its route's hash policies
// (RequestHashPolicy) over the request headers, as gRFC A42 mixes them.
//
//   std::optional<uint64_t> h = RequestHash(route, &headers, channel_id);
//   picked = h ? balancer.PickHashed(*h) : balancer.Pick();
//
// Pure function: thread-safe.
#ifndef MESH_SRC_ROUTE_REQUEST_HASH_H_
#define MESH_SRC_ROUTE_REQUEST_HASH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/route/route_table.h"

namespace mesh::internal {

// The call's hash, or nullopt when no policy yields a value (the call then
// gets a random one). Each yielding policy's value is XxHash64 of the
// header's values joined by "," (after the regex rewrite), or `channel_id`;
// values combine as hash = rotl(hash, 1) ^ value; a terminal policy that
// yields ends the walk.
std::optional<uint64_t> RequestHash(
    const CompiledRoute& route,
    const std::vector<std::pair<std::string, std::string>>* headers,
    uint64_t channel_id);

}  // namespace mesh::internal

#endif  // MESH_SRC_ROUTE_REQUEST_HASH_H_

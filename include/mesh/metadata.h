// Metadata: a request's or response's header (gRPC metadata) name/value
// pairs, as the channel, the transport and tap carry them.
//
//   mesh::Metadata headers = {{"x-request-id", "42"}};
//
// A plain value: thread-compatible.
#ifndef MESH_METADATA_H_
#define MESH_METADATA_H_

#include <string>
#include <utility>
#include <vector>

namespace mesh {

// Header name/value pairs, in order; names are lower case.
using Metadata = std::vector<std::pair<std::string, std::string>>;

}  // namespace mesh

#endif  // MESH_METADATA_H_

// The bytes of a grpc::ByteBuffer as one std::string: one copy, without the
// vector of slices when the buffer is a single slice (a small message's
// usual shape).
//
//   std::string body = BytesOf(response);
//
// Thread-compatible (as the buffer is).
#ifndef MESH_SRC_TRANSPORT_BYTE_BUFFER_BYTES_H_
#define MESH_SRC_TRANSPORT_BYTE_BUFFER_BYTES_H_

#include <grpcpp/support/byte_buffer.h>

#include <string>

namespace mesh::internal {

// Empty for an empty buffer, or one gRPC cannot read.
std::string BytesOf(const grpc::ByteBuffer& buffer);

}  // namespace mesh::internal

#endif  // MESH_SRC_TRANSPORT_BYTE_BUFFER_BYTES_H_

#include "src/transport/byte_buffer_bytes.h"

#include <vector>

namespace mesh::internal {

std::string BytesOf(const grpc::ByteBuffer& buffer) {
  grpc::Slice single;
  if (buffer.TrySingleSlice(&single).ok()) {
    return std::string(reinterpret_cast<const char*>(single.begin()),
                       single.size());
  }
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  out.reserve(buffer.Length());
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

}  // namespace mesh::internal

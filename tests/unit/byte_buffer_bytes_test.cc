// BytesOf: a grpc::ByteBuffer's bytes as one string, whatever its slices.
#include "src/transport/byte_buffer_bytes.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

TEST(ByteBufferBytesTest, OneSliceIsCopiedAsItIs) {
  const std::string body("a\0b\xff", 4);
  grpc::Slice slice(body);
  grpc::ByteBuffer buffer(&slice, 1);
  EXPECT_EQ(BytesOf(buffer), body);
}

TEST(ByteBufferBytesTest, ManySlicesAreJoinedInOrder) {
  std::vector<grpc::Slice> slices = {grpc::Slice(std::string(3000, 'x')),
                                     grpc::Slice(std::string("middle")),
                                     grpc::Slice(std::string(5, '\0'))};
  grpc::ByteBuffer buffer(slices.data(), slices.size());
  EXPECT_EQ(BytesOf(buffer),
            std::string(3000, 'x') + "middle" + std::string(5, '\0'));
}

TEST(ByteBufferBytesTest, AnEmptyBufferHasNoBytes) {
  grpc::ByteBuffer buffer;
  EXPECT_EQ(BytesOf(buffer), "");
}

}  // namespace
}  // namespace mesh::internal

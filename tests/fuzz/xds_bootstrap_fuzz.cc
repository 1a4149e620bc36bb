// libFuzzer target: any bytes as an xDS bootstrap (ParseXdsBootstrap, the
// reader of GRPC_XDS_BOOTSTRAP files and GRPC_XDS_BOOTSTRAP_CONFIG). Each
// input must be accepted or refused, never crash or hang (the linear
// pre-check bounds protobuf's JSON reader, whose cost grows with the square
// of the nesting); a refusal is one line of bounded length, whatever bytes
// the input holds; what is accepted has a server whose address checks out.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "src/discovery/xds/bootstrap.h"
#include "src/model/address.h"
#include "tests/fuzz/fuzz_require.h"

namespace mesh::internal::xds {
namespace {

void Check(absl::string_view text) {
  absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(text);
  if (!b.ok()) {
    REQUIRE(b.status().code() == absl::StatusCode::kInvalidArgument,
            "refused with another code: ", b.status().ToString());
    const absl::string_view message = b.status().message();
    REQUIRE(message.find('\n') == absl::string_view::npos,
            "a refusal over several lines");
    // Peer text is quoted in at most 256 bytes (escaped, up to 4 bytes a
    // byte), a few quotes a message.
    REQUIRE(message.size() < 8192, "a refusal of ", message.size(), " bytes");
    return;
  }
  REQUIRE(!b->servers.empty(), "accepted without a server");
  for (const XdsServer& server : b->servers) {
    REQUIRE(ValidateServerAddress(server.server_uri).ok(),
            "accepted a server_uri that does not check out");
  }
}

}  // namespace
}  // namespace mesh::internal::xds

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mesh::internal::xds::Check(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

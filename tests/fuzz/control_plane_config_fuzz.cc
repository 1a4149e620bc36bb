// libFuzzer target for mesh-control-plane's config reader
// (tools/mesh-control-plane/config.h): any file must parse or be refused with
// a message naming the line — never crash, never exhaust the stack — and a
// config that parses must go on the wire as messages a client can parse
// back (proto3 strings are UTF-8; one that is not once froze the clients'
// streams).
//
// Run through scripts/fuzz.sh. A violated invariant aborts with a message.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/stubs/logging.h"
#include "linkerd/destination.pb.h"
#include "src/base/utf8.h"
#include "tests/fuzz/fuzz_require.h"
#include "tools/mesh-control-plane/config.h"

namespace {

namespace dst = ::io::linkerd::proxy::destination;
using mesh::controlplane::Config;

// The message survives the trip a client makes: serialize, parse back.
template <typename Message>
void CheckWire(const Message& message, const std::string& what) {
  std::string bytes;
  REQUIRE(message.SerializeToString(&bytes), what, " does not serialize");
  Message back;
  REQUIRE(back.ParseFromString(bytes), what,
          " does not parse back (a string that is not UTF-8?)");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Config> config = mesh::controlplane::ParseConfig(text);
  if (!config.ok()) {
    REQUIRE(config.status().code() == absl::StatusCode::kInvalidArgument,
            "refusal is not INVALID_ARGUMENT");
    const std::string message(config.status().message());
    REQUIRE(absl::StartsWith(message, "line "), "no line in: ", message);
    // Printable whatever the input: no NUL or control byte, valid UTF-8.
    REQUIRE(mesh::internal::IsValidUtf8(message), "message not UTF-8");
    for (char c : message) {
      REQUIRE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f,
              "control byte in the message");
    }
    return 0;
  }
  for (const auto& [target, spec] : config->targets) {
    REQUIRE(mesh::internal::IsValidUtf8(target), "target not UTF-8");
    for (const mesh::controlplane::EndpointSpec& e : spec.endpoints) {
      CheckWire(mesh::controlplane::ToWire(e), "an endpoint");
    }
    CheckWire(mesh::controlplane::ProfileFor(*config, target), "a profile");
  }
  return 0;
}

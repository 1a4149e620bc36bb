// gRPC status code names ("OK", "UNAVAILABLE", ...), as the gRPC spec
// (doc/statuscodes.md) spells them and absl::StatusCodeToString gives them,
// for mesh-call's report, mesh-tap's lines and the echo server's
// --fail-status flag.
//
//   GrpcCodeName(absl::StatusCode::kUnavailable)  // "UNAVAILABLE"
//   ParseGrpcCode("deadline_exceeded")            // kDeadlineExceeded
//
// Thread-safe (pure functions).
#ifndef MESH_TOOLS_COMMON_GRPC_CODES_H_
#define MESH_TOOLS_COMMON_GRPC_CODES_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace mesh::tools {

// The code's name; "CODE_<n>" for a number outside 0..16.
std::string GrpcCodeName(absl::StatusCode code);

// A name (any case) or a number 0..16; nullopt for anything else.
std::optional<absl::StatusCode> ParseGrpcCode(absl::string_view text);

}  // namespace mesh::tools

#endif  // MESH_TOOLS_COMMON_GRPC_CODES_H_

// The syntax of what goes into HTTP/2 and gRPC headers, checked in one
// place: tokens (methods), authorities, gRPC metadata names and values, and
// gRPC method paths; and the gRPC code an HTTP status means to a gRPC
// client.
//
//   if (!IsAuthority(name)) return absl::InvalidArgumentError(...);
//   if (absl::Status s = ValidateMetadata(metadata); !s.ok()) return s;
//
// Pure functions: thread-safe.
#ifndef MESH_SRC_MODEL_HTTP_SYNTAX_H_
#define MESH_SRC_MODEL_HTTP_SYNTAX_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "mesh/metadata.h"
#include "src/base/internal_export.h"

namespace mesh::internal {

// RFC 9110 §5.6.2: a token (an HTTP method is one), not empty.
bool IsHttpToken(absl::string_view s);

// RFC 3986 §3.2 authority characters, not empty: it goes into :authority as
// is, so spaces, control characters and '/' must not get through.
bool IsAuthority(absl::string_view s);

// A gRPC metadata name as applications may send it: lower case [0-9a-z_.-],
// not empty (so no pseudo-header).
bool IsMetadataName(absl::string_view s);

// Printable ASCII (0x20..0x7e), as a non-binary header value must be.
bool IsPrintableHeaderValue(absl::string_view s);

// OK, or INVALID_ARGUMENT naming what is wrong with a gRPC method path
// ("/pkg.Service/Method"), or with a metadata name (syntax, or one gRPC and
// HTTP/2 reserve) or value.
absl::Status ValidateMethod(absl::string_view method);
absl::Status ValidateMetadata(const Metadata& metadata);
// OK, or INVALID_ARGUMENT naming what is wrong with a plain HTTP request's
// method (a token), path ('/' then visible ASCII) or headers (lower-case
// token names, values without CR, LF or NUL).
absl::Status ValidateHttpRequest(absl::string_view method,
                                 absl::string_view path,
                                 const Metadata& headers);

// The code a gRPC client reads from a response with this HTTP status and no
// grpc-status (gRPC's HTTP to gRPC status mapping): 400 INTERNAL, 401
// UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 UNIMPLEMENTED, 429 and
// 502-504 UNAVAILABLE, any other UNKNOWN.
MESH_INTERNAL_EXPORT absl::StatusCode GrpcCodeOfHttpStatus(uint32_t status);

}  // namespace mesh::internal

#endif  // MESH_SRC_MODEL_HTTP_SYNTAX_H_

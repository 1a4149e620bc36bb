// JSON string literals for everything mesh writes as JSON: Mesh::Describe()
// and the tools' --json output (mesh-call, mesh-tap).
//
//   out += JsonString(endpoint);  // "\"10.0.0.1:7001\""
//
// Pure function; thread-safe.
#ifndef MESH_SRC_BASE_JSON_STRING_H_
#define MESH_SRC_BASE_JSON_STRING_H_

#include <string>

#include "absl/strings/string_view.h"

namespace mesh::internal {

// `text` as a JSON string literal, quotes included: `"`, `\` and control
// characters (and DEL) escaped; bytes that are not valid UTF-8 (RFC 3629:
// no overlong forms, surrogates or code points past U+10FFFF) become U+FFFD,
// so the document is valid JSON whatever the input.
std::string JsonString(absl::string_view text);

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_JSON_STRING_H_

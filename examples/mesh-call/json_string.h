// JSON string literals for the tools' --json output (mesh-call, mesh-tap).
//
//   out += JsonString(endpoint);  // "\"10.0.0.1:7001\""
//
// Pure function; thread-safe.
#ifndef MESH_EXAMPLES_MESH_CALL_JSON_STRING_H_
#define MESH_EXAMPLES_MESH_CALL_JSON_STRING_H_

#include <string>

#include "absl/strings/string_view.h"

namespace mesh::examples {

// `text` as a JSON string literal, quotes included: `"`, `\` and control
// characters (and DEL) escaped; bytes that are not valid UTF-8 (RFC 3629:
// no overlong forms, surrogates or code points past U+10FFFF) become U+FFFD.
std::string JsonString(absl::string_view text);

}  // namespace mesh::examples

#endif  // MESH_EXAMPLES_MESH_CALL_JSON_STRING_H_

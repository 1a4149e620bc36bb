// A small JSON reader for the control plane's config file. It exists because
// the config's errors must name a line, and protobuf's JSON parser (the one
// JSON parser among our dependencies) reports only a caret under a snippet.
// Values remember the line they start on, so semantic errors can name it too.
//
//   absl::StatusOr<JsonValue> v = ParseJson(text);  // "line 3: expected ':'"
//
// Thread-compatible.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_JSON_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_JSON_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mesh::controlplane {

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;
  int line = 0;  // where the value starts, 1-based

  bool is(Type t) const { return type == t; }
};

// Values a document may hold by default: a config of 100,000 endpoints has
// about 400,000; each costs ~130 bytes parsed, so this bounds the memory a
// file can drive to a few hundred MB.
inline constexpr int64_t kDefaultMaxJsonValues = 2'000'000;

// INVALID_ARGUMENT "line N: <problem>" for text that is not one JSON value,
// for strings (keys too) that are not UTF-8 or hold raw control characters
// ("line N: <path>: a string is not valid UTF-8 (byte 0xff at offset 3)"),
// and past `max_values` values. Input quoted in a message is made printable
// (\xNN), so a NUL byte cannot cut it short.
absl::StatusOr<JsonValue> ParseJson(absl::string_view text,
                                    int64_t max_values = kDefaultMaxJsonValues);

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_JSON_H_

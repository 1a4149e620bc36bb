// A small JSON reader for the control plane's config file. It exists because
// the config's errors must name a line, and protobuf's JSON parser (the one
// JSON parser among our dependencies) reports only a caret under a snippet.
// Values remember the line they start on, so semantic errors can name it too.
//
//   absl::StatusOr<JsonValue> v = ParseJson(text);  // "line 3: expected ':'"
//
// Thread-compatible.
#ifndef MESH_EXAMPLES_CONTROL_PLANE_JSON_H_
#define MESH_EXAMPLES_CONTROL_PLANE_JSON_H_

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

// INVALID_ARGUMENT "line N: <problem>" for text that is not one JSON value.
absl::StatusOr<JsonValue> ParseJson(absl::string_view text);

}  // namespace mesh::controlplane

#endif  // MESH_EXAMPLES_CONTROL_PLANE_JSON_H_

// Reading the control plane's config file field by field: each check's error
// names the line and the field's path ("line 7: targets[...].weight:
// expected a whole number in 1..1073741824"). Shared by the parsers of
// config.cc and policy_config.cc.
//
//   if (absl::Status s = Expect(v, JsonValue::Type::kObject, path); !s.ok())
//     return s;
//
// Pure functions; thread-safe.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_CONFIG_FIELDS_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_CONFIG_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/mesh-control-plane/json.h"

namespace mesh::controlplane {

// INVALID_ARGUMENT "line N: <path>: <problem>", made printable.
absl::Status Bad(const JsonValue& v, const std::string& path,
                 absl::string_view problem);
// An error unless `v` has `type`.
absl::Status Expect(const JsonValue& v, JsonValue::Type type,
                    const std::string& path);
// An error naming the first key of `object` not in `known`: a typo is an
// error, not a silently ignored field.
absl::Status OnlyKeys(const JsonValue& object, const std::string& path,
                      std::initializer_list<absl::string_view> known);
// A whole number in [min, max].
absl::StatusOr<int64_t> Integer(const JsonValue& v, const std::string& path,
                                int64_t min, int64_t max);
// Empty, or what is wrong with `name` as the name of a header condition:
// HTTP/2 sends names in lower case, so one with an upper-case letter never
// matches; pseudo-headers other than :authority, :method, :path, :scheme
// cannot be matched.
std::string HeaderNameProblem(const std::string& name);

// A string field's value (the key must be present).
absl::StatusOr<std::string> StringField(const JsonValue& v,
                                        const std::string& path);

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_CONFIG_FIELDS_H_

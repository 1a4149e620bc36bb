// A linear pre-check of JSON text before a parser that is not linear sees
// it: protobuf's JSON reader (google::protobuf::util::JsonStringToMessage)
// costs time quadratic in array nesting — 20,000 '[' then as many ']' cost
// 11.8 s of CPU — so text from a file or an environment variable is walked
// once here, byte by byte, and refused when it nests deeper than a bound or
// is not UTF-8, before it is parsed.
//
//   if (absl::Status s = CheckJsonShape(text, {/*max_depth=*/32}); !s.ok())
//     return s;  // INVALID_ARGUMENT: "... nested deeper than 32 (at byte 812)"
//
// Pure function; thread-safe.
#ifndef MESH_SRC_BASE_JSON_SHAPE_H_
#define MESH_SRC_BASE_JSON_SHAPE_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "src/base/internal_export.h"

namespace mesh::internal {

struct JsonShapeLimits {
  // Arrays and objects open at once, the outermost counting 1.
  int max_depth = 64;
};

// OK, or INVALID_ARGUMENT naming the first problem and its byte offset:
// a byte that is not valid UTF-8 (shown as \xNN), or an array or object
// nested deeper than `limits.max_depth`. Brackets inside strings do not
// count. Everything else (syntax) is the parser's to judge. O(size).
MESH_INTERNAL_EXPORT absl::Status CheckJsonShape(absl::string_view text,
                                                 JsonShapeLimits limits);

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_JSON_SHAPE_H_

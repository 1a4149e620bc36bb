#include "src/base/json_shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/base/utf8.h"

namespace mesh::internal {

absl::Status CheckJsonShape(absl::string_view text, JsonShapeLimits limits) {
  if (size_t bad = FirstInvalidUtf8(text); bad != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("not valid UTF-8 (byte \\x%02x at offset %d)",
                        static_cast<unsigned char>(text[bad]), bad));
  }
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped byte, a quote or backslash included
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > limits.max_depth) {
          return absl::InvalidArgumentError(
              absl::StrCat("arrays and objects nested deeper than ",
                           limits.max_depth, " (at byte ", i, ")"));
        }
        break;
      case ']':
      case '}':
        // An unbalanced close is a syntax error, the parser's to name.
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

}  // namespace mesh::internal

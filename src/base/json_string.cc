#include "src/base/json_string.h"

#include "absl/strings/str_format.h"
#include "src/base/utf8.h"

namespace mesh::internal {

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  out.reserve(text.size() + 2);
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t n = Utf8SequenceLength(text.substr(i));
      if (n == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(text.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out += "\"";
  return out;
}

}  // namespace mesh::internal

#include "src/base/utf8.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mesh::internal {

size_t Utf8SequenceLength(absl::string_view s) {
  if (s.empty()) return 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b = byte(0);
  if (b < 0x80) return 1;
  size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0;
  if (n == 0 || b > 0xF4 || s.size() < n) return 0;
  uint32_t cp = b & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (byte(i) & 0x3F);
  }
  constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n;
}

size_t FirstInvalidUtf8(absl::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = Utf8SequenceLength(s.substr(i));
    if (n == 0) return i;
    i += n;
  }
  return absl::string_view::npos;
}

std::string PrintableText(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = Utf8SequenceLength(s.substr(i));
    if (n == 0 || c < 0x20 || c == 0x7f) {
      absl::StrAppendFormat(&out, "\\x%02x", c);
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

std::string QuotedText(absl::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return PrintableText(s);
  size_t cut = max_bytes;
  // Back off to the start of a character: at most 3 continuation bytes.
  for (int i = 0;
       i < 3 && cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80;
       ++i) {
    --cut;
  }
  return absl::StrCat(PrintableText(s.substr(0, cut)), "... (", s.size(),
                      " bytes)");
}

}  // namespace mesh::internal

// UTF-8 checks for text that crosses a boundary: strings a control plane
// will put into protobuf (proto3 `string` fields must be UTF-8, or the
// receiver fails to parse the whole message), and text a log line or JSON
// document quotes.
//
//   size_t bad = FirstInvalidUtf8(label);   // npos: valid
//   std::string safe = PrintableText(input);  // for an error message
//   std::string quote = QuotedText(version);  // at most 256 bytes of it
//
// Pure functions; thread-safe.
#ifndef MESH_SRC_BASE_UTF8_H_
#define MESH_SRC_BASE_UTF8_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "src/base/internal_export.h"

namespace mesh::internal {

// Length of the valid UTF-8 sequence at the start of `s` (1 to 4), or 0 if
// it does not start with one. Valid means RFC 3629: no overlong forms, no
// surrogates, no code point past U+10FFFF.
size_t Utf8SequenceLength(absl::string_view s);

// The offset of the first byte that does not start a valid UTF-8 sequence,
// or absl::string_view::npos when all of `s` is valid.
MESH_INTERNAL_EXPORT size_t FirstInvalidUtf8(absl::string_view s);
inline bool IsValidUtf8(absl::string_view s) {
  return FirstInvalidUtf8(s) == absl::string_view::npos;
}

// `s` for a log line or an error message: valid UTF-8 other than control
// characters is kept; control characters (NUL included), DEL and bytes that
// are not valid UTF-8 become \xNN. Never cut short by a NUL.
MESH_INTERNAL_EXPORT std::string PrintableText(absl::string_view s);

// Text a peer sent (a version, a type URL, a name, a pattern) as an error
// message or a log line quotes it: PrintableText of its first `max_bytes`
// bytes (cut at a character boundary), followed by "... (N bytes)" when it
// is longer. One bound for every quote, so that a peer's megabyte string
// costs a log line or a NACK a few hundred bytes.
constexpr size_t kMaxQuotedBytes = 256;
MESH_INTERNAL_EXPORT std::string QuotedText(absl::string_view s,
                                            size_t max_bytes = kMaxQuotedBytes);

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_UTF8_H_

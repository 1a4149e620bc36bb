// TapHeaderRedactor: which header values a tap event must not show —
// kTapSensitiveHeaders plus the names a Mesh adds — and the copy that
// replaces them with kTapRedacted.
//
//   TapHeaderRedactor redactor({"x-api-key"});
//   redactor.Append(&request_headers, &event_headers);
//
// Immutable after construction: thread-safe.
#ifndef MESH_SRC_TAP_TAP_REDACTOR_H_
#define MESH_SRC_TAP_TAP_REDACTOR_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "mesh/tap.h"
#include "mesh/transport.h"

namespace mesh::internal {

class TapHeaderRedactor {
 public:
  // `extra`: header names (any case) redacted besides kTapSensitiveHeaders.
  explicit TapHeaderRedactor(std::vector<std::string> extra);

  // Appends `in` (may be null) to `out`, sensitive values replaced by
  // kTapRedacted.
  void Append(const Metadata* in, Metadata* out) const;

 private:
  bool Sensitive(absl::string_view name) const;

  std::vector<std::string> names_;  // lower case
};

}  // namespace mesh::internal

#endif  // MESH_SRC_TAP_TAP_REDACTOR_H_

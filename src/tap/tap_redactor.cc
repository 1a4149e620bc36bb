#include "src/tap/tap_redactor.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace mesh::internal {

TapHeaderRedactor::TapHeaderRedactor(std::vector<std::string> extra) {
  for (const char* name : kTapSensitiveHeaders) names_.emplace_back(name);
  for (std::string& name : extra) {
    names_.push_back(absl::AsciiStrToLower(name));
  }
}

void TapHeaderRedactor::Append(const Metadata* in, Metadata* out) const {
  if (in == nullptr) return;
  for (const auto& [name, value] : *in) {
    out->emplace_back(name, Sensitive(name) ? kTapRedacted : value);
  }
}

bool TapHeaderRedactor::Sensitive(absl::string_view name) const {
  for (const std::string& s : names_) {
    if (absl::EqualsIgnoreCase(s, name)) return true;
  }
  return false;
}

}  // namespace mesh::internal

#include "tools/mesh-control-plane/config_fields.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "src/base/utf8.h"
#include "src/model/http_syntax.h"

namespace mesh::controlplane {

using Type = JsonValue::Type;

absl::Status Bad(const JsonValue& v, const std::string& path,
                 absl::string_view problem) {
  // Printable: names and values from the file may hold any byte.
  return absl::InvalidArgumentError(
      absl::StrCat("line ", v.line, ": ", internal::PrintableText(path), ": ",
                   internal::PrintableText(problem)));
}

absl::Status Expect(const JsonValue& v, Type type, const std::string& path) {
  static const char* kNames[] = {"null",     "true or false", "a number",
                                 "a string", "an array",      "an object"};
  if (v.is(type)) return absl::OkStatus();
  return Bad(v, path,
             absl::StrCat("expected ", kNames[static_cast<int>(type)]));
}

absl::Status OnlyKeys(const JsonValue& object, const std::string& path,
                      std::initializer_list<absl::string_view> known) {
  for (const auto& [key, value] : object.object) {
    bool ok = false;
    for (absl::string_view k : known) ok |= key == k;
    if (!ok) return Bad(value, absl::StrCat(path, ".", key), "unknown field");
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Integer(const JsonValue& v, const std::string& path,
                                int64_t min, int64_t max) {
  if (absl::Status s = Expect(v, Type::kNumber, path); !s.ok()) return s;
  if (v.number != std::floor(v.number) || v.number < min || v.number > max) {
    return Bad(v, path,
               absl::StrCat("expected a whole number in ", min, "..", max));
  }
  return static_cast<int64_t>(v.number);
}

absl::StatusOr<std::string> StringField(const JsonValue& v,
                                        const std::string& path) {
  if (absl::Status s = Expect(v, Type::kString, path); !s.ok()) return s;
  return v.string;
}

// The pseudo-headers a condition may test; any other name starting with ':'
// is refused.
constexpr absl::string_view kMatchablePseudoHeaders[] = {
    ":authority", ":method", ":path", ":scheme"};

std::string HeaderNameProblem(const std::string& name) {
  if (name.empty()) return "a header name cannot be empty";
  if (name[0] == ':') {
    for (absl::string_view p : kMatchablePseudoHeaders) {
      if (name == p) return "";
    }
    return absl::StrCat("pseudo-header '", name,
                        "' cannot be matched (only :authority, :method, "
                        ":path, :scheme)");
  }
  if (!internal::IsHttpToken(name)) {
    return absl::StrCat("header name '", name,
                        "' holds a character not allowed in an HTTP token");
  }
  if (absl::AsciiStrToLower(name) != name) {
    return absl::StrCat("header name '", name,
                        "' must be lower case (HTTP/2 sends names in lower "
                        "case)");
  }
  return "";
}

}  // namespace mesh::controlplane

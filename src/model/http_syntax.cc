#include "src/model/http_syntax.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace mesh::internal {
namespace {

// Alphanumerics and the characters of `extra`, and not empty.
bool AllOf(absl::string_view s, absl::string_view extra) {
  if (s.empty()) return false;
  for (char c : s) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) continue;
    if (extra.find(c) == absl::string_view::npos) return false;
  }
  return true;
}

}  // namespace

bool IsHttpToken(absl::string_view s) { return AllOf(s, "!#$%&'*+-.^_`|~"); }

bool IsAuthority(absl::string_view s) {
  return AllOf(s, "-._~%!$&'()*+,;=:@[]");
}

bool IsMetadataName(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool IsPrintableHeaderValue(absl::string_view s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

absl::Status ValidateMethod(absl::string_view method) {
  size_t second = method.size() > 1 ? method.find('/', 1) : 0;
  if (method.empty() || method[0] != '/' || second == absl::string_view::npos ||
      second <= 1 || second + 1 >= method.size() ||
      method.find('/', second + 1) != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "method '", method, "' must look like /package.Service/Method"));
  }
  return absl::OkStatus();
}

absl::Status ValidateMetadata(const Metadata& metadata) {
  for (const auto& [name, value] : metadata) {
    if (!IsMetadataName(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metadata name '", name, "' must be lower case [0-9a-z_.-]"));
    }
    // gRPC and HTTP/2 own these; an application value would be dropped or
    // would corrupt the call.
    if (absl::StartsWith(name, "grpc-") || name == "content-type" ||
        name == "te" || name == "host" || name == "connection" ||
        name == "user-agent") {
      return absl::InvalidArgumentError(absl::StrCat(
          "metadata name '", name, "' is reserved by gRPC/HTTP/2"));
    }
    bool binary =
        name.size() > 4 && name.compare(name.size() - 4, 4, "-bin") == 0;
    if (!binary && !IsPrintableHeaderValue(value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metadata '", name,
          "' has a non-printable value; binary names end in -bin"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateHttpRequest(absl::string_view method,
                                 absl::string_view path,
                                 const Metadata& headers) {
  if (!IsHttpToken(method)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HTTP method '", absl::CHexEscape(method), "' is not a token"));
  }
  bool visible = !path.empty() && path[0] == '/';
  for (char c : path) visible &= c > 0x20 && c < 0x7f;
  if (!visible) {
    return absl::InvalidArgumentError(
        absl::StrCat("HTTP path '", absl::CHexEscape(path),
                     "' must start with '/' and be visible ASCII"));
  }
  for (const auto& [name, value] : headers) {
    if (!IsHttpToken(name) || name != absl::AsciiStrToLower(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("HTTP header name '", absl::CHexEscape(name),
                       "' must be a lower-case token"));
    }
    if (absl::string_view(value).find_first_of(
            absl::string_view("\r\n\0", 3)) != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "HTTP header '", name, "' has CR, LF or NUL in its value"));
    }
  }
  return absl::OkStatus();
}

absl::StatusCode GrpcCodeOfHttpStatus(uint32_t status) {
  switch (status) {
    case 400:
      return absl::StatusCode::kInternal;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kUnimplemented;
    case 429:
    case 502:
    case 503:
    case 504:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kUnknown;
  }
}

}  // namespace mesh::internal

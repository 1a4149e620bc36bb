#include "tools/common/grpc_codes.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace mesh::tools {
namespace {

// gRPC's codes are 0 (OK) .. 16 (UNAUTHENTICATED); Abseil names each of
// them as gRPC does.
constexpr int kLastCode = 16;

bool IsGrpcCode(int n) { return n >= 0 && n <= kLastCode; }

}  // namespace

std::string GrpcCodeName(absl::StatusCode code) {
  int n = static_cast<int>(code);
  if (!IsGrpcCode(n)) return absl::StrCat("CODE_", n);
  return absl::StatusCodeToString(code);
}

std::optional<absl::StatusCode> ParseGrpcCode(absl::string_view text) {
  // Not one variable for both: SimpleAtoi sets it to 0 when it fails.
  if (int n = 0; absl::SimpleAtoi(text, &n)) {
    if (!IsGrpcCode(n)) return std::nullopt;
    return static_cast<absl::StatusCode>(n);
  }
  const std::string upper = absl::AsciiStrToUpper(text);
  for (int i = 0; i <= kLastCode; ++i) {
    const auto code = static_cast<absl::StatusCode>(i);
    if (upper == absl::StatusCodeToString(code)) return code;
  }
  return std::nullopt;
}

}  // namespace mesh::tools

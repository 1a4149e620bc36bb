#include "tools/common/grpc_codes.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace mesh::tools {
namespace {

// Indexed by code number.
constexpr const char* kNames[] = {
    "OK",                   // 0
    "CANCELLED",            // 1
    "UNKNOWN",              // 2
    "INVALID_ARGUMENT",     // 3
    "DEADLINE_EXCEEDED",    // 4
    "NOT_FOUND",            // 5
    "ALREADY_EXISTS",       // 6
    "PERMISSION_DENIED",    // 7
    "RESOURCE_EXHAUSTED",   // 8
    "FAILED_PRECONDITION",  // 9
    "ABORTED",              // 10
    "OUT_OF_RANGE",         // 11
    "UNIMPLEMENTED",        // 12
    "INTERNAL",             // 13
    "UNAVAILABLE",          // 14
    "DATA_LOSS",            // 15
    "UNAUTHENTICATED",      // 16
};
constexpr int kCodeCount = sizeof(kNames) / sizeof(kNames[0]);
static_assert(kCodeCount == 17, "gRPC has 17 status codes");

}  // namespace

std::string GrpcCodeName(absl::StatusCode code) {
  int n = static_cast<int>(code);
  if (n < 0 || n >= kCodeCount) return absl::StrCat("CODE_", n);
  return kNames[n];
}

std::optional<absl::StatusCode> ParseGrpcCode(absl::string_view text) {
  int n = -1;
  if (!absl::SimpleAtoi(text, &n)) {
    std::string upper = absl::AsciiStrToUpper(text);
    for (int i = 0; i < kCodeCount; ++i) {
      if (upper == kNames[i]) n = i;
    }
  }
  if (n < 0 || n >= kCodeCount) return std::nullopt;
  return static_cast<absl::StatusCode>(n);
}

}  // namespace mesh::tools

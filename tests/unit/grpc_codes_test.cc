// gRPC status code names (tools/common/grpc_codes.h): every code's name,
// numbers outside gRPC's codes, and parsing names in any case or numbers.
#include "tools/common/grpc_codes.h"

#include <string>

#include "gtest/gtest.h"

namespace mesh::tools {
namespace {

// As the gRPC spec (doc/statuscodes.md) spells them, by number.
constexpr const char* kSpecNames[] = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

TEST(GrpcCodeName, NamesEveryCodeAsTheSpec) {
  for (int n = 0; n <= 16; ++n) {
    EXPECT_EQ(GrpcCodeName(static_cast<absl::StatusCode>(n)), kSpecNames[n]);
  }
}

TEST(GrpcCodeName, OtherNumbersAreShownAsNumbers) {
  EXPECT_EQ(GrpcCodeName(static_cast<absl::StatusCode>(17)), "CODE_17");
  EXPECT_EQ(GrpcCodeName(static_cast<absl::StatusCode>(-1)), "CODE_-1");
  EXPECT_EQ(GrpcCodeName(static_cast<absl::StatusCode>(1000)), "CODE_1000");
}

TEST(ParseGrpcCode, NamesInAnyCaseAndNumbers) {
  for (int n = 0; n <= 16; ++n) {
    const auto code = static_cast<absl::StatusCode>(n);
    EXPECT_EQ(ParseGrpcCode(kSpecNames[n]), code) << n;
    EXPECT_EQ(ParseGrpcCode(std::to_string(n)), code) << n;
  }
  EXPECT_EQ(ParseGrpcCode("deadline_exceeded"),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(ParseGrpcCode("Unavailable"), absl::StatusCode::kUnavailable);
}

TEST(ParseGrpcCode, AnythingElseIsNone) {
  for (const char* bad : {"", "17", "-1", "CODE_3", "UNAVAILABLE ", "ok!",
                          "DEADLINE EXCEEDED", "1.0"}) {
    EXPECT_EQ(ParseGrpcCode(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace mesh::tools

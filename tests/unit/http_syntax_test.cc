// src/model/http_syntax.h: the one place where header syntax is checked —
// tokens, authorities, metadata names and values, gRPC method paths.
#include "src/model/http_syntax.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

using ::testing::HasSubstr;

TEST(HttpSyntaxTest, Tokens) {
  EXPECT_TRUE(IsHttpToken("GET"));
  EXPECT_TRUE(IsHttpToken("X-CUSTOM_1!"));
  EXPECT_FALSE(IsHttpToken(""));
  EXPECT_FALSE(IsHttpToken("GET POST"));
  EXPECT_FALSE(IsHttpToken("a/b"));
}

TEST(HttpSyntaxTest, Authorities) {
  EXPECT_TRUE(IsAuthority("books.default.svc:7001"));
  EXPECT_TRUE(IsAuthority("[::1]:80"));
  EXPECT_FALSE(IsAuthority(""));
  EXPECT_FALSE(IsAuthority("books svc"));
  EXPECT_FALSE(IsAuthority("books/evil"));
  EXPECT_FALSE(IsAuthority("books\n"));
}

TEST(HttpSyntaxTest, MetadataNamesAndValues) {
  EXPECT_TRUE(IsMetadataName("x-request-id"));
  EXPECT_FALSE(IsMetadataName("X-Request-Id"));
  EXPECT_FALSE(IsMetadataName(":path"));
  EXPECT_FALSE(IsMetadataName(""));
  EXPECT_TRUE(IsPrintableHeaderValue("abc 123 ~"));
  EXPECT_FALSE(IsPrintableHeaderValue("a\x01"));
  EXPECT_FALSE(IsPrintableHeaderValue("caf\xc3\xa9"));
}

TEST(HttpSyntaxTest, ValidateMetadataNamesTheProblem) {
  EXPECT_TRUE(
      ValidateMetadata({{"x-id", "1"}, {"trace-bin", "\x01\x02"}}).ok());
  EXPECT_THAT(ValidateMetadata({{"X-Id", "1"}}).message(),
              HasSubstr("must be lower case"));
  EXPECT_THAT(ValidateMetadata({{"grpc-timeout", "1S"}}).message(),
              HasSubstr("reserved"));
  EXPECT_THAT(ValidateMetadata({{"x-id", "a\nb"}}).message(),
              HasSubstr("non-printable"));
}

TEST(HttpSyntaxTest, ValidateMethodWantsPackageServiceAndMethod) {
  EXPECT_TRUE(ValidateMethod("/books.Library/GetBook").ok());
  for (const char* bad : {"", "books.Library/GetBook", "/books.Library",
                          "//GetBook", "/books.Library/", "/a/b/c"}) {
    EXPECT_EQ(ValidateMethod(bad).code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace mesh::internal

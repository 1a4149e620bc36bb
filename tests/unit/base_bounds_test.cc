// The bounds src/base puts on what a peer's input can cost: JSON nesting
// walked linearly before a parser sees it, quotes of peer text cut at 256
// bytes, and repeated log lines one a period.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/base/json_shape.h"
#include "src/base/log_limiter.h"
#include "src/base/utf8.h"
#include "tests/support/fake_clock.h"

namespace mesh::internal {
namespace {

using ::testing::HasSubstr;

std::string Nested(int depth, char open, char close) {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(JsonShapeTest, NestingUpToTheBoundPassesAndOneMoreIsRefusedWhereItIs) {
  EXPECT_TRUE(CheckJsonShape(Nested(64, '[', ']'), {64}).ok());
  absl::Status deep = CheckJsonShape(Nested(65, '[', ']'), {64});
  EXPECT_EQ(deep.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(deep.message(),
            "arrays and objects nested deeper than 64 (at byte 64)");
  // Objects and arrays count alike.
  std::string mixed;
  for (int i = 0; i < 40; ++i) mixed += "{\"a\":[";
  EXPECT_THAT(CheckJsonShape(mixed, {64}).message(), HasSubstr("deeper"));
}

TEST(JsonShapeTest, BracketsInsideStringsDoNotCount) {
  const std::string text =
      absl::StrCat("{\"k\": \"", std::string(1000, '['), "\\\"[\\\\\"}");
  EXPECT_TRUE(CheckJsonShape(text, {2}).ok()) << CheckJsonShape(text, {2});
  // After the string closes, brackets count again.
  EXPECT_FALSE(CheckJsonShape(absl::StrCat("[\"[[[\", [[]]]"), {2}).ok());
}

TEST(JsonShapeTest, AHundredThousandDeepIsRefusedAtTheBound) {
  // Protobuf's JSON reader costs time quadratic in this; the walk stops at
  // the 65th bracket.
  absl::Status s = CheckJsonShape(Nested(100'000, '[', ']'), {64});
  EXPECT_THAT(s.message(), HasSubstr("(at byte 64)"));
}

TEST(JsonShapeTest, BytesThatAreNotUtf8AreNamedEscapedOnOneLine) {
  absl::Status s = CheckJsonShape("{\"a\": \"\xff\n\"}", {64});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "not valid UTF-8 (byte \\xff at offset 7)");
}

TEST(QuotedTextTest, ShortTextIsPrintableAndLongTextCutWithItsSize) {
  EXPECT_EQ(QuotedText("v1\n"), "v1\\x0a");
  const std::string exact(kMaxQuotedBytes, 'a');
  EXPECT_EQ(QuotedText(exact), exact);
  const std::string long_text(1 << 20, 'v');
  EXPECT_EQ(QuotedText(long_text),
            absl::StrCat(std::string(256, 'v'), "... (1048576 bytes)"));
  EXPECT_EQ(QuotedText("abcdef", 3), "abc... (6 bytes)");
}

TEST(QuotedTextTest, TheCutNeverSplitsACharacter) {
  // "é" is two bytes: a cut after 3 bytes of "aéé" keeps "aé".
  EXPECT_EQ(QuotedText("a\xc3\xa9\xc3\xa9", 4), "a\xc3\xa9... (5 bytes)");
  EXPECT_EQ(QuotedText("a\xc3\xa9\xc3\xa9", 2), "a... (5 bytes)");
}

TEST(LogLimiterTest, FirstLineThenOneAPeriodWithTheCountHeldBack) {
  testing::FakeClock clock;
  LogLimiter limiter(absl::Seconds(10), &clock);
  uint64_t held = 99;
  ASSERT_TRUE(limiter.Admit("nack", &held));
  EXPECT_EQ(held, 0u);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(limiter.Admit("nack", &held));
  // Another kind has its own period.
  EXPECT_TRUE(limiter.Admit("unknown type", &held));
  clock.Advance(absl::Seconds(9));
  EXPECT_FALSE(limiter.Admit("nack", &held));
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(limiter.Admit("nack", &held));
  EXPECT_EQ(held, 6u);
  EXPECT_EQ(LogLimiter::HeldBack(held),
            " (6 more like it since the last such line)");
  EXPECT_EQ(LogLimiter::HeldBack(0), "");
}

TEST(LogLimiterTest, KindsPastTheBoundShareOneCount) {
  testing::FakeClock clock;
  LogLimiter limiter(absl::Seconds(10), &clock);
  uint64_t held = 0;
  for (size_t i = 0; i < LogLimiter::kMaxKeys; ++i) {
    ASSERT_TRUE(limiter.Admit(absl::StrCat("kind ", i), &held));
  }
  EXPECT_TRUE(limiter.Admit("one more", &held));
  EXPECT_FALSE(limiter.Admit("and another", &held));
}

}  // namespace
}  // namespace mesh::internal

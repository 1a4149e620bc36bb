// The text primitives of src/base: UTF-8 checks, printable text for logs,
// and the one JSON string writer.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <string>

#include "gtest/gtest.h"
#include "src/base/json_string.h"
#include "src/base/utf8.h"

namespace mesh::internal {
namespace {

TEST(Utf8Test, ValidAndInvalidSequences) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xc2\xb5 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_TRUE(IsValidUtf8(std::string("nul\0inside", 10)));
  // A lone continuation byte, a truncated sequence, an overlong form, a
  // surrogate, a code point above U+10FFFF, a byte that never appears.
  EXPECT_EQ(FirstInvalidUtf8("ab\x80"), 2u);
  EXPECT_EQ(FirstInvalidUtf8("a\xe2\x82"), 1u);
  EXPECT_EQ(FirstInvalidUtf8("\xc0\xaf"), 0u);
  EXPECT_EQ(FirstInvalidUtf8("xy\xed\xa0\x80"), 2u);
  EXPECT_EQ(FirstInvalidUtf8("\xf4\x90\x80\x80"), 0u);
  EXPECT_EQ(FirstInvalidUtf8("ok \xff"), 3u);
}

TEST(Utf8Test, PrintableTextKeepsUtf8AndEscapesTheRest) {
  EXPECT_EQ(PrintableText("zone \xe2\x82\xac"), "zone \xe2\x82\xac");
  EXPECT_EQ(PrintableText(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(PrintableText("\x7f\n\xff"), "\\x7f\\x0a\\xff");
  EXPECT_EQ(PrintableText("\xe2\x82"), "\\xe2\\x82");
}

TEST(JsonStringTest, Escaping) {
  EXPECT_EQ(JsonString(""), R"("")");
  EXPECT_EQ(JsonString("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonString("\n\r\t"), R"("\n\r\t")");
  EXPECT_EQ(JsonString(std::string("\0\x01\x1f\x7f", 4)),
            "\"\\u0000\\u0001\\u001f\\u007f\"");
  EXPECT_EQ(JsonString("1234\xc2\xb5s \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"1234\xc2\xb5s \xe2\x82\xac \xf0\x9f\x98\x80\"");
  // Not UTF-8: each bad byte becomes U+FFFD.
  EXPECT_EQ(JsonString("\x80"), R"("\ufffd")");
  EXPECT_EQ(JsonString("a\xe2\x82"), R"("a\ufffd\ufffd")");
  EXPECT_EQ(JsonString("\xc0\xaf"), R"("\ufffd\ufffd")");
  EXPECT_EQ(JsonString("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");
  EXPECT_EQ(JsonString("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");
}

// Every byte string of up to two bytes, written and read back by protobuf's
// JSON parser (an independent reader that insists on UTF-8).
TEST(JsonStringTest, EveryShortByteStringIsValidJson) {
  for (int a = -1; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      std::string text;
      if (a >= 0) text.push_back(static_cast<char>(a));
      text.push_back(static_cast<char>(b));
      google::protobuf::Value value;
      auto status =
          google::protobuf::util::JsonStringToMessage(JsonString(text), &value);
      ASSERT_TRUE(status.ok()) << status << " for bytes " << a << " " << b;
      ASSERT_EQ(value.kind_case(), google::protobuf::Value::kStringValue);
      if (IsValidUtf8(text)) {
        EXPECT_EQ(value.string_value(), text);
      }
    }
  }
}

}  // namespace
}  // namespace mesh::internal

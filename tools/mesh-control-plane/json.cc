#include "tools/mesh-control-plane/json.h"

#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "src/base/utf8.h"

namespace mesh::controlplane {
namespace {

using internal::FirstInvalidUtf8;
using internal::PrintableText;

class Parser {
 public:
  Parser(absl::string_view text, int64_t max_values)
      : text_(text), max_values_(max_values) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    absl::StatusOr<JsonValue> v = ParseValue(0);
    if (!v.ok()) return v;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("line ", line_, ": ", what));
  }

  void SkipSpace() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '\n') {
        ++line_;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      ++pos_;
    }
  }

  bool Consume(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  // Where the parser is, for errors: keys and indices from the top, e.g.
  // targets["books:7001"].endpoints[1].labels.zone. Made only on error.
  struct Segment {
    std::string key;  // empty with an index
    int64_t index = -1;
  };

  std::string Path() const {
    std::string out;
    for (const Segment& s : path_) {
      if (s.index >= 0) {
        absl::StrAppend(&out, "[", s.index, "]");
        continue;
      }
      bool plain = !s.key.empty();
      for (char c : s.key) plain &= absl::ascii_isalnum(c) || c == '_';
      if (plain) {
        absl::StrAppend(&out, out.empty() ? "" : ".", s.key);
      } else {
        absl::StrAppend(&out, "[\"", PrintableText(s.key), "\"]");
      }
    }
    return out.empty() ? "the document" : out;
  }

  absl::StatusOr<JsonValue> ParseValue(int depth) {
    if (depth > kMaxDepth) return Error("nesting deeper than 64 levels");
    if (++values_ > max_values_) {
      return Error(absl::StrCat("more than ", max_values_,
                                " values; the file is too large to serve"));
    }
    SkipSpace();
    JsonValue v;
    v.line = line_;
    if (pos_ >= text_.size())
      return Error("unexpected end of file, expected a value");
    char c = text_[pos_];
    if (c == '{') return ParseObject(std::move(v), depth);
    if (c == '[') return ParseArray(std::move(v), depth);
    if (c == '"') {
      absl::StatusOr<std::string> s = ParseString("a string");
      if (!s.ok()) return s.status();
      v.type = JsonValue::Type::kString;
      v.string = *std::move(s);
      return v;
    }
    if (Consume("true") || Consume("false")) {
      v.type = JsonValue::Type::kBool;
      v.boolean = c == 't';
      return v;
    }
    if (Consume("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(std::move(v));
    return Error(absl::StrCat("unexpected '", PrintableText(std::string(1, c)),
                              "', expected a value"));
  }

  absl::StatusOr<JsonValue> ParseNumber(JsonValue v) {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           absl::string_view("+-0123456789.eE").find(text_[pos_]) !=
               absl::string_view::npos) {
      ++pos_;
    }
    std::string digits(text_.substr(start, pos_ - start));
    char* end = nullptr;
    v.number = std::strtod(digits.c_str(), &end);
    if (end != digits.c_str() + digits.size()) {
      return Error(
          absl::StrCat("'", PrintableText(digits), "' is not a number"));
    }
    v.type = JsonValue::Type::kNumber;
    return v;
  }

  // A string, which must be UTF-8 (protobuf's `string` fields are, and a
  // peer fails to parse a message with one that is not) and without raw
  // control characters (JSON's rule). `what`: "a key" or "a string".
  absl::StatusOr<std::string> ParseString(absl::string_view what) {
    ++pos_;  // the opening quote
    std::string out;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') {
        size_t bad = FirstInvalidUtf8(out);
        if (bad != absl::string_view::npos) {
          return Error(absl::StrCat(
              Path(), ": ", what, " is not valid UTF-8 (byte 0x",
              absl::Hex(static_cast<unsigned char>(out[bad]), absl::kZeroPad2),
              " at offset ", bad, ")"));
        }
        return out;
      }
      if (c == '\n') return Error("newline inside a string");
      if (static_cast<unsigned char>(c) < 0x20) {
        return Error(absl::StrCat(
            Path(), ": ", what, " holds the raw control character 0x",
            absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2),
            " (write it escaped)"));
      }
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        default:
          // \uXXXX is not needed for addresses, names and regexes.
          return Error(absl::StrCat("unsupported escape '\\",
                                    PrintableText(std::string(1, e)), "'"));
      }
    }
    return Error("unterminated string");
  }

  absl::StatusOr<JsonValue> ParseArray(JsonValue v, int depth) {
    v.type = JsonValue::Type::kArray;
    ++pos_;
    SkipSpace();
    if (Consume("]")) return v;
    for (;;) {
      path_.push_back({"", static_cast<int64_t>(v.array.size())});
      absl::StatusOr<JsonValue> item = ParseValue(depth + 1);
      path_.pop_back();
      if (!item.ok()) return item;
      v.array.push_back(*std::move(item));
      SkipSpace();
      if (Consume(",")) continue;
      if (Consume("]")) return v;
      return Error("expected ',' or ']' in an array");
    }
  }

  absl::StatusOr<JsonValue> ParseObject(JsonValue v, int depth) {
    v.type = JsonValue::Type::kObject;
    ++pos_;
    SkipSpace();
    if (Consume("}")) return v;
    for (;;) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        return Error("expected a quoted key in an object");
      }
      absl::StatusOr<std::string> key = ParseString("a key");
      if (!key.ok()) return key.status();
      SkipSpace();
      if (!Consume(":")) {
        return Error(absl::StrCat("expected ':' after key \"",
                                  PrintableText(*key), "\""));
      }
      path_.push_back({*key, -1});
      absl::StatusOr<JsonValue> item = ParseValue(depth + 1);
      path_.pop_back();
      if (!item.ok()) return item;
      if (!v.object.emplace(*key, *std::move(item)).second) {
        return Error(
            absl::StrCat("key \"", PrintableText(*key), "\" appears twice"));
      }
      SkipSpace();
      if (Consume(",")) continue;
      if (Consume("}")) return v;
      return Error("expected ',' or '}' in an object");
    }
  }

  absl::string_view text_;
  const int64_t max_values_;
  int64_t values_ = 0;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Segment> path_;
};

}  // namespace

absl::StatusOr<JsonValue> ParseJson(absl::string_view text,
                                    int64_t max_values) {
  return Parser(text, max_values).ParseDocument();
}

}  // namespace mesh::controlplane

#include "examples/control-plane/json.h"

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"

namespace mesh::controlplane {
namespace {

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

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

  absl::StatusOr<JsonValue> ParseValue(int depth) {
    if (depth > kMaxDepth) return Error("nesting deeper than 64 levels");
    SkipSpace();
    JsonValue v;
    v.line = line_;
    if (pos_ >= text_.size())
      return Error("unexpected end of file, expected a value");
    char c = text_[pos_];
    if (c == '{') return ParseObject(std::move(v), depth);
    if (c == '[') return ParseArray(std::move(v), depth);
    if (c == '"') {
      absl::StatusOr<std::string> s = ParseString();
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
    return Error(
        absl::StrCat("unexpected '", std::string(1, c), "', expected a value"));
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
      return Error(absl::StrCat("'", digits, "' is not a number"));
    }
    v.type = JsonValue::Type::kNumber;
    return v;
  }

  absl::StatusOr<std::string> ParseString() {
    ++pos_;  // the opening quote
    std::string out;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c == '\n') return Error("newline inside a string");
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
          return Error(
              absl::StrCat("unsupported escape '\\", std::string(1, e), "'"));
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
      absl::StatusOr<JsonValue> item = ParseValue(depth + 1);
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
      absl::StatusOr<std::string> key = ParseString();
      if (!key.ok()) return key.status();
      SkipSpace();
      if (!Consume(":"))
        return Error(absl::StrCat("expected ':' after key \"", *key, "\""));
      absl::StatusOr<JsonValue> item = ParseValue(depth + 1);
      if (!item.ok()) return item;
      if (!v.object.emplace(*key, *std::move(item)).second) {
        return Error(absl::StrCat("key \"", *key, "\" appears twice"));
      }
      SkipSpace();
      if (Consume(",")) continue;
      if (Consume("}")) return v;
      return Error("expected ',' or '}' in an object");
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

absl::StatusOr<JsonValue> ParseJson(absl::string_view text) {
  return Parser(text).ParseDocument();
}

}  // namespace mesh::controlplane

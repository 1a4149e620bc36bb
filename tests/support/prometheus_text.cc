#include "tests/support/prometheus_text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace mesh::testing {

const PrometheusFamily* PrometheusText::Family(absl::string_view name) const {
  for (const PrometheusFamily& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

std::vector<const PrometheusSample*> PrometheusText::Samples(
    absl::string_view sample_name, const PrometheusLabels& subset) const {
  std::vector<const PrometheusSample*> found;
  for (const PrometheusFamily& family : families) {
    for (const PrometheusSample& sample : family.samples) {
      if (sample.name != sample_name) continue;
      bool matches =
          std::all_of(subset.begin(), subset.end(), [&](const auto& wanted) {
            auto it = sample.labels.find(wanted.first);
            return it != sample.labels.end() && it->second == wanted.second;
          });
      if (matches) found.push_back(&sample);
    }
  }
  return found;
}

std::optional<double> PrometheusText::Value(
    absl::string_view sample_name, const PrometheusLabels& subset) const {
  std::vector<const PrometheusSample*> found = Samples(sample_name, subset);
  if (found.empty()) return std::nullopt;
  double sum = 0;
  for (const PrometheusSample* sample : found) sum += sample->value;
  return sum;
}

namespace {

absl::Status LineError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
}

bool IsMetricNameStart(char c) {
  return absl::ascii_isalpha(c) || c == '_' || c == ':';
}
bool IsMetricNameChar(char c) {
  return IsMetricNameStart(c) || absl::ascii_isdigit(c);
}
bool IsLabelNameStart(char c) { return absl::ascii_isalpha(c) || c == '_'; }
bool IsLabelNameChar(char c) {
  return IsLabelNameStart(c) || absl::ascii_isdigit(c);
}

// Reads a name of the given alphabet from the front of `rest`.
template <typename Start, typename Char>
absl::string_view TakeName(absl::string_view& rest, Start start, Char more) {
  if (rest.empty() || !start(rest[0])) return {};
  size_t n = 1;
  while (n < rest.size() && more(rest[n])) ++n;
  absl::string_view name = rest.substr(0, n);
  rest.remove_prefix(n);
  return name;
}

void SkipBlanks(absl::string_view& rest) {
  while (!rest.empty() && (rest[0] == ' ' || rest[0] == '\t')) {
    rest.remove_prefix(1);
  }
}

// A float as the format spells it, "+Inf", "-Inf" and "NaN" included.
std::optional<double> ParseValue(absl::string_view token) {
  if (token == "+Inf" || token == "Inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (token == "-Inf") return -std::numeric_limits<double>::infinity();
  if (token == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (token.empty()) return std::nullopt;
  std::string copy(token);
  char* end = nullptr;
  double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return value;
}

// HELP text: `\\` and `\n` are the escapes.
std::string UnescapeHelp(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() &&
        (s[i + 1] == '\\' || s[i + 1] == 'n')) {
      out += s[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

class Parser {
 public:
  absl::StatusOr<PrometheusText> Parse(absl::string_view text) {
    int line_number = 0;
    std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
    for (absl::string_view line : lines) {
      ++line_number;
      absl::Status status = ParseLine(line_number, line);
      if (!status.ok()) return status;
    }
    for (const PrometheusFamily& family : result_.families) {
      if (family.type != "histogram") continue;
      absl::Status status = CheckHistogram(family);
      if (!status.ok()) return status;
    }
    return std::move(result_);
  }

 private:
  absl::Status ParseLine(int n, absl::string_view line) {
    absl::string_view rest = line;
    SkipBlanks(rest);
    if (rest.empty()) return absl::OkStatus();
    if (rest[0] == '#') return ParseComment(n, rest.substr(1));
    return ParseSample(n, rest);
  }

  // `# HELP name text`, `# TYPE name type`, or a comment.
  absl::Status ParseComment(int n, absl::string_view rest) {
    SkipBlanks(rest);
    bool help =
        absl::StartsWith(rest, "HELP ") || absl::StartsWith(rest, "HELP\t");
    bool type =
        absl::StartsWith(rest, "TYPE ") || absl::StartsWith(rest, "TYPE\t");
    if (!help && !type) return absl::OkStatus();
    rest.remove_prefix(4);
    SkipBlanks(rest);
    absl::string_view name =
        TakeName(rest, IsMetricNameStart, IsMetricNameChar);
    if (name.empty() || (!rest.empty() && rest[0] != ' ' && rest[0] != '\t')) {
      return LineError(n, "bad metric name in HELP/TYPE line");
    }
    SkipBlanks(rest);
    PrometheusFamily& family = FamilyForMetadata(name);
    if (!family.samples.empty() || closed_.count(family.name) > 0) {
      return LineError(n, absl::StrCat("HELP/TYPE for '", name,
                                       "' after its samples or apart from "
                                       "its family's other lines"));
    }
    if (help) {
      if (seen_help_.count(family.name) > 0) {
        return LineError(n, absl::StrCat("second HELP for '", name, "'"));
      }
      seen_help_.insert(family.name);
      family.help = UnescapeHelp(rest);
      return absl::OkStatus();
    }
    absl::string_view kind = absl::StripTrailingAsciiWhitespace(rest);
    if (kind != "counter" && kind != "gauge" && kind != "histogram" &&
        kind != "summary" && kind != "untyped") {
      return LineError(n, absl::StrCat("unknown type '", kind, "'"));
    }
    if (!family.type.empty()) {
      return LineError(n, absl::StrCat("second TYPE for '", name, "'"));
    }
    family.type = std::string(kind);
    return absl::OkStatus();
  }

  PrometheusFamily& FamilyForMetadata(absl::string_view name) {
    auto [it, inserted] =
        index_.try_emplace(std::string(name), result_.families.size());
    if (inserted) {
      result_.families.push_back(
          PrometheusFamily{std::string(name), "", "", {}});
    }
    SwitchTo(it->second);
    return result_.families[it->second];
  }

  // Marks the family written so far closed when another one starts.
  void SwitchTo(size_t family) {
    if (current_ && *current_ != family) {
      closed_.insert(result_.families[*current_].name);
    }
    current_ = family;
  }

  // The typed family a sample named `name` belongs to: its own, or for
  // x_bucket / x_sum / x_count that of a histogram (or summary) x.
  std::optional<size_t> FamilyOfSample(absl::string_view name) const {
    auto typed = [&](absl::string_view family) -> std::optional<size_t> {
      auto it = index_.find(std::string(family));
      if (it == index_.end() || result_.families[it->second].type.empty()) {
        return std::nullopt;
      }
      return it->second;
    };
    if (auto own = typed(name)) return own;
    for (absl::string_view suffix : {"_bucket", "_sum", "_count"}) {
      if (!absl::EndsWith(name, suffix)) continue;
      auto base = typed(name.substr(0, name.size() - suffix.size()));
      if (!base) continue;
      const std::string& type = result_.families[*base].type;
      if (type == "histogram" || (type == "summary" && suffix != "_bucket")) {
        return base;
      }
    }
    return std::nullopt;
  }

  // name[{label="value",...}] value [timestamp]
  absl::Status ParseSample(int n, absl::string_view rest) {
    PrometheusSample sample;
    sample.line = n;
    absl::string_view name =
        TakeName(rest, IsMetricNameStart, IsMetricNameChar);
    if (name.empty() || (!rest.empty() && rest[0] != '{' && rest[0] != ' ' &&
                         rest[0] != '\t')) {
      return LineError(n, "bad metric name");
    }
    sample.name = std::string(name);
    SkipBlanks(rest);
    if (!rest.empty() && rest[0] == '{') {
      rest.remove_prefix(1);
      absl::Status status = ParseLabels(n, rest, sample.labels);
      if (!status.ok()) return status;
    }
    std::vector<absl::string_view> fields =
        absl::StrSplit(rest, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.empty() || fields.size() > 2) {
      return LineError(n, "expected a value and an optional timestamp");
    }
    std::optional<double> value = ParseValue(fields[0]);
    if (!value) {
      return LineError(n, absl::StrCat("bad value '", fields[0], "'"));
    }
    int64_t timestamp;
    if (fields.size() == 2 && !absl::SimpleAtoi(fields[1], &timestamp)) {
      return LineError(n, absl::StrCat("bad timestamp '", fields[1], "'"));
    }
    sample.value = *value;

    std::optional<size_t> family = FamilyOfSample(sample.name);
    if (!family) {
      return LineError(n, absl::StrCat("sample '", sample.name,
                                       "' has no TYPE line before it"));
    }
    PrometheusFamily& f = result_.families[*family];
    if (closed_.count(f.name) > 0) {
      return LineError(
          n, absl::StrCat("samples of '", f.name, "' are not together"));
    }
    SwitchTo(*family);
    if (!series_.insert({sample.name, sample.labels}).second) {
      return LineError(n, absl::StrCat("second sample of the same series of '",
                                       sample.name, "'"));
    }
    f.samples.push_back(std::move(sample));
    return absl::OkStatus();
  }

  // After the '{': label="value" pairs up to the '}' (a trailing comma
  // allowed); values take the escapes \\ \" \n.
  absl::Status ParseLabels(int n, absl::string_view& rest,
                           PrometheusLabels& labels) {
    while (true) {
      SkipBlanks(rest);
      if (!rest.empty() && rest[0] == '}') {
        rest.remove_prefix(1);
        return absl::OkStatus();
      }
      absl::string_view name =
          TakeName(rest, IsLabelNameStart, IsLabelNameChar);
      if (name.empty()) return LineError(n, "bad label name");
      SkipBlanks(rest);
      if (rest.empty() || rest[0] != '=') {
        return LineError(n,
                         absl::StrCat("expected '=' after label '", name, "'"));
      }
      rest.remove_prefix(1);
      SkipBlanks(rest);
      if (rest.empty() || rest[0] != '"') {
        return LineError(
            n, absl::StrCat("expected '\"' to open label '", name, "'"));
      }
      rest.remove_prefix(1);
      std::string value;
      bool closed = false;
      while (!rest.empty()) {
        char c = rest[0];
        rest.remove_prefix(1);
        if (c == '"') {
          closed = true;
          break;
        }
        if (c != '\\') {
          value += c;
          continue;
        }
        if (rest.empty()) break;
        char escaped = rest[0];
        rest.remove_prefix(1);
        if (escaped == 'n') {
          value += '\n';
        } else if (escaped == '\\' || escaped == '"') {
          value += escaped;
        } else {
          return LineError(
              n, absl::StrCat("bad escape '\\", std::string(1, escaped),
                              "' in label '", name, "'"));
        }
      }
      if (!closed) {
        return LineError(
            n, absl::StrCat("unterminated value of label '", name, "'"));
      }
      if (!labels.emplace(std::string(name), std::move(value)).second) {
        return LineError(n, absl::StrCat("label '", name, "' twice"));
      }
      SkipBlanks(rest);
      if (!rest.empty() && rest[0] == ',') {
        rest.remove_prefix(1);
      } else if (rest.empty() || rest[0] != '}') {
        return LineError(n, "expected ',' or '}' after a label");
      }
    }
  }

  // Per label set (le aside): buckets non-decreasing in le order, a +Inf
  // bucket, and +Inf == _count.
  static absl::Status CheckHistogram(const PrometheusFamily& family) {
    struct Series {
      std::vector<std::pair<double, const PrometheusSample*>> buckets;
      const PrometheusSample* count = nullptr;
    };
    std::map<PrometheusLabels, Series> series;
    for (const PrometheusSample& sample : family.samples) {
      if (sample.name == family.name + "_bucket") {
        PrometheusLabels rest = sample.labels;
        auto le = rest.find("le");
        if (le == rest.end()) {
          return LineError(sample.line, "histogram bucket without 'le'");
        }
        std::optional<double> bound = ParseValue(le->second);
        if (!bound || std::isnan(*bound)) {
          return LineError(sample.line,
                           absl::StrCat("bad le \"", le->second, "\""));
        }
        rest.erase(le);
        series[rest].buckets.emplace_back(*bound, &sample);
      } else if (sample.name == family.name + "_count") {
        series[sample.labels].count = &sample;
      }
    }
    for (auto& [labels, s] : series) {
      std::stable_sort(
          s.buckets.begin(), s.buckets.end(),
          [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t i = 1; i < s.buckets.size(); ++i) {
        if (s.buckets[i].second->value < s.buckets[i - 1].second->value) {
          return LineError(
              s.buckets[i].second->line,
              absl::StrCat("histogram '", family.name,
                           "' is not cumulative: le=\"",
                           s.buckets[i].second->labels.at("le"), "\" counts ",
                           s.buckets[i].second->value, " < ",
                           s.buckets[i - 1].second->value));
        }
      }
      if (s.buckets.empty() ||
          s.buckets.back().first != std::numeric_limits<double>::infinity()) {
        int line =
            s.buckets.empty() ? s.count->line : s.buckets.back().second->line;
        return LineError(line, absl::StrCat("histogram '", family.name,
                                            "' has no le=\"+Inf\" bucket"));
      }
      const PrometheusSample* inf = s.buckets.back().second;
      if (s.count == nullptr) {
        return LineError(inf->line, absl::StrCat("histogram '", family.name,
                                                 "' has no _count"));
      }
      if (s.count->value != inf->value) {
        return LineError(
            s.count->line,
            absl::StrCat("histogram '", family.name, "' _count ",
                         s.count->value, " != +Inf bucket ", inf->value));
      }
    }
    return absl::OkStatus();
  }

  PrometheusText result_;
  absl::flat_hash_map<std::string, size_t> index_;  // family name → index
  std::set<std::string> closed_;     // families another one followed
  std::set<std::string> seen_help_;  // families with a HELP line
  std::set<std::pair<std::string, PrometheusLabels>> series_;
  std::optional<size_t> current_;  // the family being written
};

}  // namespace

absl::StatusOr<PrometheusText> ParsePrometheusText(absl::string_view text) {
  return Parser().Parse(text);
}

}  // namespace mesh::testing

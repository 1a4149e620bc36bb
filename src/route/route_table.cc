#include "src/route/route_table.h"

#include <re2/re2.h>

#include <algorithm>
#include <optional>

#include "absl/random/distributions.h"
#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/base/utf8.h"
#include "src/model/http_syntax.h"
#include "src/route/retry_policy.h"

namespace mesh::internal {

// A compiled RequestMatch: the same tree, with regexes ready to run.
struct RouteTable::Node {
  RequestMatch::Kind kind = RequestMatch::Kind::kAll;
  std::vector<Node> children;
  std::unique_ptr<re2::RE2> regex;  // kPath, kHeader/kQueryParam kRegex
  std::string method;               // kMethod
  HeaderMatch header;               // kHeader, kQueryParam; its value lower
                                    // case if ignore_case
  std::string path;                 // kPathPrefix, kPathExact; lower case if
                                    // !case_sensitive
  bool case_sensitive = true;
  uint32_t per_million = 0;  // kFraction
};

struct RouteTable::Entry {
  Node condition;
  CompiledRoute route;
};

namespace {

// Hash policies kept per route (xDS sends one or two).
constexpr size_t kMaxHashPolicies = 16;

}  // namespace

std::optional<std::string> PathRegexLiteral(absl::string_view pattern) {
  std::string out;
  out.reserve(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      if (i + 1 == pattern.size()) return std::nullopt;
      const unsigned char next = static_cast<unsigned char>(pattern[++i]);
      // Escaped punctuation is itself; a letter or digit is a class, an
      // assertion or a code; other bytes are left to RE2.
      if (!absl::ascii_ispunct(next)) return std::nullopt;
      out += static_cast<char>(next);
      continue;
    }
    if (c == '^' && i == 0) continue;
    if (c == '$' && i + 1 == pattern.size()) continue;
    if (absl::string_view(".+*?()|[]{}^$").find(c) != absl::string_view::npos) {
      return std::nullopt;
    }
    out += c;
  }
  return out;
}

namespace {

// RE2 programs are bounded so that a hostile pattern costs at most this much
// memory; a pattern that needs more is rejected like a syntax error.
constexpr int64_t kRegexMaxMem = 1 << 20;

std::unique_ptr<re2::RE2> CompileRegex(const std::string& pattern,
                                       std::string* error) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kRegexMaxMem);
  auto re = std::make_unique<re2::RE2>(pattern, options);
  if (!re->ok()) {
    *error = absl::StrCat("regex '", pattern, "': ", re->error());
    return nullptr;
  }
  return re;
}

// Whether a response condition can be evaluated: status bounds within
// 100..999 with min <= max, `not` with exactly one child.
bool ValidResponseMatch(const ResponseMatch& m, std::string* error) {
  switch (m.kind) {
    case ResponseMatch::Kind::kStatus:
      if (m.min < 100 || m.max > 999 || m.min > m.max) {
        *error = absl::StrCat("status range ", m.min, "-", m.max,
                              " is not within 100..999");
        return false;
      }
      return true;
    case ResponseMatch::Kind::kNot:
      if (m.children.size() != 1) {
        *error = "'not' needs exactly one condition";
        return false;
      }
      [[fallthrough]];
    case ResponseMatch::Kind::kAll:
    case ResponseMatch::Kind::kAny:
      for (const ResponseMatch& c : m.children) {
        if (!ValidResponseMatch(c, error)) return false;
      }
      return true;
  }
  *error = "unknown condition";
  return false;
}

// Whether a fault can be carried out: shares within a million, a real
// abort code, a non-negative delay.
absl::Status ValidateFault(const FaultInjection& f) {
  if (f.delay_per_million > 1'000'000 || f.abort_per_million > 1'000'000) {
    return absl::InvalidArgumentError(
        "a share above 1,000,000 per million (100%)");
  }
  if (f.delay < absl::ZeroDuration() || f.delay == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("delay ", absl::FormatDuration(f.delay),
                     " is not a finite duration of zero or more"));
  }
  if (f.abort_per_million > 0 && f.abort_code == absl::StatusCode::kOk &&
      !f.abort_from_header) {
    return absl::InvalidArgumentError("an abort with the code OK");
  }
  int code = static_cast<int>(f.abort_code);
  if (code < 0 || code > 16) {
    return absl::InvalidArgumentError(
        absl::StrCat("abort code ", code, " is not a gRPC status code"));
  }
  return absl::OkStatus();
}

}  // namespace

RouteTable::RouteTable() {
  default_route_.is_default = true;
  default_route_.metrics_name = "[default]";
  default_route_.labels["route"] = "[default]";
}
RouteTable::~RouteTable() = default;

size_t RouteTable::size() const { return routes_.size(); }

const CompiledRoute& RouteTable::At(size_t index) const {
  return index < routes_.size() ? routes_[index].route : default_route_;
}

namespace {

// Compiles one route's condition within the limits: counts its nodes and
// its regexes' program size as it goes, and stops at the first excess.
class ConditionCompiler {
 public:
  ConditionCompiler(const RouteLimits& limits, int64_t regex_budget)
      : limits_(limits), regex_budget_(regex_budget) {}

  // False, with `error` set, if `m` cannot be matched or passes a limit.
  template <typename Node>
  bool Compile(const RequestMatch& m, Node* out, uint32_t depth,
               std::string* error) {
    if (depth > limits_.max_depth) {
      *error = absl::StrCat("its condition is nested deeper than ",
                            limits_.max_depth, " (RouteLimits::max_depth)");
      return false;
    }
    if (++conditions_ > limits_.max_conditions_per_route) {
      *error =
          absl::StrCat("it has more than ", limits_.max_conditions_per_route,
                       " conditions (RouteLimits::max_conditions_per_"
                       "route)");
      return false;
    }
    out->kind = m.kind;
    switch (m.kind) {
      case RequestMatch::Kind::kAll:
      case RequestMatch::Kind::kAny:
      case RequestMatch::Kind::kNot:
        if (m.kind == RequestMatch::Kind::kNot && m.children.size() != 1) {
          *error = "'not' needs exactly one condition";
          return false;
        }
        // Not resized up front: a hostile list costs no more than the
        // conditions allowed.
        for (const RequestMatch& child : m.children) {
          out->children.emplace_back();
          if (!Compile(child, &out->children.back(), depth + 1, error)) {
            return false;
          }
        }
        return true;
      case RequestMatch::Kind::kPath:
        // Compiled (and counted against the table's regex budget) even
        // when it is a literal, so that what a table accepts and refuses
        // does not depend on how it is matched.
        out->regex = Regex(m.path_regex, error);
        if (out->regex == nullptr) return false;
        if (std::optional<std::string> literal =
                PathRegexLiteral(m.path_regex)) {
          out->kind = RequestMatch::Kind::kPathExact;
          out->path = *std::move(literal);
          out->case_sensitive = true;
          out->regex.reset();
        }
        return true;
      case RequestMatch::Kind::kMethod:
        out->method = m.method;
        return true;
      case RequestMatch::Kind::kHeader:
      case RequestMatch::Kind::kQueryParam:
        out->header = m.header;
        if (m.header.ignore_case) {
          out->header.value = absl::AsciiStrToLower(m.header.value);
        }
        if (m.header.kind == HeaderMatch::Kind::kRegex) {
          out->regex = Regex(m.header.value, error);
          return out->regex != nullptr;
        }
        if (m.header.kind == HeaderMatch::Kind::kRange &&
            m.header.range_start >= m.header.range_end) {
          *error = absl::StrCat(
              m.kind == RequestMatch::Kind::kHeader ? "header '"
                                                    : "query parameter '",
              PrintableText(m.header.name), "' range [", m.header.range_start,
              ", ", m.header.range_end, ") is empty");
          return false;
        }
        return true;
      case RequestMatch::Kind::kPathPrefix:
      case RequestMatch::Kind::kPathExact:
        out->path = m.case_sensitive ? m.path : absl::AsciiStrToLower(m.path);
        out->case_sensitive = m.case_sensitive;
        return true;
      case RequestMatch::Kind::kFraction:
        out->per_million = m.per_million;
        return true;
    }
    *error = "unknown condition";
    return false;
  }

  int64_t regex_size() const { return regex_size_; }
  // Whether the route was refused for the table's regex budget.
  bool over_regex_budget() const { return over_regex_budget_; }

 private:
  std::unique_ptr<re2::RE2> Regex(const std::string& pattern,
                                  std::string* error) {
    // Spent already: not even compiled, so that later routes cost nothing.
    if (regex_size_ >= regex_budget_) {
      over_regex_budget_ = true;
      *error = absl::StrCat(
          "its regexes would take the table's compiled regex size past ",
          limits_.max_regex_program_size,
          " (RouteLimits::max_regex_program_size)");
      return nullptr;
    }
    std::unique_ptr<re2::RE2> re = CompileRegex(pattern, error);
    if (re == nullptr) return nullptr;
    regex_size_ += re->ProgramSize();
    if (regex_size_ > regex_budget_) {
      over_regex_budget_ = true;
      *error = absl::StrCat(
          "its regexes would take the table's compiled regex size past ",
          limits_.max_regex_program_size,
          " (RouteLimits::max_regex_program_size)");
      return nullptr;
    }
    return re;
  }

  const RouteLimits& limits_;
  const int64_t regex_budget_;  // what the table has left
  uint32_t conditions_ = 0;
  int64_t regex_size_ = 0;
  bool over_regex_budget_ = false;
};

}  // namespace

std::shared_ptr<const RouteTable> RouteTable::Build(
    const ServiceConfig& config, const RouteLimits& limits,
    std::vector<std::string>* dropped) {
  int64_t regex_size = 0;  // of the routes kept so far
  // Once a route has passed the regex budget, later routes get none: no
  // regex is compiled past the first that does not fit.
  bool regex_budget_spent = false;
  std::shared_ptr<RouteTable> table(new RouteTable());
  for (size_t i = 0; i < config.routes.size(); ++i) {
    const Route& r = config.routes[i];
    // Counted as given, kept or not, so that no config costs more to build
    // than max_routes routes within the other limits.
    if (i >= limits.max_routes) {
      if (dropped != nullptr) {
        dropped->push_back(
            absl::StrCat("routes ", i, " to ", config.routes.size() - 1,
                         " dropped: more than ", limits.max_routes,
                         " routes (RouteLimits::max_routes)"));
      }
      break;
    }
    Entry entry;
    std::string error;
    ConditionCompiler compiler(
        limits,
        regex_budget_spent ? 0 : limits.max_regex_program_size - regex_size);
    if (!compiler.Compile(r.condition, &entry.condition, 1, &error)) {
      regex_budget_spent |= compiler.over_regex_budget();
      if (dropped != nullptr) {
        dropped->push_back(absl::StrCat(
            "route ", i,
            r.name.empty() ? "" : " '" + PrintableText(r.name) + "'",
            " dropped: ", error));
      }
      continue;
    }
    regex_size += compiler.regex_size();
    std::string label =
        absl::StrCat("route ", i, r.name.empty() ? "" : " '" + r.name + "'");
    entry.route.name = r.name;
    entry.route.index = table->routes_.size();
    entry.route.timeout = r.timeout;
    auto attempt_limit = [&](absl::Duration d, const char* field,
                             absl::Duration* out) {
      if (d > absl::ZeroDuration()) {
        *out = d;
      } else if (dropped != nullptr) {
        dropped->push_back(absl::StrCat(label, ": ", field, " ",
                                        absl::FormatDuration(d),
                                        " must be > 0 (infinite: none); "
                                        "no such limit applied"));
      }
    };
    attempt_limit(r.response_timeout, "response_timeout",
                  &entry.route.response_timeout);
    attempt_limit(r.idle_timeout, "idle_timeout", &entry.route.idle_timeout);
    entry.route.is_retryable = r.is_retryable;
    entry.route.allow_l5d_request_headers = r.allow_l5d_request_headers;
    if (absl::Status s = ValidateRetryPolicy(r.retry_policy); s.ok()) {
      entry.route.retry_policy = r.retry_policy;
    } else if (dropped != nullptr) {
      dropped->push_back(absl::StrCat(label, ": ", s.message(),
                                      "; retrying without backoff or limit"));
    }
    if (r.hedge_policy) {
      if (absl::Status s = ValidateHedgePolicy(*r.hedge_policy, r.is_retryable);
          s.ok()) {
        entry.route.hedge = r.hedge_policy;
      } else if (dropped != nullptr) {
        dropped->push_back(
            absl::StrCat(label, ": ", s.message(), "; not hedged"));
      }
    }
    for (size_t c = 0; c < r.response_classes.size(); ++c) {
      std::string class_error;
      if (ValidResponseMatch(r.response_classes[c].condition, &class_error)) {
        entry.route.response_classes.push_back(r.response_classes[c]);
      } else if (dropped != nullptr) {
        dropped->push_back(absl::StrCat(label, ": response class ", c,
                                        " dropped: ", class_error));
      }
    }
    if (!r.backends.empty()) {
      std::vector<std::string> split_dropped;
      entry.route.split = TrafficSplit::Build(r.backends, &split_dropped,
                                              r.backends_first_available);
      if (dropped != nullptr) {
        for (std::string& line : split_dropped) {
          dropped->push_back(absl::StrCat(label, ": ", line));
        }
      }
    }
    for (const RequestHashPolicy& h : r.hash_policies) {
      if (entry.route.hash_policies.size() == kMaxHashPolicies) {
        if (dropped != nullptr) {
          dropped->push_back(absl::StrCat(label, ": hash policies past ",
                                          kMaxHashPolicies, " dropped"));
        }
        break;
      }
      CompiledRoute::HashPolicy compiled{h, nullptr};
      if (h.kind == RequestHashPolicy::Kind::kHeader && !h.regex.empty()) {
        std::string error;
        compiled.regex = CompileRegex(h.regex, &error);
        if (compiled.regex == nullptr) {
          if (dropped != nullptr) {
            dropped->push_back(absl::StrCat(label, ": hash policy on '",
                                            PrintableText(h.header),
                                            "' dropped: ", error));
          }
          continue;
        }
      }
      entry.route.hash_policies.push_back(std::move(compiled));
    }
    if (absl::Status s = ValidateFault(r.fault); !s.ok()) {
      if (dropped != nullptr) {
        dropped->push_back(
            absl::StrCat(label, ": fault dropped: ", s.message()));
      }
    } else {
      const FaultInjection& f = r.fault;
      entry.route.has_fault = f.delay_per_million > 0 ||
                              f.abort_per_million > 0 || f.delay_from_header ||
                              f.abort_from_header;
      entry.route.fault = f;
    }
    // A header modifier kept if valid, else dropped with a line.
    auto keep = [&](const HeaderModifier& modifier, absl::string_view what,
                    HeaderModifier* out) {
      absl::Status s = ValidateHeaderModifier(modifier);
      if (s.ok()) {
        *out = modifier;
      } else if (dropped != nullptr) {
        dropped->push_back(absl::StrCat(
            label, ": ", what, " header modifier dropped: ", s.message()));
      }
    };
    keep(r.request_headers, "request", &entry.route.request_headers);
    keep(r.response_headers, "response", &entry.route.response_headers);
    entry.route.metrics_labels = r.metrics_labels;
    auto route_label = r.metrics_labels.find("route");
    entry.route.metrics_name = !r.name.empty() ? r.name
                               : route_label != r.metrics_labels.end()
                                   ? route_label->second
                                   : absl::StrCat("#", entry.route.index);
    entry.route.labels = r.metrics_labels;
    entry.route.labels["route"] = entry.route.metrics_name;
    table->routes_.push_back(std::move(entry));
  }
  table->default_route_.index = table->routes_.size();
  table->default_route_.unmatched_fails = config.require_route_match;
  table->default_route_.unmatched_code = config.unmatched_route_code;
  table->BuildExactIndex();
  return table;
}

const std::string* RouteTable::ExactPathOf(const Node& node) {
  const Node* n = &node;
  if (n->kind == RequestMatch::Kind::kAll && n->children.size() == 1) {
    n = &n->children[0];
  }
  if (n->kind == RequestMatch::Kind::kPathExact && n->case_sensitive) {
    return &n->path;
  }
  return nullptr;
}

void RouteTable::BuildExactIndex() {
  // Below this many exact routes, comparing each in turn is as cheap as
  // hashing the path.
  constexpr size_t kMinIndexed = 8;
  size_t exact = 0;
  for (const Entry& e : routes_) exact += ExactPathOf(e.condition) != nullptr;
  if (exact < kMinIndexed) return;
  indexed_ = true;
  exact_index_.reserve(exact);
  for (uint32_t i = 0; i < routes_.size(); ++i) {
    if (const std::string* path = ExactPathOf(routes_[i].condition)) {
      exact_index_.emplace(*path, i);  // the first of a path stays
    } else {
      scan_.push_back(i);
    }
  }
}

bool RouteTable::Matches(const Node& node, const RequestHead& head,
                         absl::string_view path) {
  switch (node.kind) {
    case RequestMatch::Kind::kAll:
      for (const Node& c : node.children) {
        if (!Matches(c, head, path)) return false;
      }
      return true;  // all [] is true
    case RequestMatch::Kind::kAny:
      for (const Node& c : node.children) {
        if (Matches(c, head, path)) return true;
      }
      return false;  // any [] is false
    case RequestMatch::Kind::kNot:
      return !Matches(node.children[0], head, path);
    case RequestMatch::Kind::kPath:
      return re2::RE2::FullMatch(re2::StringPiece(path.data(), path.size()),
                                 *node.regex);
    case RequestMatch::Kind::kMethod:
      return head.method == node.method;
    case RequestMatch::Kind::kHeader: {
      if (head.headers == nullptr) return false;
      for (const auto& [name, value] : *head.headers) {
        if (name == node.header.name && HeaderValueMatches(node, value)) {
          return true;
        }
      }
      return false;
    }
    case RequestMatch::Kind::kQueryParam:
      return QueryParamMatches(node, head.path.substr(path.size()));
    case RequestMatch::Kind::kPathPrefix:
      return node.case_sensitive ? absl::StartsWith(path, node.path)
                                 : absl::StartsWithIgnoreCase(path, node.path);
    case RequestMatch::Kind::kPathExact:
      return node.case_sensitive ? path == node.path
                                 : absl::EqualsIgnoreCase(path, node.path);
    case RequestMatch::Kind::kFraction: {
      if (node.per_million >= 1'000'000) return true;
      thread_local absl::InsecureBitGen gen;
      return absl::Uniform<uint32_t>(gen, 0, 1'000'000) < node.per_million;
    }
  }
  return false;
}

namespace {

// Whether `text` holds `pattern` ignoring ASCII case, without a lowered
// copy of `text` (as string_view::find: at most |text| × |pattern| steps).
bool ContainsIgnoreCase(absl::string_view text, absl::string_view pattern) {
  if (pattern.size() > text.size()) return false;
  for (size_t i = 0; i + pattern.size() <= text.size(); ++i) {
    if (absl::EqualsIgnoreCase(text.substr(i, pattern.size()), pattern)) {
      return true;
    }
  }
  return false;
}

// `text` with "%XX" decoded and "+" as a space (a query's form encoding);
// a '%' not followed by two hex digits stays as it is. Into `scratch`
// only when there is something to decode.
absl::string_view FormDecoded(absl::string_view text, std::string* scratch) {
  if (text.find_first_of("%+") == absl::string_view::npos) return text;
  scratch->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      scratch->push_back(' ');
    } else if (c == '%' && i + 2 < text.size() &&
               absl::ascii_isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               absl::ascii_isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      auto digit = [](char h) {
        return absl::ascii_isdigit(static_cast<unsigned char>(h))
                   ? h - '0'
                   : absl::ascii_tolower(static_cast<unsigned char>(h)) - 'a' +
                         10;
      };
      scratch->push_back(
          static_cast<char>(digit(text[i + 1]) * 16 + digit(text[i + 2])));
      i += 2;
    } else {
      scratch->push_back(c);
    }
  }
  return *scratch;
}

}  // namespace

bool RouteTable::QueryParamMatches(const Node& node, absl::string_view query) {
  if (query.empty()) return false;
  query.remove_prefix(1);  // the '?'
  std::string name_scratch;
  std::string value_scratch;
  for (absl::string_view pair : absl::StrSplit(query, '&')) {
    size_t eq = pair.find('=');
    absl::string_view name = FormDecoded(pair.substr(0, eq), &name_scratch);
    if (name != node.header.name) continue;
    absl::string_view value =
        eq == absl::string_view::npos
            ? absl::string_view()
            : FormDecoded(pair.substr(eq + 1), &value_scratch);
    if (HeaderValueMatches(node, value)) return true;
  }
  return false;
}

bool RouteTable::HeaderValueMatches(const Node& node, absl::string_view value) {
  const HeaderMatch& h = node.header;
  switch (h.kind) {
    case HeaderMatch::Kind::kPresent:
      return true;
    case HeaderMatch::Kind::kExact:
      return h.ignore_case ? absl::EqualsIgnoreCase(value, h.value)
                           : value == h.value;
    case HeaderMatch::Kind::kPrefix:
      return h.ignore_case ? absl::StartsWithIgnoreCase(value, h.value)
                           : absl::StartsWith(value, h.value);
    case HeaderMatch::Kind::kSuffix:
      return h.ignore_case ? absl::EndsWithIgnoreCase(value, h.value)
                           : absl::EndsWith(value, h.value);
    case HeaderMatch::Kind::kContains:
      return h.ignore_case ? ContainsIgnoreCase(value, h.value)
                           : absl::StrContains(value, h.value);
    case HeaderMatch::Kind::kRegex:
      return re2::RE2::FullMatch(re2::StringPiece(value.data(), value.size()),
                                 *node.regex);
    case HeaderMatch::Kind::kRange: {
      int64_t n = 0;
      return absl::SimpleAtoi(value, &n) && n >= h.range_start &&
             n < h.range_end;
    }
  }
  return false;
}

absl::Status ValidateHeaderModifier(const HeaderModifier& modifier) {
  if (absl::Status s = ValidateMetadata(modifier.add); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("add: ", s.message()));
  }
  if (absl::Status s = ValidateMetadata(modifier.set); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("set: ", s.message()));
  }
  for (const std::string& name : modifier.remove) {
    if (!IsMetadataName(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "remove: '", PrintableText(name), "' is not a metadata name"));
    }
  }
  return absl::OkStatus();
}

void ApplyHeaderModifier(const HeaderModifier& modifier, Metadata* headers) {
  for (const auto& pair : modifier.add) headers->push_back(pair);
  for (const auto& [name, value] : modifier.set) {
    bool kept = false;
    for (auto it = headers->begin(); it != headers->end();) {
      if (it->first != name) {
        ++it;
      } else if (!kept) {
        it->second = value;
        kept = true;
        ++it;
      } else {
        it = headers->erase(it);
      }
    }
    if (!kept) headers->emplace_back(name, value);
  }
  for (const std::string& name : modifier.remove) {
    headers->erase(
        std::remove_if(headers->begin(), headers->end(),
                       [&](const auto& h) { return h.first == name; }),
        headers->end());
  }
}

const CompiledRoute& RouteTable::Match(const RequestHead& head) const {
  absl::string_view path = head.path;
  size_t query = path.find('?');
  if (query != absl::string_view::npos) path = path.substr(0, query);
  if (!indexed_) {
    for (const Entry& e : routes_) {
      if (Matches(e.condition, head, path)) return e.route;
    }
    return default_route_;
  }
  // The first exact route of this path, unless a route of another kind
  // before it matches: first match wins, as without the index.
  auto found = exact_index_.find(path);
  const uint32_t exact = found != exact_index_.end()
                             ? found->second
                             : static_cast<uint32_t>(routes_.size());
  for (uint32_t i : scan_) {
    if (i > exact) break;
    if (Matches(routes_[i].condition, head, path)) return routes_[i].route;
  }
  return exact < routes_.size() ? routes_[exact].route : default_route_;
}

}  // namespace mesh::internal

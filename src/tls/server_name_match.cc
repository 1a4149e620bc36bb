#include "src/tls/server_name_match.h"

#include <re2/re2.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "src/base/utf8.h"

namespace mesh::internal {
namespace {

using Kind = ServerNameMatcher::Kind;
using SanType = ServerNameMatcher::SanType;

// Bounds a pattern's program (a control plane's input).
constexpr int64_t kRegexMaxMem = 1 << 20;

RE2::Options BoundedOptions() {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kRegexMaxMem);
  return options;
}

// "*.example.com" accepts "a.example.com" (one label, not empty).
bool WildcardDnsMatch(absl::string_view san, absl::string_view wanted,
                      bool ignore_case) {
  if (!absl::StartsWith(san, "*.")) return false;
  absl::string_view suffix = san.substr(1);  // ".example.com"
  if (wanted.size() <= suffix.size()) return false;
  absl::string_view label = wanted.substr(0, wanted.size() - suffix.size());
  if (absl::StrContains(label, '.')) return false;
  absl::string_view tail = wanted.substr(label.size());
  return ignore_case ? absl::EqualsIgnoreCase(tail, suffix) : tail == suffix;
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kExact:
      return "exact";
    case Kind::kPrefix:
      return "prefix";
    case Kind::kSuffix:
      return "suffix";
    case Kind::kContains:
      return "contains";
    case Kind::kRegex:
      return "regex";
  }
  return "?";
}

const char* SanTypeName(SanType type) {
  switch (type) {
    case SanType::kAny:
      return "";
    case SanType::kDns:
      return "DNS ";
    case SanType::kUri:
      return "URI ";
    case SanType::kEmail:
      return "email ";
    case SanType::kIp:
      return "IP ";
  }
  return "";
}

}  // namespace

ServerNameCheck::ServerNameCheck(std::vector<ServerNameMatcher> matchers)
    : matchers_(std::move(matchers)) {
  regexes_.resize(matchers_.size());
  for (size_t i = 0; i < matchers_.size(); ++i) {
    if (matchers_[i].kind == Kind::kRegex) {
      regexes_[i] = std::make_unique<RE2>(matchers_[i].value, BoundedOptions());
    }
  }
}

ServerNameCheck::~ServerNameCheck() = default;

bool ServerNameCheck::MatchesOne(size_t i, const std::string& name,
                                 bool dns) const {
  const ServerNameMatcher& m = matchers_[i];
  if (name.empty()) return false;
  const bool ic = m.ignore_case;
  switch (m.kind) {
    case Kind::kExact:
      if (ic ? absl::EqualsIgnoreCase(name, m.value) : name == m.value) {
        return true;
      }
      return dns && WildcardDnsMatch(name, m.value, ic);
    case Kind::kPrefix:
      return ic ? absl::StartsWithIgnoreCase(name, m.value)
                : absl::StartsWith(name, m.value);
    case Kind::kSuffix:
      return ic ? absl::EndsWithIgnoreCase(name, m.value)
                : absl::EndsWith(name, m.value);
    case Kind::kContains:
      return ic ? absl::StrContains(absl::AsciiStrToLower(name),
                                    absl::AsciiStrToLower(m.value))
                : absl::StrContains(name, m.value);
    case Kind::kRegex:
      return regexes_[i]->ok() && RE2::FullMatch(name, *regexes_[i]);
  }
  return false;
}

bool ServerNameCheck::Matches(const PresentedNames& names) const {
  if (matchers_.empty()) return true;
  for (size_t i = 0; i < matchers_.size(); ++i) {
    const SanType type = matchers_[i].san_type;
    const bool any = type == SanType::kAny;
    const std::pair<SanType, const std::vector<std::string>*> lists[] = {
        {SanType::kDns, &names.dns},
        {SanType::kUri, &names.uri},
        {SanType::kEmail, &names.email},
        {SanType::kIp, &names.ip}};
    for (const auto& [kind, list] : lists) {
      if (!any && type != kind) continue;
      for (const std::string& name : *list) {
        if (MatchesOne(i, name, kind == SanType::kDns)) return true;
      }
    }
  }
  return false;
}

bool MatchesServerNames(const std::vector<ServerNameMatcher>& matchers,
                        const PresentedNames& names) {
  return ServerNameCheck(matchers).Matches(names);
}

absl::Status ValidateServerNameMatcher(const ServerNameMatcher& matcher) {
  if (matcher.value.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(KindName(matcher.kind), " matcher with an empty value"));
  }
  if (matcher.kind == Kind::kRegex) {
    if (matcher.ignore_case) {
      return absl::InvalidArgumentError(
          "ignore_case does not apply to a regex matcher");
    }
    RE2 re(matcher.value, BoundedOptions());
    if (!re.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid RE2 '", QuotedText(matcher.value),
                       "': ", QuotedText(re.error())));
    }
  }
  return absl::OkStatus();
}

std::string DescribeMatchers(const std::vector<ServerNameMatcher>& matchers) {
  if (matchers.empty()) return "any name";
  return absl::StrJoin(
      matchers, " or ", [](std::string* out, const ServerNameMatcher& m) {
        absl::StrAppend(out, SanTypeName(m.san_type), KindName(m.kind), " '",
                        m.value, "'", m.ignore_case ? " (any case)" : "");
      });
}

std::string DescribePresented(const PresentedNames& names) {
  std::vector<std::string> parts;
  for (const std::string& n : names.dns) parts.push_back("DNS:" + n);
  for (const std::string& n : names.uri) parts.push_back("URI:" + n);
  for (const std::string& n : names.email) parts.push_back("email:" + n);
  for (const std::string& n : names.ip) parts.push_back("IP:" + n);
  if (parts.empty()) return "no subject alternative names";
  return absl::StrJoin(parts, ", ");
}

}  // namespace mesh::internal

#include "tools/mesh-control-plane/policy_config.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tools/mesh-control-plane/config_fields.h"

namespace mesh::controlplane {
namespace {

using Type = JsonValue::Type;

// The gRPC codes a GRPCRoute's retry conditions can name.
constexpr absl::string_view kRetryCodes[] = {"CANCELLED", "DEADLINE_EXCEEDED",
                                             "INTERNAL", "RESOURCE_EXHAUSTED",
                                             "UNAVAILABLE"};

// Looks up `key`: null if absent.
const JsonValue* Field(const JsonValue& object, absl::string_view key) {
  auto it = object.object.find(std::string(key));
  return it == object.object.end() ? nullptr : &it->second;
}

// An array's elements, each parsed by `parse(element, path)`.
template <typename T, typename Parse>
absl::Status ParseArray(const JsonValue& v, const std::string& path,
                        std::vector<T>* out, Parse parse) {
  if (absl::Status s = Expect(v, Type::kArray, path); !s.ok()) return s;
  for (size_t i = 0; i < v.array.size(); ++i) {
    absl::StatusOr<T> item = parse(v.array[i], absl::StrCat(path, "[", i, "]"));
    if (!item.ok()) return item.status();
    out->push_back(*std::move(item));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Millis(const JsonValue& v, const std::string& path) {
  return Integer(v, path, 0, 86400000);
}

// {"name": ..., "exact": ...} or {"name": ..., "regex": ...}.
absl::StatusOr<PolicyValueMatch> ParseValueMatch(const JsonValue& v,
                                                 const std::string& path,
                                                 bool header) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s = OnlyKeys(v, path, {"name", "exact", "regex"}); !s.ok())
    return s;
  PolicyValueMatch m;
  const JsonValue* name = Field(v, "name");
  if (name == nullptr) return Bad(v, path, "name is required");
  absl::StatusOr<std::string> n = StringField(*name, path + ".name");
  if (!n.ok()) return n.status();
  if (header) {
    if (std::string problem = HeaderNameProblem(*n); !problem.empty())
      return Bad(*name, path + ".name", problem);
  } else if (n->empty()) {
    return Bad(*name, path + ".name", "a query parameter needs a name");
  }
  m.name = *n;
  const JsonValue* exact = Field(v, "exact");
  const JsonValue* regex = Field(v, "regex");
  if ((exact == nullptr) == (regex == nullptr)) {
    return Bad(v, path, "expected exactly one of exact, regex");
  }
  m.regex = regex != nullptr;
  absl::StatusOr<std::string> value =
      StringField(m.regex ? *regex : *exact,
                  absl::StrCat(path, m.regex ? ".regex" : ".exact"));
  if (!value.ok()) return value.status();
  m.value = *value;
  return m;
}

absl::StatusOr<PolicyMatchSpec> ParseMatch(const JsonValue& v,
                                           const std::string& path, bool grpc) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  absl::Status keys =
      grpc ? OnlyKeys(v, path, {"service", "method", "headers"})
           : OnlyKeys(v, path, {"path", "method", "headers", "query"});
  if (!keys.ok()) return keys;
  PolicyMatchSpec m;
  if (const JsonValue* h = Field(v, "headers")) {
    auto parse = [](const JsonValue& e, const std::string& p) {
      return ParseValueMatch(e, p, /*header=*/true);
    };
    if (absl::Status s = ParseArray(*h, path + ".headers", &m.headers, parse);
        !s.ok())
      return s;
  }
  if (grpc) {
    for (auto [key, field] : {std::make_pair("service", &m.service),
                              std::make_pair("method", &m.rpc_method)}) {
      if (const JsonValue* f = Field(v, key)) {
        absl::StatusOr<std::string> s =
            StringField(*f, absl::StrCat(path, ".", key));
        if (!s.ok()) return s.status();
        *field = *s;
      }
    }
    if (m.service.empty() && !m.rpc_method.empty()) {
      return Bad(v, path, "a method needs its service");
    }
    return m;
  }
  if (const JsonValue* p = Field(v, "path")) {
    std::string pp = path + ".path";
    if (absl::Status s = Expect(*p, Type::kObject, pp); !s.ok()) return s;
    if (absl::Status s = OnlyKeys(*p, pp, {"exact", "prefix", "regex"});
        !s.ok())
      return s;
    if (p->object.size() != 1) {
      return Bad(*p, pp, "expected exactly one of exact, prefix, regex");
    }
    const auto& [kind, value] = *p->object.begin();
    absl::StatusOr<std::string> s = StringField(value, pp + "." + kind);
    if (!s.ok()) return s.status();
    m.path = *s;
    m.path_kind = kind == "exact"    ? PolicyMatchSpec::PathKind::kExact
                  : kind == "prefix" ? PolicyMatchSpec::PathKind::kPrefix
                                     : PolicyMatchSpec::PathKind::kRegex;
  }
  if (const JsonValue* f = Field(v, "method")) {
    absl::StatusOr<std::string> s = StringField(*f, path + ".method");
    if (!s.ok()) return s.status();
    m.http_method = *s;
  }
  if (const JsonValue* q = Field(v, "query")) {
    auto parse = [](const JsonValue& e, const std::string& p) {
      return ParseValueMatch(e, p, /*header=*/false);
    };
    if (absl::Status s = ParseArray(*q, path + ".query", &m.query, parse);
        !s.ok())
      return s;
  }
  return m;
}

// {"add": {"k": "v"}, "set": {"k": "v"}, "remove": ["k"]}.
absl::StatusOr<PolicyHeaderModifier> ParseModifier(const JsonValue& v,
                                                   const std::string& path) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s = OnlyKeys(v, path, {"add", "set", "remove"}); !s.ok())
    return s;
  PolicyHeaderModifier m;
  for (auto [key, field] :
       {std::make_pair("add", &m.add), std::make_pair("set", &m.set)}) {
    const JsonValue* f = Field(v, key);
    if (f == nullptr) continue;
    std::string fp = absl::StrCat(path, ".", key);
    if (absl::Status s = Expect(*f, Type::kObject, fp); !s.ok()) return s;
    for (const auto& [name, value] : f->object) {
      absl::StatusOr<std::string> s =
          StringField(value, absl::StrCat(fp, ".", name));
      if (!s.ok()) return s.status();
      field->emplace_back(name, *s);
    }
  }
  if (const JsonValue* r = Field(v, "remove")) {
    if (absl::Status s =
            ParseArray(*r, path + ".remove", &m.remove, StringField);
        !s.ok())
      return s;
  }
  return m;
}

absl::StatusOr<PolicyRetrySpec> ParseRetry(const JsonValue& v,
                                           const std::string& path, bool grpc) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  absl::Status keys = OnlyKeys(v, path,
                               {"max_retries", grpc ? "codes" : "statuses",
                                "min_backoff_ms", "max_backoff_ms"});
  if (!keys.ok()) return keys;
  PolicyRetrySpec r;
  if (const JsonValue* m = Field(v, "max_retries")) {
    absl::StatusOr<int64_t> n = Integer(*m, path + ".max_retries", 0, 1000);
    if (!n.ok()) return n.status();
    r.max_retries = static_cast<uint32_t>(*n);
  }
  for (auto [key, field] :
       {std::make_pair("min_backoff_ms", &r.min_backoff_ms),
        std::make_pair("max_backoff_ms", &r.max_backoff_ms)}) {
    if (const JsonValue* f = Field(v, key)) {
      absl::StatusOr<int64_t> ms = Millis(*f, absl::StrCat(path, ".", key));
      if (!ms.ok()) return ms.status();
      *field = *ms;
    }
  }
  if (const JsonValue* c = Field(v, "codes")) {
    auto parse = [](const JsonValue& e,
                    const std::string& p) -> absl::StatusOr<std::string> {
      absl::StatusOr<std::string> s = StringField(e, p);
      if (!s.ok()) return s;
      if (std::find(std::begin(kRetryCodes), std::end(kRetryCodes), *s) ==
          std::end(kRetryCodes)) {
        return Bad(e, p,
                   absl::StrCat("'", *s,
                                "': a GRPCRoute retries only on CANCELLED, "
                                "DEADLINE_EXCEEDED, INTERNAL, "
                                "RESOURCE_EXHAUSTED, UNAVAILABLE"));
      }
      return s;
    };
    if (absl::Status s = ParseArray(*c, path + ".codes", &r.codes, parse);
        !s.ok())
      return s;
  }
  if (const JsonValue* st = Field(v, "statuses")) {
    using Range = std::pair<uint32_t, uint32_t>;
    auto parse = [](const JsonValue& e,
                    const std::string& p) -> absl::StatusOr<Range> {
      if (!e.is(Type::kArray) || e.array.size() != 2)
        return Bad(e, p, "expected [first, last]");
      // Passed on unchecked (0..1000): the client judges ranges.
      absl::StatusOr<int64_t> lo = Integer(e.array[0], p, 0, 1000);
      absl::StatusOr<int64_t> hi = Integer(e.array[1], p, 0, 1000);
      if (!lo.ok()) return lo.status();
      if (!hi.ok()) return hi.status();
      return Range(*lo, *hi);
    };
    if (absl::Status s =
            ParseArray(*st, path + ".statuses", &r.statuses, parse);
        !s.ok())
      return s;
  }
  return r;
}

absl::StatusOr<PolicyFailureSpec> ParseFailure(const JsonValue& v,
                                               const std::string& path,
                                               bool grpc) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  const char* answer = grpc ? "code" : "status";
  if (absl::Status s = OnlyKeys(v, path, {answer, "message", "ratio"}); !s.ok())
    return s;
  PolicyFailureSpec f;
  const JsonValue* a = Field(v, answer);
  if (a == nullptr) return Bad(v, path, absl::StrCat(answer, " is required"));
  // Passed on unchecked: the client refuses codes and statuses it cannot
  // answer with.
  absl::StatusOr<int64_t> n =
      Integer(*a, absl::StrCat(path, ".", answer), 0, 1000);
  if (!n.ok()) return n.status();
  f.code = static_cast<uint32_t>(*n);
  if (const JsonValue* m = Field(v, "message")) {
    absl::StatusOr<std::string> s = StringField(*m, path + ".message");
    if (!s.ok()) return s.status();
    f.message = *s;
  }
  if (const JsonValue* r = Field(v, "ratio")) {
    if (absl::Status s = Expect(*r, Type::kNumber, path + ".ratio"); !s.ok())
      return s;
    if (!(r->number >= 0 && r->number <= 1))
      return Bad(*r, path + ".ratio", "expected a number in 0..1");
    f.ratio = r->number;
  }
  return f;
}

absl::StatusOr<PolicyRuleSpec> ParseRule(const JsonValue& v,
                                         const std::string& path, bool grpc) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  absl::Status keys =
      grpc ? OnlyKeys(v, path,
                      {"matches", "backends", "first_available", "timeout_ms",
                       "response_timeout_ms", "idle_timeout_ms", "retry",
                       "request_headers", "failure_injector"})
           : OnlyKeys(
                 v, path,
                 {"matches", "backends", "first_available", "timeout_ms",
                  "response_timeout_ms", "idle_timeout_ms", "retry",
                  "request_headers", "response_headers", "failure_injector"});
  if (!keys.ok()) return keys;
  PolicyRuleSpec r;
  if (const JsonValue* m = Field(v, "matches")) {
    auto parse = [grpc](const JsonValue& e, const std::string& p) {
      return ParseMatch(e, p, grpc);
    };
    if (absl::Status s = ParseArray(*m, path + ".matches", &r.matches, parse);
        !s.ok())
      return s;
  }
  if (const JsonValue* b = Field(v, "backends")) {
    using Backend = std::pair<std::string, uint32_t>;
    auto parse = [](const JsonValue& e,
                    const std::string& p) -> absl::StatusOr<Backend> {
      if (absl::Status s = Expect(e, Type::kObject, p); !s.ok()) return s;
      if (absl::Status s = OnlyKeys(e, p, {"authority", "weight"}); !s.ok())
        return s;
      const JsonValue* a = Field(e, "authority");
      if (a == nullptr) return Bad(e, p, "authority is required");
      absl::StatusOr<std::string> authority = StringField(*a, p + ".authority");
      if (!authority.ok()) return authority.status();
      int64_t weight = 1;
      if (const JsonValue* w = Field(e, "weight")) {
        absl::StatusOr<int64_t> n = Integer(*w, p + ".weight", 0, 1 << 30);
        if (!n.ok()) return n.status();
        weight = *n;
      }
      return Backend(*authority, static_cast<uint32_t>(weight));
    };
    r.backends.emplace();
    if (absl::Status s =
            ParseArray(*b, path + ".backends", &*r.backends, parse);
        !s.ok())
      return s;
  }
  if (const JsonValue* f = Field(v, "first_available")) {
    if (absl::Status s = Expect(*f, Type::kBool, path + ".first_available");
        !s.ok())
      return s;
    r.first_available = f->boolean;
  }
  for (auto [key, field] :
       {std::make_pair("timeout_ms", &r.timeout_ms),
        std::make_pair("response_timeout_ms", &r.response_timeout_ms),
        std::make_pair("idle_timeout_ms", &r.idle_timeout_ms)}) {
    const JsonValue* t = Field(v, key);
    if (t == nullptr) continue;
    absl::StatusOr<int64_t> ms = Millis(*t, absl::StrCat(path, ".", key));
    if (!ms.ok()) return ms.status();
    *field = *ms;
  }
  if (const JsonValue* x = Field(v, "retry")) {
    absl::StatusOr<PolicyRetrySpec> retry =
        ParseRetry(*x, path + ".retry", grpc);
    if (!retry.ok()) return retry.status();
    r.retry = *std::move(retry);
  }
  for (auto [key, field] :
       {std::make_pair("request_headers", &r.request_headers),
        std::make_pair("response_headers", &r.response_headers)}) {
    if (const JsonValue* h = Field(v, key)) {
      absl::StatusOr<PolicyHeaderModifier> m =
          ParseModifier(*h, absl::StrCat(path, ".", key));
      if (!m.ok()) return m.status();
      *field = *std::move(m);
    }
  }
  if (const JsonValue* f = Field(v, "failure_injector")) {
    absl::StatusOr<PolicyFailureSpec> failure =
        ParseFailure(*f, path + ".failure_injector", grpc);
    if (!failure.ok()) return failure.status();
    r.failure_injector = *std::move(failure);
  }
  return r;
}

absl::StatusOr<PolicyRouteSpec> ParseRoute(const JsonValue& v,
                                           const std::string& path, bool grpc) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s = OnlyKeys(v, path, {"name", "hosts", "rules"}); !s.ok())
    return s;
  PolicyRouteSpec r;
  const JsonValue* name = Field(v, "name");
  if (name == nullptr) return Bad(v, path, "name is required");
  absl::StatusOr<std::string> n = StringField(*name, path + ".name");
  if (!n.ok()) return n.status();
  if (n->empty()) return Bad(*name, path + ".name", "a route needs a name");
  r.name = *n;
  if (const JsonValue* h = Field(v, "hosts")) {
    if (absl::Status s = ParseArray(*h, path + ".hosts", &r.hosts, StringField);
        !s.ok())
      return s;
  }
  const JsonValue* rules = Field(v, "rules");
  if (rules == nullptr) return Bad(v, path, "rules are required");
  auto parse = [grpc](const JsonValue& e, const std::string& p) {
    return ParseRule(e, p, grpc);
  };
  if (absl::Status s = ParseArray(*rules, path + ".rules", &r.rules, parse);
      !s.ok())
    return s;
  if (r.rules.empty()) {
    return Bad(*rules, path + ".rules", "a route needs at least one rule");
  }
  return r;
}

absl::StatusOr<PolicyAccrualSpec> ParseAccrual(const JsonValue& v,
                                               const std::string& path) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s = OnlyKeys(v, path,
                                {"max_failures", "min_backoff_ms",
                                 "max_backoff_ms", "min_ready_endpoints"});
      !s.ok())
    return s;
  PolicyAccrualSpec a;
  for (auto [key, field] :
       {std::make_pair("max_failures", &a.max_failures),
        std::make_pair("min_ready_endpoints", &a.min_ready_endpoints)}) {
    if (const JsonValue* f = Field(v, key)) {
      absl::StatusOr<int64_t> n =
          Integer(*f, absl::StrCat(path, ".", key), 0, 1 << 30);
      if (!n.ok()) return n.status();
      *field = static_cast<uint32_t>(*n);
    }
  }
  for (auto [key, field] :
       {std::make_pair("min_backoff_ms", &a.min_backoff_ms),
        std::make_pair("max_backoff_ms", &a.max_backoff_ms)}) {
    if (const JsonValue* f = Field(v, key)) {
      absl::StatusOr<int64_t> ms = Millis(*f, absl::StrCat(path, ".", key));
      if (!ms.ok()) return ms.status();
      *field = *ms;
    }
  }
  return a;
}

}  // namespace

absl::StatusOr<PolicySpec> ParsePolicy(const JsonValue& v,
                                       const std::string& path) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s =
          OnlyKeys(v, path, {"protocol", "routes", "failure_accrual"});
      !s.ok())
    return s;
  PolicySpec p;
  if (const JsonValue* f = Field(v, "protocol")) {
    absl::StatusOr<std::string> s = StringField(*f, path + ".protocol");
    if (!s.ok()) return s.status();
    constexpr absl::string_view kProtocols[] = {"grpc", "http2", "http1",
                                                "detect", "opaque"};
    if (std::find(std::begin(kProtocols), std::end(kProtocols), *s) ==
        std::end(kProtocols)) {
      return Bad(*f, path + ".protocol",
                 absl::StrCat("'", *s,
                              "': expected grpc, http2, http1, detect or "
                              "opaque"));
    }
    p.protocol = *s;
  }
  const bool grpc = p.protocol == "grpc";
  if (const JsonValue* r = Field(v, "routes")) {
    if (p.protocol == "opaque") {
      return Bad(*r, path + ".routes", "an opaque policy has no routes");
    }
    auto parse = [grpc](const JsonValue& e, const std::string& rp) {
      return ParseRoute(e, rp, grpc);
    };
    if (absl::Status s = ParseArray(*r, path + ".routes", &p.routes, parse);
        !s.ok())
      return s;
  }
  if (const JsonValue* a = Field(v, "failure_accrual")) {
    if (p.protocol == "opaque") {
      return Bad(*a, path + ".failure_accrual",
                 "an opaque policy has no failure accrual");
    }
    absl::StatusOr<PolicyAccrualSpec> accrual =
        ParseAccrual(*a, path + ".failure_accrual");
    if (!accrual.ok()) return accrual.status();
    p.failure_accrual = *accrual;
  }
  return p;
}

}  // namespace mesh::controlplane

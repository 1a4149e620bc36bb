#include "tools/mesh-control-plane/config.h"

#include <re2/re2.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "src/model/address.h"
#include "tools/mesh-control-plane/config_fields.h"
#include "tools/mesh-control-plane/json.h"

namespace mesh::controlplane {
namespace {

using Type = JsonValue::Type;

absl::StatusOr<EndpointSpec> ParseEndpoint(const JsonValue& v,
                                           const std::string& path) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s = OnlyKeys(
          v, path,
          {"address", "weight", "labels", "tls_identity", "zone", "healthy"});
      !s.ok()) {
    return s;
  }
  EndpointSpec e;
  auto address = v.object.find("address");
  if (address == v.object.end()) return Bad(v, path, "address is required");
  if (absl::Status s =
          Expect(address->second, Type::kString, path + ".address");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<internal::SocketAddress> parsed =
      internal::SocketAddress::Parse(address->second.string);
  if (!parsed.ok())
    return Bad(address->second, path + ".address", parsed.status().message());
  e.address = address->second.string;
  if (auto w = v.object.find("weight"); w != v.object.end()) {
    absl::StatusOr<int64_t> weight =
        Integer(w->second, path + ".weight", 1, 1 << 30);
    if (!weight.ok()) return weight.status();
    e.weight = static_cast<uint32_t>(*weight);
  }
  if (auto l = v.object.find("labels"); l != v.object.end()) {
    if (absl::Status s = Expect(l->second, Type::kObject, path + ".labels");
        !s.ok())
      return s;
    for (const auto& [key, value] : l->second.object) {
      std::string p = absl::StrCat(path, ".labels.", key);
      if (absl::Status s = Expect(value, Type::kString, p); !s.ok()) return s;
      e.labels[key] = value.string;
    }
  }
  if (auto t = v.object.find("tls_identity"); t != v.object.end()) {
    if (absl::Status s =
            Expect(t->second, Type::kString, path + ".tls_identity");
        !s.ok()) {
      return s;
    }
    e.tls_identity = t->second.string;
  }
  if (auto z = v.object.find("zone"); z != v.object.end()) {
    if (absl::Status s = Expect(z->second, Type::kString, path + ".zone");
        !s.ok())
      return s;
    e.zone = z->second.string;
  }
  if (auto h = v.object.find("healthy"); h != v.object.end()) {
    if (absl::Status s = Expect(h->second, Type::kBool, path + ".healthy");
        !s.ok())
      return s;
    e.healthy = h->second.boolean;
  }
  return e;
}

// A list of (authority, weight), as a profile's and a route's dst_overrides
// both are: [{"authority": "books-v2.local:7001", "weight": 9000}, ...].
absl::Status ParseDstOverrides(
    const JsonValue& v, const std::string& path,
    std::vector<std::pair<std::string, uint32_t>>* out) {
  if (absl::Status s = Expect(v, Type::kArray, path); !s.ok()) return s;
  for (size_t i = 0; i < v.array.size(); ++i) {
    const JsonValue& o = v.array[i];
    std::string op = absl::StrCat(path, "[", i, "]");
    if (absl::Status s = Expect(o, Type::kObject, op); !s.ok()) return s;
    if (absl::Status s = OnlyKeys(o, op, {"authority", "weight"}); !s.ok())
      return s;
    auto a = o.object.find("authority");
    auto w = o.object.find("weight");
    if (a == o.object.end() || w == o.object.end()) {
      return Bad(o, op, "authority and weight are required");
    }
    if (absl::Status s = Expect(a->second, Type::kString, op + ".authority");
        !s.ok()) {
      return s;
    }
    absl::StatusOr<int64_t> weight =
        Integer(w->second, op + ".weight", 0, 1 << 30);
    if (!weight.ok()) return weight.status();
    out->emplace_back(a->second.string, static_cast<uint32_t>(*weight));
  }
  return absl::OkStatus();
}

// A route's header conditions: at most this many, each regex an RE2
// program of at most this size (a bound on what a client compiles).
constexpr size_t kMaxHeaderConditions = 16;
constexpr int kMaxRegexProgramSize = 10000;

absl::StatusOr<HeaderMatchSpec> ParseHeaderMatch(const JsonValue& v,
                                                 const std::string& path) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s = OnlyKeys(
          v, path, {"name", "exact", "prefix", "regex", "present", "invert"});
      !s.ok()) {
    return s;
  }
  HeaderMatchSpec h;
  auto name = v.object.find("name");
  if (name == v.object.end()) return Bad(v, path, "name is required");
  if (absl::Status s = Expect(name->second, Type::kString, path + ".name");
      !s.ok()) {
    return s;
  }
  if (std::string problem = HeaderNameProblem(name->second.string);
      !problem.empty()) {
    return Bad(name->second, path + ".name", problem);
  }
  h.name = name->second.string;
  // Exactly one kind; the object is a map, so count rather than take the
  // first.
  using Kind = HeaderMatchSpec::Kind;
  static constexpr std::pair<const char*, Kind> kKinds[] = {
      {"exact", Kind::kExact},
      {"prefix", Kind::kPrefix},
      {"regex", Kind::kRegex},
      {"present", Kind::kPresent}};
  const JsonValue* kind_value = nullptr;
  std::string kind_path;
  int kinds = 0;
  for (const auto& [key, kind] : kKinds) {
    auto it = v.object.find(key);
    if (it == v.object.end()) continue;
    ++kinds;
    kind_value = &it->second;
    kind_path = absl::StrCat(path, ".", key);
    h.kind = kind;
  }
  if (kinds != 1) {
    return Bad(v, path,
               "expected exactly one of exact, prefix, regex, present");
  }
  if (h.kind == Kind::kPresent) {
    if (absl::Status s = Expect(*kind_value, Type::kBool, kind_path); !s.ok())
      return s;
    if (!kind_value->boolean) {
      return Bad(*kind_value, kind_path,
                 "expected true (use invert to match an absent header)");
    }
  } else {
    if (absl::Status s = Expect(*kind_value, Type::kString, kind_path); !s.ok())
      return s;
    h.value = kind_value->string;
  }
  if (h.kind == Kind::kPrefix && h.value.empty()) {
    return Bad(*kind_value, kind_path,
               "an empty prefix matches any value: use present");
  }
  if (h.kind == Kind::kRegex) {
    re2::RE2 re(h.value, re2::RE2::Quiet);
    if (!re.ok()) {
      return Bad(*kind_value, kind_path,
                 absl::StrCat("not an RE2 regex: ", re.error()));
    }
    if (re.ProgramSize() > kMaxRegexProgramSize) {
      return Bad(*kind_value, kind_path,
                 absl::StrCat("the RE2 program has size ", re.ProgramSize(),
                              ", more than ", kMaxRegexProgramSize));
    }
  }
  if (auto i = v.object.find("invert"); i != v.object.end()) {
    if (absl::Status s = Expect(i->second, Type::kBool, path + ".invert");
        !s.ok())
      return s;
    h.invert = i->second.boolean;
  }
  return h;
}

// The gRPC codes an xDS retry policy may name (gRFC A44), as the config
// spells them; stored in xDS's spelling.
constexpr absl::string_view kRetryableCodes[] = {
    "CANCELLED", "DEADLINE_EXCEEDED", "INTERNAL", "RESOURCE_EXHAUSTED",
    "UNAVAILABLE"};

// "DEADLINE_EXCEEDED" → "deadline-exceeded".
std::string XdsRetryOnName(absl::string_view code) {
  std::string out = absl::AsciiStrToLower(code);
  for (char& c : out) {
    if (c == '_') c = '-';
  }
  return out;
}

absl::StatusOr<RouteSpec> ParseRoute(const JsonValue& v,
                                     const std::string& path) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s = OnlyKeys(v, path,
                                {"name", "path_regex", "method", "timeout_ms",
                                 "retryable", "failure_statuses", "headers",
                                 "retry_on", "max_retries", "dst_overrides"});
      !s.ok()) {
    return s;
  }
  RouteSpec r;
  for (auto [key, field] : {std::make_pair("name", &r.name),
                            std::make_pair("path_regex", &r.path_regex),
                            std::make_pair("method", &r.method)}) {
    auto it = v.object.find(key);
    if (it == v.object.end()) continue;
    if (absl::Status s =
            Expect(it->second, Type::kString, absl::StrCat(path, ".", key));
        !s.ok()) {
      return s;
    }
    *field = it->second.string;
  }
  if (auto t = v.object.find("timeout_ms"); t != v.object.end()) {
    absl::StatusOr<int64_t> ms =
        Integer(t->second, path + ".timeout_ms", 0, 86400000);
    if (!ms.ok()) return ms.status();
    r.timeout_ms = *ms;
  }
  if (auto t = v.object.find("retryable"); t != v.object.end()) {
    if (absl::Status s = Expect(t->second, Type::kBool, path + ".retryable");
        !s.ok())
      return s;
    r.retryable = t->second.boolean;
  }
  if (auto f = v.object.find("failure_statuses"); f != v.object.end()) {
    std::string p = path + ".failure_statuses";
    if (absl::Status s = Expect(f->second, Type::kArray, p); !s.ok()) return s;
    for (size_t i = 0; i < f->second.array.size(); ++i) {
      const JsonValue& range = f->second.array[i];
      std::string rp = absl::StrCat(p, "[", i, "]");
      if (!range.is(Type::kArray) || range.array.size() != 2) {
        return Bad(range, rp, "expected [min, max]");
      }
      // Passed through unchecked (0..1000): the client drops bad ranges.
      absl::StatusOr<int64_t> lo = Integer(range.array[0], rp, 0, 1000);
      absl::StatusOr<int64_t> hi = Integer(range.array[1], rp, 0, 1000);
      if (!lo.ok()) return lo.status();
      if (!hi.ok()) return hi.status();
      r.failure_statuses.emplace_back(*lo, *hi);
    }
  }
  if (auto h = v.object.find("headers"); h != v.object.end()) {
    std::string hp = path + ".headers";
    if (absl::Status s = Expect(h->second, Type::kArray, hp); !s.ok()) return s;
    if (h->second.array.size() > kMaxHeaderConditions) {
      return Bad(h->second, hp,
                 absl::StrCat(h->second.array.size(),
                              " header conditions, more than the limit of ",
                              kMaxHeaderConditions));
    }
    for (size_t i = 0; i < h->second.array.size(); ++i) {
      absl::StatusOr<HeaderMatchSpec> m =
          ParseHeaderMatch(h->second.array[i], absl::StrCat(hp, "[", i, "]"));
      if (!m.ok()) return m.status();
      r.headers.push_back(*std::move(m));
    }
  }
  if (auto o = v.object.find("retry_on"); o != v.object.end()) {
    std::string op = path + ".retry_on";
    if (absl::Status s = Expect(o->second, Type::kArray, op); !s.ok()) return s;
    if (o->second.array.empty()) {
      return Bad(o->second, op,
                 "expected at least one code (leave retry_on out to retry on "
                 "UNAVAILABLE)");
    }
    for (size_t i = 0; i < o->second.array.size(); ++i) {
      const JsonValue& code = o->second.array[i];
      std::string cp = absl::StrCat(op, "[", i, "]");
      if (absl::Status s = Expect(code, Type::kString, cp); !s.ok()) return s;
      bool known = false;
      for (absl::string_view k : kRetryableCodes) known |= code.string == k;
      if (!known) {
        return Bad(code, cp,
                   absl::StrCat("'", code.string,
                                "': xDS retries gRPC calls only on CANCELLED, "
                                "DEADLINE_EXCEEDED, INTERNAL, "
                                "RESOURCE_EXHAUSTED, UNAVAILABLE (upper "
                                "case)"));
      }
      std::string name = XdsRetryOnName(code.string);
      for (const std::string& seen : r.retry_on) {
        if (seen == name) {
          return Bad(code, cp, absl::StrCat(code.string, " is listed twice"));
        }
      }
      r.retry_on.push_back(std::move(name));
    }
  }
  if (auto m = v.object.find("max_retries"); m != v.object.end()) {
    absl::StatusOr<int64_t> n =
        Integer(m->second, path + ".max_retries", 1, 10);
    if (!n.ok()) return n.status();
    r.max_retries = static_cast<uint32_t>(*n);
  }
  // Checked once every key is read: the object's keys come in name order,
  // not the file's, so "retryable" may come after these.
  if (!r.retryable) {
    for (const char* key : {"retry_on", "max_retries"}) {
      if (auto it = v.object.find(key); it != v.object.end()) {
        return Bad(it->second, absl::StrCat(path, ".", key),
                   "only a retryable route retries (set \"retryable\": true)");
      }
    }
  }
  if (auto d = v.object.find("dst_overrides"); d != v.object.end()) {
    if (absl::Status s = ParseDstOverrides(d->second, path + ".dst_overrides",
                                           &r.dst_overrides);
        !s.ok()) {
      return s;
    }
  }
  return r;
}

absl::StatusOr<ProfileSpec> ParseProfile(const JsonValue& v,
                                         const std::string& path) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s =
          OnlyKeys(v, path, {"routes", "retry_budget", "dst_overrides"});
      !s.ok()) {
    return s;
  }
  ProfileSpec p;
  if (auto routes = v.object.find("routes"); routes != v.object.end()) {
    if (absl::Status s = Expect(routes->second, Type::kArray, path + ".routes");
        !s.ok()) {
      return s;
    }
    for (size_t i = 0; i < routes->second.array.size(); ++i) {
      absl::StatusOr<RouteSpec> r = ParseRoute(
          routes->second.array[i], absl::StrCat(path, ".routes[", i, "]"));
      if (!r.ok()) return r.status();
      p.routes.push_back(*std::move(r));
    }
  }
  if (auto b = v.object.find("retry_budget"); b != v.object.end()) {
    std::string bp = path + ".retry_budget";
    if (absl::Status s = Expect(b->second, Type::kObject, bp); !s.ok())
      return s;
    if (absl::Status s = OnlyKeys(
            b->second, bp, {"retry_ratio", "min_retries_per_second", "ttl_ms"});
        !s.ok()) {
      return s;
    }
    BudgetSpec budget;
    if (auto r = b->second.object.find("retry_ratio");
        r != b->second.object.end()) {
      if (absl::Status s =
              Expect(r->second, Type::kNumber, bp + ".retry_ratio");
          !s.ok()) {
        return s;
      }
      budget.retry_ratio = r->second.number;
    }
    if (auto m = b->second.object.find("min_retries_per_second");
        m != b->second.object.end()) {
      absl::StatusOr<int64_t> n =
          Integer(m->second, bp + ".min_retries_per_second", 0, 1 << 30);
      if (!n.ok()) return n.status();
      budget.min_retries_per_second = static_cast<uint32_t>(*n);
    }
    if (auto t = b->second.object.find("ttl_ms"); t != b->second.object.end()) {
      absl::StatusOr<int64_t> n =
          Integer(t->second, bp + ".ttl_ms", 0, 86400000);
      if (!n.ok()) return n.status();
      budget.ttl_ms = *n;
    }
    p.retry_budget = budget;
  }
  if (auto d = v.object.find("dst_overrides"); d != v.object.end()) {
    if (absl::Status s = ParseDstOverrides(d->second, path + ".dst_overrides",
                                           &p.dst_overrides);
        !s.ok()) {
      return s;
    }
  }
  return p;
}

absl::Status ParseTargetList(const JsonValue& root, const char* key,
                             std::set<std::string>* out) {
  auto it = root.object.find(key);
  if (it == root.object.end()) return absl::OkStatus();
  if (absl::Status s = Expect(it->second, Type::kArray, key); !s.ok()) return s;
  for (size_t i = 0; i < it->second.array.size(); ++i) {
    const JsonValue& t = it->second.array[i];
    std::string p = absl::StrCat(key, "[", i, "]");
    if (absl::Status s = Expect(t, Type::kString, p); !s.ok()) return s;
    out->insert(t.string);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Config> ParseConfig(absl::string_view text) {
  absl::StatusOr<JsonValue> root = ParseJson(text);
  if (!root.ok()) return root.status();
  if (absl::Status s = Expect(*root, Type::kObject, "(top level)"); !s.ok())
    return s;
  if (absl::Status s = OnlyKeys(
          *root, "(top level)",
          {"targets", "not_mesh", "silent", "xds_certificate_provider"});
      !s.ok()) {
    return s;
  }
  Config config;
  if (auto targets = root->object.find("targets");
      targets != root->object.end()) {
    if (absl::Status s = Expect(targets->second, Type::kObject, "targets");
        !s.ok())
      return s;
    for (const auto& [name, spec] : targets->second.object) {
      std::string path = absl::StrCat("targets[\"", name, "\"]");
      if (absl::Status s = internal::ValidateDestination(name); !s.ok()) {
        return Bad(spec, path, s.message());
      }
      if (absl::Status s = Expect(spec, Type::kObject, path); !s.ok()) return s;
      if (absl::Status s =
              OnlyKeys(spec, path, {"endpoints", "profile", "policy"});
          !s.ok())
        return s;
      TargetSpec target;
      if (auto eps = spec.object.find("endpoints"); eps != spec.object.end()) {
        if (absl::Status s =
                Expect(eps->second, Type::kArray, path + ".endpoints");
            !s.ok()) {
          return s;
        }
        std::set<std::string> seen;
        for (size_t i = 0; i < eps->second.array.size(); ++i) {
          std::string ep = absl::StrCat(path, ".endpoints[", i, "]");
          absl::StatusOr<EndpointSpec> e =
              ParseEndpoint(eps->second.array[i], ep);
          if (!e.ok()) return e.status();
          if (!seen.insert(e->address).second) {
            return Bad(eps->second.array[i], ep,
                       absl::StrCat(e->address, " is listed twice"));
          }
          target.endpoints.push_back(*std::move(e));
        }
      }
      if (auto profile = spec.object.find("profile");
          profile != spec.object.end()) {
        absl::StatusOr<ProfileSpec> p =
            ParseProfile(profile->second, path + ".profile");
        if (!p.ok()) return p.status();
        target.profile = *std::move(p);
      }
      if (auto policy = spec.object.find("policy");
          policy != spec.object.end()) {
        absl::StatusOr<PolicySpec> p =
            ParsePolicy(policy->second, path + ".policy");
        if (!p.ok()) return p.status();
        target.policy = *std::move(p);
      }
      config.targets.emplace(name, std::move(target));
    }
  }
  if (absl::Status s = ParseTargetList(*root, "not_mesh", &config.not_mesh);
      !s.ok())
    return s;
  if (absl::Status s = ParseTargetList(*root, "silent", &config.silent);
      !s.ok())
    return s;
  if (auto p = root->object.find("xds_certificate_provider");
      p != root->object.end()) {
    if (absl::Status s =
            Expect(p->second, Type::kString, "xds_certificate_provider");
        !s.ok()) {
      return s;
    }
    // gRPC's clients refuse a TLS context without a provider instance.
    if (p->second.string.empty()) {
      return Bad(p->second, "xds_certificate_provider",
                 "expected the name of a certificate provider instance of the "
                 "clients' bootstrap, not an empty string");
    }
    config.xds_certificate_provider = p->second.string;
  }
  return config;
}

}  // namespace mesh::controlplane

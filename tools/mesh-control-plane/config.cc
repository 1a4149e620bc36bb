#include "tools/mesh-control-plane/config.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/base/utf8.h"
#include "src/model/address.h"
#include "tools/mesh-control-plane/json.h"

namespace mesh::controlplane {
namespace {

namespace dst = ::io::linkerd::proxy::destination;
using Type = JsonValue::Type;

absl::Status Bad(const JsonValue& v, const std::string& path,
                 absl::string_view problem) {
  // Printable: names and values from the file may hold any byte.
  return absl::InvalidArgumentError(
      absl::StrCat("line ", v.line, ": ", internal::PrintableText(path), ": ",
                   internal::PrintableText(problem)));
}

absl::Status Expect(const JsonValue& v, Type type, const std::string& path) {
  static const char* kNames[] = {"null",     "true or false", "a number",
                                 "a string", "an array",      "an object"};
  if (v.is(type)) return absl::OkStatus();
  return Bad(v, path,
             absl::StrCat("expected ", kNames[static_cast<int>(type)]));
}

// Every key of `object` must be one of `known`: a typo is an error, not a
// silently ignored field.
absl::Status OnlyKeys(const JsonValue& object, const std::string& path,
                      std::initializer_list<absl::string_view> known) {
  for (const auto& [key, value] : object.object) {
    bool ok = false;
    for (absl::string_view k : known) ok |= key == k;
    if (!ok) return Bad(value, absl::StrCat(path, ".", key), "unknown field");
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Integer(const JsonValue& v, const std::string& path,
                                int64_t min, int64_t max) {
  if (absl::Status s = Expect(v, Type::kNumber, path); !s.ok()) return s;
  if (v.number != std::floor(v.number) || v.number < min || v.number > max) {
    return Bad(v, path,
               absl::StrCat("expected a whole number in ", min, "..", max));
  }
  return static_cast<int64_t>(v.number);
}

absl::StatusOr<EndpointSpec> ParseEndpoint(const JsonValue& v,
                                           const std::string& path) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s =
          OnlyKeys(v, path, {"address", "weight", "labels", "tls_identity"});
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
  return e;
}

absl::StatusOr<RouteSpec> ParseRoute(const JsonValue& v,
                                     const std::string& path) {
  if (absl::Status s = Expect(v, Type::kObject, path); !s.ok()) return s;
  if (absl::Status s = OnlyKeys(v, path,
                                {"name", "path_regex", "method", "timeout_ms",
                                 "retryable", "failure_statuses"});
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
    std::string dp = path + ".dst_overrides";
    if (absl::Status s = Expect(d->second, Type::kArray, dp); !s.ok()) return s;
    for (size_t i = 0; i < d->second.array.size(); ++i) {
      const JsonValue& o = d->second.array[i];
      std::string op = absl::StrCat(dp, "[", i, "]");
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
      p.dst_overrides.emplace_back(a->second.string,
                                   static_cast<uint32_t>(*weight));
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
  if (absl::Status s =
          OnlyKeys(*root, "(top level)", {"targets", "not_mesh", "silent"});
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
      if (absl::Status s = OnlyKeys(spec, path, {"endpoints", "profile"});
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
      config.targets.emplace(name, std::move(target));
    }
  }
  if (absl::Status s = ParseTargetList(*root, "not_mesh", &config.not_mesh);
      !s.ok())
    return s;
  if (absl::Status s = ParseTargetList(*root, "silent", &config.silent);
      !s.ok())
    return s;
  return config;
}

dst::WeightedAddr ToWire(const EndpointSpec& e) {
  dst::WeightedAddr out;
  // ParseConfig checked the address (ParseEndpoint), so it parses.
  internal::SocketAddress a = *internal::SocketAddress::Parse(e.address);
  auto* tcp = out.mutable_addr();
  tcp->set_port(a.port());
  if (a.ip().is_v6()) {
    tcp->mutable_ip()->mutable_ipv6()->set_first(a.ip().v6_high());
    tcp->mutable_ip()->mutable_ipv6()->set_last(a.ip().v6_low());
  } else {
    tcp->mutable_ip()->set_ipv4(a.ip().v4());
  }
  out.set_weight(e.weight);
  for (const auto& [k, v] : e.labels) (*out.mutable_metric_labels())[k] = v;
  if (!e.tls_identity.empty()) {
    out.mutable_tls_identity()->mutable_dns_like_identity()->set_name(
        e.tls_identity);
  }
  out.mutable_protocol_hint()->mutable_h2();
  return out;
}

dst::DestinationProfile ProfileFor(const Config& config,
                                   const std::string& target) {
  dst::DestinationProfile out;
  std::string name(absl::string_view(target).substr(0, target.rfind(':')));
  out.set_fully_qualified_name(name);
  auto it = config.targets.find(target);
  const ProfileSpec* spec = it != config.targets.end() && it->second.profile
                                ? &*it->second.profile
                                : nullptr;
  BudgetSpec budget =
      spec && spec->retry_budget ? *spec->retry_budget : BudgetSpec{};
  out.mutable_retry_budget()->set_retry_ratio(
      static_cast<float>(budget.retry_ratio));
  out.mutable_retry_budget()->set_min_retries_per_second(
      budget.min_retries_per_second);
  out.mutable_retry_budget()->mutable_ttl()->set_seconds(budget.ttl_ms / 1000);
  out.mutable_retry_budget()->mutable_ttl()->set_nanos((budget.ttl_ms % 1000) *
                                                       1000000);
  if (spec == nullptr) return out;
  for (const RouteSpec& r : spec->routes) {
    dst::Route* route = out.add_routes();
    auto* all = route->mutable_condition()->mutable_all();
    if (!r.path_regex.empty())
      all->add_matches()->mutable_path()->set_regex(r.path_regex);
    if (!r.method.empty()) {
      static const char* kRegistered[] = {"GET",     "POST",  "PUT",
                                          "DELETE",  "PATCH", "OPTIONS",
                                          "CONNECT", "HEAD",  "TRACE"};
      auto* m = all->add_matches()->mutable_method();
      m->set_unregistered(r.method);
      for (int i = 0; i < 9; ++i) {
        if (r.method == kRegistered[i]) {
          m->set_registered(
              static_cast<
                  io::linkerd::proxy::http_types::HttpMethod::Registered>(i));
        }
      }
    }
    if (!r.name.empty()) (*route->mutable_metrics_labels())["route"] = r.name;
    route->set_is_retryable(r.retryable);
    if (r.timeout_ms > 0) {
      route->mutable_timeout()->set_seconds(r.timeout_ms / 1000);
      route->mutable_timeout()->set_nanos((r.timeout_ms % 1000) * 1000000);
    }
    for (const auto& [lo, hi] : r.failure_statuses) {
      dst::ResponseClass* c = route->add_response_classes();
      c->set_is_failure(true);
      c->mutable_condition()->mutable_status()->set_min(lo);
      c->mutable_condition()->mutable_status()->set_max(hi);
    }
  }
  for (const auto& [authority, weight] : spec->dst_overrides) {
    dst::WeightedDst* d = out.add_dst_overrides();
    d->set_authority(authority);
    d->set_weight(weight);
  }
  return out;
}

}  // namespace mesh::controlplane

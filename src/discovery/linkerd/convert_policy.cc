// OutboundPolicies policies → ServiceConfig. See convert_policy.h.
#include "src/discovery/linkerd/convert_policy.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "re2/re2.h"
#include "src/discovery/linkerd/convert.h"
#include "src/discovery/linkerd/convert_match.h"
#include "src/model/address.h"
#include "src/model/http_syntax.h"
#include "src/route/route_table.h"

namespace mesh::internal::linkerd {
namespace {

namespace out = ::io::linkerd::proxy::outbound;
namespace hr = ::io::linkerd::proxy::http_route;
namespace gr = ::io::linkerd::proxy::grpc_route;
namespace meta = ::io::linkerd::proxy::meta;

// How well a route's hosts match the target's host: (2, length) exact,
// (1, labels) a suffix, (0, 0) a route without hosts.
using HostRank = std::pair<int, size_t>;

// HTTP: (path kind: 2 whole path, 1 prefix, 0 none; prefix length; header
// matches; query matches; method). gRPC: (0, service length, method
// length, header matches, 0).
using MatchRank = std::tuple<int, size_t, size_t, size_t, size_t>;

// One model route, with where it ranks and where it came from.
struct Ranked {
  HostRank host;
  MatchRank match;
  Route route;
};

std::string Quoted(absl::string_view s) {
  return absl::StrCat("'", absl::CEscape(s.substr(0, 200)),
                      s.size() > 200 ? "…'" : "'");
}

// "HTTPRoute ns/name" or "default http".
std::string MetaName(const meta::Metadata& m) {
  if (m.has_resource()) {
    const meta::Resource& r = m.resource();
    return absl::StrCat(r.kind().empty() ? "route" : r.kind(), " ",
                        r.namespace_().empty() ? "" : r.namespace_() + "/",
                        r.name());
  }
  return absl::StrCat("default ", m.default_());
}

// linkerd2-proxy's route labels: {prefix}_group, _kind, _namespace, _name.
void AddLabels(const meta::Metadata& m, absl::string_view prefix,
               std::map<std::string, std::string>* labels) {
  if (m.has_resource()) {
    const meta::Resource& r = m.resource();
    (*labels)[absl::StrCat(prefix, "_group")] = r.group();
    (*labels)[absl::StrCat(prefix, "_kind")] = r.kind();
    (*labels)[absl::StrCat(prefix, "_namespace")] = r.namespace_();
    (*labels)[absl::StrCat(prefix, "_name")] = r.name();
  } else {
    (*labels)[absl::StrCat(prefix, "_group")] = "";
    (*labels)[absl::StrCat(prefix, "_kind")] = "default";
    (*labels)[absl::StrCat(prefix, "_namespace")] = "";
    (*labels)[absl::StrCat(prefix, "_name")] = m.default_();
  }
}

std::optional<HostRank> RankHost(
    const google::protobuf::RepeatedPtrField<hr::HostMatch>& hosts,
    absl::string_view host) {
  if (hosts.empty()) return HostRank{0, 0};
  std::optional<HostRank> best;
  std::vector<absl::string_view> labels = absl::StrSplit(host, '.');
  for (const hr::HostMatch& h : hosts) {
    std::optional<HostRank> rank;
    if (h.has_suffix()) {
      const auto& reversed = h.suffix().reverse_labels();
      // A wildcard stands for at least one more label.
      if (static_cast<size_t>(reversed.size()) < labels.size()) {
        bool match = true;
        for (int i = 0; i < reversed.size() && match; ++i) {
          match = absl::EqualsIgnoreCase(reversed[i],
                                         labels[labels.size() - 1 - i]);
        }
        if (match) rank = HostRank{1, static_cast<size_t>(reversed.size())};
      }
    } else {
      absl::string_view exact = h.exact();
      if (absl::EndsWith(exact, ".")) exact.remove_suffix(1);
      if (absl::EqualsIgnoreCase(exact, host)) {
        rank = HostRank{2, host.size()};
      }
    }
    if (rank.has_value() && (!best.has_value() || *rank > *best)) best = rank;
  }
  return best;
}

// The conditions together; one alone as itself (one node less to walk per
// call).
RequestMatch AllOf(std::vector<RequestMatch> all) {
  if (all.size() == 1) return std::move(all[0]);
  return RequestMatch::All(std::move(all));
}

absl::Status Invalid(std::string what) {
  return absl::InvalidArgumentError(std::move(what));
}

absl::Status CheckRegex(absl::string_view field, const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(1 << 20);
  RE2 re(pattern, options);
  if (!re.ok()) {
    return Invalid(
        absl::StrCat(field, " regex ", Quoted(pattern), ": ", re.error()));
  }
  return absl::OkStatus();
}

absl::StatusOr<RequestMatch> ConvertHeader(int index,
                                           const hr::HeaderMatch& wire) {
  const std::string field = absl::StrCat("headers #", index);
  std::string name = absl::AsciiStrToLower(wire.name());
  if (!IsHttpToken(name)) {
    return Invalid(absl::StrCat(field, " name ", Quoted(wire.name()),
                                " is not a header name"));
  }
  HeaderMatch h;
  h.name = std::move(name);
  if (wire.value_case() == hr::HeaderMatch::kExact) {
    h.kind = HeaderMatch::Kind::kExact;
    h.value = wire.exact();
  } else if (wire.value_case() == hr::HeaderMatch::kRegex) {
    if (absl::Status s = CheckRegex(field, wire.regex()); !s.ok()) return s;
    h.kind = HeaderMatch::Kind::kRegex;
    h.value = wire.regex();
  } else {
    return Invalid(
        absl::StrCat(field, " (", Quoted(h.name), ") has no value to match"));
  }
  return RequestMatch::Header(std::move(h));
}

absl::StatusOr<RequestMatch> ConvertQueryParam(
    int index, const hr::QueryParamMatch& wire) {
  const std::string field = absl::StrCat("query_params #", index);
  if (wire.name().empty()) return Invalid(absl::StrCat(field, " has no name"));
  HeaderMatch q;
  q.name = wire.name();
  if (wire.value_case() == hr::QueryParamMatch::kExact) {
    q.kind = HeaderMatch::Kind::kExact;
    q.value = wire.exact();
  } else if (wire.value_case() == hr::QueryParamMatch::kRegex) {
    if (absl::Status s = CheckRegex(field, wire.regex()); !s.ok()) return s;
    q.kind = HeaderMatch::Kind::kRegex;
    q.value = wire.regex();
  } else {
    return Invalid(
        absl::StrCat(field, " (", Quoted(q.name), ") has no value to match"));
  }
  return RequestMatch::QueryParam(std::move(q));
}

// An HTTPRoute match: all its parts, and its rank.
absl::StatusOr<std::pair<RequestMatch, MatchRank>> ConvertMatch(
    const hr::HttpRouteMatch& wire) {
  std::vector<RequestMatch> all;
  int path_kind = 0;
  size_t prefix_length = 0;
  if (wire.has_path()) {
    const hr::PathMatch& path = wire.path();
    switch (path.kind_case()) {
      case hr::PathMatch::kExact:
        if (!absl::StartsWith(path.exact(), "/")) {
          return Invalid(absl::StrCat("path exact ", Quoted(path.exact()),
                                      " does not start with '/'"));
        }
        all.push_back(RequestMatch::PathExact(path.exact()));
        path_kind = 2;
        break;
      case hr::PathMatch::kPrefix: {
        absl::string_view prefix = path.prefix();
        if (!absl::StartsWith(prefix, "/")) {
          return Invalid(absl::StrCat("path prefix ", Quoted(prefix),
                                      " does not start with '/'"));
        }
        // Whole segments: "/books" is "/books" and "/books/…", not
        // "/bookshelf"; a trailing '/' changes nothing.
        while (absl::EndsWith(prefix, "/")) prefix.remove_suffix(1);
        if (!prefix.empty()) {
          all.push_back(RequestMatch::Any(
              {RequestMatch::PathExact(std::string(prefix)),
               RequestMatch::PathPrefix(absl::StrCat(prefix, "/"))}));
        }
        path_kind = 1;
        prefix_length = std::max<size_t>(prefix.size(), 1);
        break;
      }
      case hr::PathMatch::kRegex:
        if (absl::Status s = CheckRegex("path", path.regex()); !s.ok()) {
          return s;
        }
        all.push_back(RequestMatch::Path(path.regex()));
        path_kind = 2;
        break;
      case hr::PathMatch::KIND_NOT_SET:
        return Invalid("path has no kind (exact, prefix or regex)");
    }
  }
  for (int i = 0; i < wire.headers_size(); ++i) {
    absl::StatusOr<RequestMatch> h = ConvertHeader(i, wire.headers(i));
    if (!h.ok()) return h.status();
    all.push_back(*std::move(h));
  }
  for (int i = 0; i < wire.query_params_size(); ++i) {
    absl::StatusOr<RequestMatch> q = ConvertQueryParam(i, wire.query_params(i));
    if (!q.ok()) return q.status();
    all.push_back(*std::move(q));
  }
  if (wire.has_method()) {
    absl::StatusOr<std::string> method = ConvertMethod(wire.method());
    if (!method.ok()) {
      return Invalid(absl::StrCat("method: ", method.status().message()));
    }
    all.push_back(RequestMatch::Method(*std::move(method)));
  }
  MatchRank rank{
      path_kind, prefix_length, static_cast<size_t>(wire.headers_size()),
      static_cast<size_t>(wire.query_params_size()), wire.has_method() ? 1 : 0};
  return std::make_pair(AllOf(std::move(all)), rank);
}

// A GRPCRoute match: the method's path and the headers, and its rank.
absl::StatusOr<std::pair<RequestMatch, MatchRank>> ConvertMatch(
    const gr::GrpcRouteMatch& wire) {
  std::vector<RequestMatch> all;
  const std::string& service = wire.rpc().service();
  const std::string& method = wire.rpc().method();
  if (absl::StrContains(service, '/') || absl::StrContains(method, '/')) {
    return Invalid(absl::StrCat("rpc ", Quoted(service), "/", Quoted(method),
                                ": a service or method name holds '/'"));
  }
  if (!service.empty() && !method.empty()) {
    all.push_back(
        RequestMatch::PathExact(absl::StrCat("/", service, "/", method)));
  } else if (!service.empty()) {
    all.push_back(RequestMatch::PathPrefix(absl::StrCat("/", service, "/")));
  } else if (!method.empty()) {
    all.push_back(
        RequestMatch::Path(absl::StrCat("/[^/]+/", RE2::QuoteMeta(method))));
  }
  for (int i = 0; i < wire.headers_size(); ++i) {
    absl::StatusOr<RequestMatch> h = ConvertHeader(i, wire.headers(i));
    if (!h.ok()) return h.status();
    all.push_back(*std::move(h));
  }
  MatchRank rank{0, service.size(), method.size(),
                 static_cast<size_t>(wire.headers_size()), 0};
  return std::make_pair(AllOf(std::move(all)), rank);
}

// A ratio in millionths; nullopt for a zero denominator.
std::optional<uint32_t> PerMillion(const hr::Ratio* ratio) {
  if (ratio == nullptr) return 1'000'000;
  if (ratio->denominator() == 0) return std::nullopt;
  uint64_t n = std::min(ratio->numerator(), ratio->denominator());
  return static_cast<uint32_t>(n * 1'000'000 / ratio->denominator());
}

// A header modifier filter; INVALID_ARGUMENT naming the bad name or value.
template <typename Wire>
absl::StatusOr<HeaderModifier> ConvertHeaderModifier(const Wire& wire) {
  HeaderModifier m;
  for (const auto& h : wire.add().headers()) {
    m.add.emplace_back(absl::AsciiStrToLower(h.name()), h.value());
  }
  for (const auto& h : wire.set().headers()) {
    m.set.emplace_back(absl::AsciiStrToLower(h.name()), h.value());
  }
  for (const std::string& name : wire.remove()) {
    m.remove.push_back(absl::AsciiStrToLower(name));
  }
  if (absl::Status s = ValidateHeaderModifier(m); !s.ok()) return s;
  return m;
}

// Calls of the route fail at once with `status`, reaching no backend.
void FailAlways(Route* route, absl::Status status) {
  route->fault.abort_per_million = 1'000'000;
  route->fault.abort_code = status.code();
  route->fault.abort_message = std::string(status.message());
}

// The context of a rule's lines: "GRPCRoute ns/name rule #1".
struct RuleContext {
  std::string name;
  std::vector<std::string>* dropped;
  // The backends' balancer settings, by path (first seen wins).
  std::map<std::string, BackendPolicy>* backends;
  // The forward backends' endpoints, by cluster name (first seen wins).
  std::map<std::string, Endpoint>* forwards;
  void Line(absl::string_view what) const {
    dropped->push_back(absl::StrCat(name, ": ", what));
  }
};

// A balancer's Peak-EWMA default_rtt and decay (either load kind) as a
// backend policy; a value not above zero is left out with a line.
BackendPolicy BalancerSettings(const out::Backend::BalanceP2c& balancer,
                               absl::string_view where,
                               const RuleContext& ctx) {
  BackendPolicy p;
  auto take = [&](bool has, const google::protobuf::Duration& wire,
                  const char* name, std::optional<absl::Duration>* field) {
    if (!has) return;
    absl::StatusOr<absl::Duration> d = ConvertDuration(wire);
    if (d.ok() && *d > absl::ZeroDuration()) {
      *field = *d;
      return;
    }
    ctx.Line(absl::StrCat(
        where, ": balancer ", name, " not applied: ",
        d.ok() ? absl::StrCat(absl::FormatDuration(*d), " is not above zero")
               : d.status().message()));
  };
  if (balancer.has_peak_ewma()) {
    const auto& e = balancer.peak_ewma();
    take(e.has_default_rtt(), e.default_rtt(), "default_rtt", &p.default_rtt);
    take(e.has_decay(), e.decay(), "decay", &p.decay);
  } else if (balancer.has_penalty_peak_ewma()) {
    const auto& e = balancer.penalty_peak_ewma();
    take(e.has_default_rtt(), e.default_rtt(), "default_rtt", &p.default_rtt);
    take(e.has_decay(), e.decay(), "decay", &p.decay);
  }
  return p;
}

// What a rule's or a backend's filters do to the calls they see.
struct Filters {
  HeaderModifier request_headers;
  HeaderModifier response_headers;
  // A share of calls failed at once (a failure injector, or every call: a
  // redirect).
  uint32_t abort_per_million = 0;
  absl::StatusCode abort_code = absl::StatusCode::kOk;
  std::string abort_message;
};

// A failure injector: its share of calls fails with `code` and `message`.
// False with a line if `bad` names a field out of range or the ratio's
// denominator is 0.
bool Inject(const std::string& where, const hr::Ratio* ratio,
            const std::string& bad, absl::StatusCode code, std::string message,
            const RuleContext& ctx, Filters* out) {
  std::optional<uint32_t> share = PerMillion(ratio);
  if (!bad.empty() || !share.has_value()) {
    ctx.Line(absl::StrCat(where, " (failure_injector) ",
                          !bad.empty() ? bad : "its ratio's denominator is 0"));
    return false;
  }
  out->abort_per_million = *share;
  out->abort_code = code;
  out->abort_message = std::move(message);
  return true;
}

// A header modifier filter into `out`; false with a line if it is invalid.
template <typename Wire>
bool Modify(const std::string& where, absl::string_view kind, const Wire& wire,
            const RuleContext& ctx, HeaderModifier* out) {
  absl::StatusOr<HeaderModifier> m = ConvertHeaderModifier(wire);
  if (!m.ok()) {
    ctx.Line(absl::StrCat(where, " (", kind, ") ", m.status().message()));
    return false;
  }
  *out = *std::move(m);
  return true;
}

// One HTTP filter into `out`; false with a line (starting with `at`) if it
// is invalid.
bool ConvertFilter(const out::HttpRoute::Filter& f, const std::string& at,
                   const RuleContext& ctx, Filters* out) {
  using Filter = out::HttpRoute::Filter;
  bool kept = true;
  switch (f.kind_case()) {
    case Filter::kFailureInjector: {
      const hr::HttpFailureInjector& fi = f.failure_injector();
      kept = Inject(
          at, fi.has_ratio() ? &fi.ratio() : nullptr,
          fi.status() < 100 || fi.status() > 599
              ? absl::StrCat("status ", fi.status(), " is not within 100..599")
              : "",
          GrpcCodeOfHttpStatus(fi.status()),
          absl::StrCat(fi.message().empty() ? "failure injected" : fi.message(),
                       " (HTTP ", fi.status(), ", ", ctx.name, ")"),
          ctx, out);
      break;
    }
    case Filter::kRedirect: {
      const hr::RequestRedirect& r = f.redirect();
      std::string to = absl::StrCat(
          r.host().empty() ? "" : "host " + r.host(),
          r.port() == 0 ? "" : absl::StrCat(" port ", r.port()),
          r.path().has_full() ? " path " + r.path().full() : "",
          r.path().has_prefix() ? " prefix " + r.path().prefix() : "");
      out->abort_per_million = 1'000'000;
      out->abort_code = absl::StatusCode::kUnknown;
      out->abort_message = absl::StrCat(
          ctx.name, " redirects (HTTP ", r.status() == 0 ? 301 : r.status(),
          ",", to, "): a gRPC call cannot follow a redirect");
      break;
    }
    case Filter::kRequestHeaderModifier:
      kept = Modify(at, "request_header_modifier", f.request_header_modifier(),
                    ctx, &out->request_headers);
      break;
    case Filter::kResponseHeaderModifier:
      kept = Modify(at, "response_header_modifier",
                    f.response_header_modifier(), ctx, &out->response_headers);
      break;
    case Filter::KIND_NOT_SET:
      ctx.Line(absl::StrCat(at, " it has no kind"));
      kept = false;
      break;
  }
  return kept;
}

// One gRPC filter, as the HTTP ones.
bool ConvertFilter(const out::GrpcRoute::Filter& f, const std::string& at,
                   const RuleContext& ctx, Filters* out) {
  using Filter = out::GrpcRoute::Filter;
  bool kept = true;
  switch (f.kind_case()) {
    case Filter::kFailureInjector: {
      const gr::GrpcFailureInjector& fi = f.failure_injector();
      kept = Inject(
          at, fi.has_ratio() ? &fi.ratio() : nullptr,
          fi.code() < 1 || fi.code() > 16
              ? absl::StrCat("code ", fi.code(), " is not within 1..16")
              : "",
          static_cast<absl::StatusCode>(fi.code()),
          absl::StrCat(fi.message().empty() ? "failure injected" : fi.message(),
                       " (", ctx.name, ")"),
          ctx, out);
      break;
    }
    case Filter::kRequestHeaderModifier:
      kept = Modify(at, "request_header_modifier", f.request_header_modifier(),
                    ctx, &out->request_headers);
      break;
    case Filter::KIND_NOT_SET:
      ctx.Line(absl::StrCat(at, " it has no kind"));
      kept = false;
      break;
  }
  return kept;
}

// A rule's or a backend's filters (HTTP or gRPC); false with a line if what
// holds them (`holder`: "rule", "backend") must go. `where` prefixes each
// filter's name.
template <typename Filter>
bool ConvertFilters(const google::protobuf::RepeatedPtrField<Filter>& filters,
                    const std::string& where, absl::string_view holder,
                    const RuleContext& ctx, Filters* out) {
  for (int i = 0; i < filters.size(); ++i) {
    const std::string at =
        absl::StrCat(where, "filter #", i, " dropped the ", holder, ":");
    if (!ConvertFilter(filters[i], at, ctx, out)) return false;
  }
  return true;
}

// A limit above zero; none for zero; none with a line naming `what` if it
// is negative or does not convert.
std::optional<absl::Duration> LimitOrNone(
    const google::protobuf::Duration& wire, absl::string_view what,
    const RuleContext& ctx) {
  absl::StatusOr<absl::Duration> d = ConvertDuration(wire);
  if (d.ok() && *d > absl::ZeroDuration()) return *d;
  if (!d.ok() || *d < absl::ZeroDuration()) {
    ctx.Line(absl::StrCat(what, " not applied: ",
                          d.ok() ? absl::FormatDuration(*d) + " is negative"
                                 : std::string(d.status().message())));
  }
  return std::nullopt;
}

// A backend's queue: its capacity (0: none) and fail-fast timeout (zero:
// the channel's; negative or unreadable: left out with a line).
void QueueSettings(const out::Backend& backend, absl::string_view where,
                   const RuleContext& ctx, BackendPolicy* p) {
  if (!backend.has_queue()) return;
  const out::Queue& q = backend.queue();
  p->queue_capacity = q.capacity();
  if (q.has_failfast_timeout()) {
    p->fail_fast_timeout =
        LimitOrNone(q.failfast_timeout(),
                    absl::StrCat(where, ": queue failfast_timeout"), ctx);
  }
}

// A Distribution (HTTP or gRPC: the same fields) → the route's backends;
// false with a line if the rule must go.
template <typename Distribution>
bool ConvertBackends(const Distribution& wire, const RuleContext& ctx,
                     Route* route) {
  std::vector<WeightedBackend> backends;
  uint64_t sum = 0;
  auto add = [&](int index, const auto& route_backend, uint32_t weight) {
    const std::string where = absl::StrCat("backend #", index);
    if (weight == 0) return ctx.Line(absl::StrCat(where, " dropped: weight 0"));
    Filters filters;
    if (!ConvertFilters(route_backend.filters(), where + ": ", "backend", ctx,
                        &filters)) {
      return;
    }
    auto with_filters = [&filters](WeightedBackend wb) {
      wb.request_headers = std::move(filters.request_headers);
      wb.response_headers = std::move(filters.response_headers);
      wb.abort_per_million = filters.abort_per_million;
      wb.abort_code = filters.abort_code;
      wb.abort_message = std::move(filters.abort_message);
      return wb;
    };
    const out::Backend& b = route_backend.backend();
    if (b.has_forward()) {
      absl::StatusOr<Endpoint> endpoint = ConvertWeightedAddr(
          b.forward(), google::protobuf::Map<std::string, std::string>());
      if (!endpoint.ok()) {
        return ctx.Line(absl::StrCat(
            where, " (forward) dropped: ", endpoint.status().message()));
      }
      std::string name = ForwardBackendName(endpoint->address);
      sum += weight;
      backends.push_back(with_filters(WeightedBackend::Cluster(name, weight)));
      ctx.forwards->emplace(std::move(name), *std::move(endpoint));
      return;
    }
    if (!b.has_balancer() || !b.balancer().discovery().has_dst()) {
      return ctx.Line(absl::StrCat(
          where, " dropped: it has no balancer with a DestinationGet path"));
    }
    const std::string& path = b.balancer().discovery().dst().path();
    if (absl::Status s = ValidateDestination(path); !s.ok()) {
      return ctx.Line(
          absl::StrCat(where, " (", Quoted(path), ") dropped: ", s.message()));
    }
    sum += weight;
    backends.push_back(with_filters(WeightedBackend{path, weight}));
    if (!ctx.backends->count(path)) {
      BackendPolicy settings = BalancerSettings(b.balancer(), where, ctx);
      QueueSettings(b, where, ctx, &settings);
      (*ctx.backends)[path] = std::move(settings);
    }
  };
  switch (wire.kind_case()) {
    case Distribution::kEmpty:
      break;
    case Distribution::kFirstAvailable:
      route->backends_first_available = true;
      for (int i = 0; i < wire.first_available().backends_size(); ++i) {
        add(i, wire.first_available().backends(i), 1);
      }
      break;
    case Distribution::kRandomAvailable:
      for (int i = 0; i < wire.random_available().backends_size(); ++i) {
        const auto& weighted = wire.random_available().backends(i);
        add(i, weighted.backend(), weighted.weight());
      }
      break;
    case Distribution::KIND_NOT_SET:
      ctx.Line("dropped: its backends have no distribution");
      return false;
  }
  if (sum > UINT32_MAX) {
    ctx.Line(absl::StrCat("dropped: its backends' weights add up to ", sum,
                          ", past 2^32 - 1"));
    return false;
  }
  // Nowhere to send: every call fails, unless a filter answers every call
  // already (a redirect; a failure injector's share fails this way too).
  if (backends.empty() && route->fault.abort_per_million < 1'000'000) {
    FailAlways(route, absl::UnavailableError(
                          absl::StrCat(ctx.name, " has no backend to send to (",
                                       wire.kind_case() == Distribution::kEmpty
                                           ? "an empty distribution"
                                           : "none of its backends is usable",
                                       ")")));
  }
  route->backends = std::move(backends);
  return true;
}

// An ExponentialBackoff's bounds (min, max), or what is wrong with them:
// min at least zero (above zero when `min_above_zero`), max at least min.
absl::StatusOr<std::pair<absl::Duration, absl::Duration>> BackoffBounds(
    const out::ExponentialBackoff& wire, bool min_above_zero) {
  absl::StatusOr<absl::Duration> min = ConvertDuration(wire.min_backoff());
  if (!min.ok()) return min.status();
  absl::StatusOr<absl::Duration> max = ConvertDuration(wire.max_backoff());
  if (!max.ok()) return max.status();
  const bool min_ok = min_above_zero ? *min > absl::ZeroDuration()
                                     : *min >= absl::ZeroDuration();
  if (!min_ok || *max < *min) {
    return absl::InvalidArgumentError(absl::StrCat(
        absl::FormatDuration(*min), " to ", absl::FormatDuration(*max),
        min_above_zero ? " is not a range above zero"
                       : " is not a range of zero or more"));
  }
  return std::make_pair(*min, *max);
}

// A retry's backoff bounds; false with a line if they do not convert.
bool ConvertBackoff(const out::ExponentialBackoff& wire, const RuleContext& ctx,
                    RetryPolicy* policy) {
  auto bounds = BackoffBounds(wire, /*min_above_zero=*/false);
  if (!bounds.ok()) {
    ctx.Line(
        absl::StrCat("retry dropped: backoff ", bounds.status().message()));
    return false;
  }
  policy->backoff_base = bounds->first;
  policy->backoff_max = bounds->second;
  return true;
}

// What both retry kinds share; false with a line if the retry must go.
template <typename Retry>
bool ConvertRetryCommon(const Retry& wire, const RuleContext& ctx,
                        Route* route) {
  if (wire.max_retries() > 0xFFFF) {
    ctx.Line(absl::StrCat("retry dropped: max_retries ", wire.max_retries(),
                          " is above 65535"));
    return false;
  }
  route->retry_policy.max_attempts = wire.max_retries() + 1;
  if (wire.has_backoff() &&
      !ConvertBackoff(wire.backoff(), ctx, &route->retry_policy)) {
    return false;
  }
  if (wire.has_timeout()) {
    absl::StatusOr<absl::Duration> per_try = ConvertDuration(wire.timeout());
    if (!per_try.ok() || *per_try < absl::ZeroDuration()) {
      ctx.Line(absl::StrCat(
          "retry dropped: timeout ",
          !per_try.ok()
              ? per_try.status().message()
              : absl::StrCat(absl::FormatDuration(*per_try), " is negative")));
      return false;
    }
    // Zero: none.
    if (*per_try > absl::ZeroDuration()) {
      route->retry_policy.per_try_timeout = *per_try;
    }
  }
  route->retry_policy.max_request_bytes = wire.max_request_bytes();
  return true;
}

void ConvertRetry(const out::HttpRoute::Retry& wire, const RuleContext& ctx,
                  Route* route) {
  std::vector<HttpStatusRange> ranges;
  for (int i = 0; i < wire.conditions().status_ranges_size(); ++i) {
    const auto& r = wire.conditions().status_ranges(i);
    if (r.start() == 0 || r.end() > 599 || r.start() > r.end()) {
      return ctx.Line(absl::StrCat("retry dropped: status range #", i, " (",
                                   r.start(), "-", r.end(),
                                   ") is not within 1..599"));
    }
    ranges.push_back(HttpStatusRange{std::max(r.start(), 100u), r.end()});
  }
  if (ranges.empty() || !ConvertRetryCommon(wire, ctx, route)) return;
  route->is_retryable = true;
  route->retry_policy.retry_on_http_status = std::move(ranges);
}

void ConvertRetry(const out::GrpcRoute::Retry& wire, const RuleContext& ctx,
                  Route* route) {
  const auto& c = wire.conditions();
  std::vector<absl::StatusCode> codes;
  if (c.cancelled()) codes.push_back(absl::StatusCode::kCancelled);
  if (c.deadine_exceeded()) {
    codes.push_back(absl::StatusCode::kDeadlineExceeded);
  }
  if (c.resource_exhausted()) {
    codes.push_back(absl::StatusCode::kResourceExhausted);
  }
  if (c.internal()) codes.push_back(absl::StatusCode::kInternal);
  if (c.unavailable()) codes.push_back(absl::StatusCode::kUnavailable);
  if (codes.empty() || !ConvertRetryCommon(wire, ctx, route)) return;
  route->is_retryable = true;
  route->retry_policy.retry_on = std::move(codes);
}

// Route::timeout from the rule's timeouts; false with a line if invalid.
template <typename Rule>
bool ConvertTimeouts(const Rule& wire, const RuleContext& ctx, Route* route) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  // The older field stands in for `timeouts.request` when that is absent,
  // as the proxy reads it.
  const bool has_old = wire.has_requesttimeout();
  const google::protobuf::Duration& old = wire.requesttimeout();
#pragma GCC diagnostic pop
  const hr::Timeouts& t = wire.timeouts();
  const google::protobuf::Duration* request = t.has_request() ? &t.request()
                                              : has_old       ? &old
                                                              : nullptr;
  if (request != nullptr) {
    absl::StatusOr<absl::Duration> d = ConvertDuration(*request);
    if (!d.ok() || *d < absl::ZeroDuration()) {
      ctx.Line(absl::StrCat("dropped: request timeout ",
                            d.ok() ? absl::FormatDuration(*d) + " is negative"
                                   : std::string(d.status().message())));
      return false;
    }
    if (*d > absl::ZeroDuration()) route->timeout = *d;
  }
  // The response and idle timeouts: zero or less (or unreadable) is none,
  // said in a line; the rule stays.
  if (t.has_response()) {
    route->response_timeout = LimitOrNone(t.response(), "response timeout", ctx)
                                  .value_or(absl::InfiniteDuration());
  }
  if (t.has_idle()) {
    route->idle_timeout = LimitOrNone(t.idle(), "idle timeout", ctx)
                              .value_or(absl::InfiniteDuration());
  }
  return true;
}

// A rule's filters onto its route; false with a line if the rule must go.
template <typename Rule>
bool ConvertRuleFilters(const Rule& wire, const RuleContext& ctx,
                        Route* route) {
  Filters f;
  if (!ConvertFilters(wire.filters(), "", "rule", ctx, &f)) return false;
  route->request_headers = std::move(f.request_headers);
  route->response_headers = std::move(f.response_headers);
  route->fault.abort_per_million = f.abort_per_million;
  route->fault.abort_code = f.abort_code;
  route->fault.abort_message = std::move(f.abort_message);
  return true;
}

// Rules looked at and model routes made, per policy: as many as a route
// table keeps (RouteLimits::max_routes), so that a hostile policy costs no
// more to convert, nor more log lines, than a table can hold.
constexpr size_t kMaxPolicyRoutes = RouteLimits().max_routes;

// One HTTPRoute or GRPCRoute → its ranked model routes, within
// kMaxPolicyRoutes in all.
template <typename WireRoute>
void ConvertRoutes(const google::protobuf::RepeatedPtrField<WireRoute>& routes,
                   absl::string_view kind, const meta::Metadata& parent,
                   absl::string_view host, std::vector<Ranked>* ranked,
                   std::vector<std::string>* dropped,
                   std::map<std::string, BackendPolicy>* backends,
                   std::map<std::string, Endpoint>* forwards) {
  size_t rules_seen = 0;
  auto over = [&]() {
    if (rules_seen < kMaxPolicyRoutes && ranked->size() < kMaxPolicyRoutes) {
      return false;
    }
    dropped->push_back(absl::StrCat(
        "rules past the first ", kMaxPolicyRoutes, " (or past ",
        kMaxPolicyRoutes, " matches) dropped (RouteLimits::max_routes)"));
    return true;
  };
  for (int i = 0; i < routes.size(); ++i) {
    const WireRoute& wire = routes[i];
    const std::string route_name = wire.has_metadata()
                                       ? MetaName(wire.metadata())
                                       : absl::StrCat(kind, " #", i);
    std::optional<HostRank> host_rank = RankHost(wire.hosts(), host);
    if (!host_rank.has_value()) continue;  // for other hosts
    if (!wire.has_metadata()) {
      dropped->push_back(absl::StrCat(route_name, " dropped: no metadata"));
      continue;
    }
    for (int j = 0; j < wire.rules_size(); ++j) {
      if (over()) return;
      ++rules_seen;
      const auto& rule = wire.rules(j);
      RuleContext ctx{absl::StrCat(route_name, " rule #", j), dropped, backends,
                      forwards};
      Route route;
      route.name = wire.metadata().has_resource()
                       ? wire.metadata().resource().name()
                       : wire.metadata().default_();
      AddLabels(parent, "parent", &route.metrics_labels);
      AddLabels(wire.metadata(), "route", &route.metrics_labels);
      // Filters first: a redirect answers every call, backends or not.
      if (!ConvertTimeouts(rule, ctx, &route) ||
          !ConvertRuleFilters(rule, ctx, &route) ||
          !ConvertBackends(rule.backends(), ctx, &route)) {
        continue;
      }
      if (rule.has_retry()) ConvertRetry(rule.retry(), ctx, &route);
      route.allow_l5d_request_headers = rule.allow_l5d_request_headers();
      std::vector<Ranked> of_rule;
      std::string bad;
      int k = 0;
      for (; k < rule.matches_size() && bad.empty() &&
             ranked->size() + of_rule.size() < kMaxPolicyRoutes;
           ++k) {
        auto match = ConvertMatch(rule.matches(k));
        if (!match.ok()) {
          bad = absl::StrCat("match #", k, ": ", match.status().message());
          continue;
        }
        Ranked r{*host_rank, match->second, route};
        r.route.condition = std::move(match->first);
        of_rule.push_back(std::move(r));
      }
      if (!bad.empty()) {
        ctx.Line(absl::StrCat("dropped: ", bad));
        continue;
      }
      if (k < rule.matches_size()) {
        ctx.Line(absl::StrCat("matches past #", k - 1, " dropped: more than ",
                              kMaxPolicyRoutes,
                              " in the policy (RouteLimits::max_routes)"));
      }
      if (rule.matches_size() == 0) {
        of_rule.push_back(Ranked{*host_rank, MatchRank{}, std::move(route)});
      }
      for (Ranked& r : of_rule) ranked->push_back(std::move(r));
    }
  }
}

// A protocol's failure accrual as its backends' ejection; a line in
// `out->dropped` for what is not applied.
void ConvertAccrual(const out::FailureAccrual& wire, PolicyConversion* out) {
  uint32_t max_failures = 0;
  const out::ExponentialBackoff* backoff = nullptr;
  switch (wire.kind_case()) {
    case out::FailureAccrual::kConsecutiveFailures:
      max_failures = wire.consecutive_failures().max_failures();
      backoff = &wire.consecutive_failures().backoff();
      break;
    case out::FailureAccrual::kUnified:
      max_failures = wire.unified().max_consecutive_failures();
      backoff = &wire.unified().backoff();
      if (wire.unified().success_rate_threshold() > 0) {
        out->dropped.push_back(
            "failure_accrual.unified: the success-rate trip is not applied "
            "(consecutive failures are)");
      }
      break;
    case out::FailureAccrual::KIND_NOT_SET:
      return;
  }
  if (max_failures == 0) return;  // off
  auto bounds = BackoffBounds(*backoff, /*min_above_zero=*/true);
  if (!bounds.ok()) {
    out->dropped.push_back(absl::StrCat("failure_accrual dropped: backoff ",
                                        bounds.status().message()));
    return;
  }
  BackendPolicy::Ejection e;
  e.consecutive_failures = max_failures;
  e.base = bounds->first;
  e.max = bounds->second;
  e.max_share = 1.0;
  e.interval_rules = false;
  e.min_ready_endpoints = wire.ejection().min_ready_endpoints();
  e.exponential = true;
  // Written so that NaN is left out too.
  if (const double j = backoff->jitter_ratio(); j >= 0 && j <= 100) {
    e.jitter = j;
  } else {
    out->dropped.push_back(
        absl::StrCat("failure_accrual: backoff jitter_ratio ", j,
                     " is not within [0, 100]; no jitter applied"));
  }
  out->failure_accrual = e;
}

}  // namespace

std::string PolicyHostOf(absl::string_view authority) {
  absl::string_view host = authority;
  if (absl::StartsWith(host, "[")) {
    size_t end = host.find(']');
    host = end == absl::string_view::npos ? host.substr(1)
                                          : host.substr(1, end - 1);
  } else if (size_t colon = host.rfind(':');
             colon != absl::string_view::npos && host.find(':') == colon) {
    host = host.substr(0, colon);
  }
  if (absl::EndsWith(host, ".")) host.remove_suffix(1);
  return absl::AsciiStrToLower(host);
}

absl::StatusOr<PolicyConversion> ConvertPolicy(
    const out::OutboundPolicy& policy, absl::string_view authority) {
  using Protocol = out::ProxyProtocol;
  PolicyConversion out;
  out.parent = MetaName(policy.metadata());
  const std::string host = PolicyHostOf(authority);
  std::vector<Ranked> ranked;
  const Protocol& protocol = policy.protocol();
  bool has_routes = true;
  // A protocol's routes (Http1, Http2 or Grpc: routes and failure_accrual).
  auto routes_of = [&](const auto& part, absl::string_view kind) {
    ConvertRoutes(part.routes(), kind, policy.metadata(), host, &ranked,
                  &out.dropped, &out.backend_policies, &out.forward_backends);
    if (part.has_failure_accrual()) {
      ConvertAccrual(part.failure_accrual(), &out);
    }
  };
  switch (protocol.kind_case()) {
    case Protocol::kGrpc:
      out.protocol = "grpc";
      routes_of(protocol.grpc(), "GRPCRoute");
      break;
    case Protocol::kHttp1:
      out.protocol = "http1";
      routes_of(protocol.http1(), "HTTPRoute");
      break;
    case Protocol::kHttp2:
      out.protocol = "http2";
      routes_of(protocol.http2(), "HTTPRoute");
      break;
    case Protocol::kDetect:
      out.protocol = "detect";
      if (!protocol.detect().has_http2()) {
        return absl::InvalidArgumentError(
            "policy refused: protocol.detect has no http2 part (mesh's calls "
            "are HTTP/2)");
      }
      routes_of(protocol.detect().http2(), "HTTPRoute");
      break;
    case Protocol::kOpaque:
      out.protocol = "opaque";
      has_routes = false;
      break;
    case Protocol::kTls:
      out.protocol = "tls";
      has_routes = false;
      break;
    case Protocol::KIND_NOT_SET:
      return absl::InvalidArgumentError("policy refused: it has no protocol");
  }
  // The most specific first; equals keep the policy's order.
  std::stable_sort(
      ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
        return std::tie(a.host, a.match) > std::tie(b.host, b.match);
      });
  // Every backend takes the protocol's failure accrual; only backends with
  // something to set are kept.
  for (auto it = out.backend_policies.begin();
       it != out.backend_policies.end();) {
    BackendPolicy& p = it->second;
    p.ejection = out.failure_accrual;
    if (!p.ejection && !p.default_rtt && !p.decay && p.queue_capacity == 0 &&
        !p.fail_fast_timeout) {
      it = out.backend_policies.erase(it);
    } else {
      ++it;
    }
  }
  ServiceConfig& config = out.config;
  config.routes.reserve(ranked.size());
  for (Ranked& r : ranked) config.routes.push_back(std::move(r.route));
  if (has_routes) {
    config.require_route_match = true;
    config.unmatched_route_code = absl::StatusCode::kNotFound;
    config.retry_budget = RetryBudget();
  }
  return out;
}

}  // namespace mesh::internal::linkerd

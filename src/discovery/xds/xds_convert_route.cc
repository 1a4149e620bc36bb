// RouteConfiguration conversion (gRFCs A28, A31, A39, A42, A44), as gRPC
// C++ 1.51's xDS client validates it.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "envoy/extensions/filters/http/router/v3/router.pb.h"
#include "re2/re2.h"
#include "src/base/utf8.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/route/retry_policy.h"
#include "src/route/route_table.h"

namespace mesh::internal::xds {
namespace {

namespace route_v3 = envoy::config::route::v3;
namespace fault_v3 = envoy::extensions::filters::http::fault::v3;

// What one resource may cost the client to convert and each call to match.
constexpr int kMaxVirtualHosts = 1000;
// A virtual host becomes one route table: it may hold what a route table
// keeps (RouteLimits' defaults), so that what is ACKed is what is applied.
const RouteLimits kRouteLimits;
constexpr int kMaxHeaderMatchers = 100;
constexpr int kMaxWeightedClusters = 64;
constexpr int64_t kRegexMaxMem = 1 << 20;  // bounds a regex's program size

// gRFC A44: more attempts than 5 count as 5; backoffs below 1 ms as 1 ms.
constexpr uint32_t kMaxAttempts = 5;
constexpr absl::Duration kMinBackoff = absl::Milliseconds(1);

// OK if `pattern` compiles as RE2 within kRegexMaxMem; else an error on
// "regex" quoting the pattern (its start) and RE2's complaint.
absl::Status CheckRegex(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kRegexMaxMem);
  RE2 re(pattern, options);
  if (re.ok()) return absl::OkStatus();
  std::string problem = re.error();
  const std::string arg = absl::StrCat(": ", re.error_arg());
  if (!re.error_arg().empty() && absl::EndsWith(problem, arg)) {
    problem.resize(problem.size() - arg.size());
  }
  return FieldError("regex", absl::StrCat("invalid RE2 '", QuotedText(pattern),
                                          "': ", QuotedText(problem)));
}

// The routes of `vhost` as the route table will compile them: a route it
// would drop (past RouteLimits: conditions, nesting, the regexes' program
// size together) is refused here, naming the limit, instead of being ACKed
// and then dropped with a log line.
absl::Status CheckRouteTableLimits(const VirtualHostResource& vhost) {
  ServiceConfig config;
  config.routes.reserve(vhost.routes.size());
  for (const RouteResource& r : vhost.routes) config.routes.push_back(r.route);
  std::vector<std::string> dropped;
  RouteTable::Build(config, kRouteLimits, &dropped);
  if (dropped.empty()) return absl::OkStatus();
  return FieldError(
      "routes",
      absl::StrCat(dropped.front(),
                   dropped.size() > 1
                       ? absl::StrCat(" (and ", dropped.size() - 1, " more)")
                       : ""));
}

// gRPC's domain patterns: exact, "*suffix", "prefix*" or "*".
bool IsDomainPattern(absl::string_view domain) {
  if (domain.empty()) return false;
  if (!absl::StrContains(domain, '*')) return true;
  return domain.front() == '*' || domain.back() == '*';
}

// retry_on's gRPC codes (x-envoy-retry-grpc-on), each once; other
// conditions are ignored.
std::vector<absl::StatusCode> RetryCodes(absl::string_view retry_on) {
  constexpr std::pair<absl::string_view, absl::StatusCode> kCodes[] = {
      {"cancelled", absl::StatusCode::kCancelled},
      {"deadline-exceeded", absl::StatusCode::kDeadlineExceeded},
      {"internal", absl::StatusCode::kInternal},
      {"resource-exhausted", absl::StatusCode::kResourceExhausted},
      {"unavailable", absl::StatusCode::kUnavailable},
  };
  std::vector<absl::StatusCode> codes;
  for (absl::string_view token : absl::StrSplit(retry_on, ',')) {
    token = absl::StripAsciiWhitespace(token);
    for (const auto& [name, code] : kCodes) {
      if (token == name &&
          std::find(codes.begin(), codes.end(), code) == codes.end()) {
        codes.push_back(code);
      }
    }
  }
  return codes;
}

// gRFC A44. retry_on may come out empty: then the route does not retry.
absl::StatusOr<RetryPolicy> ConvertRetryPolicy(
    const route_v3::RetryPolicy& policy) {
  RetryPolicy out;
  out.retry_on = RetryCodes(policy.retry_on());
  uint32_t num_retries = 1;
  if (policy.has_num_retries()) {
    num_retries = policy.num_retries().value();
    if (num_retries == 0)
      return FieldError("num_retries", "must be at least 1");
  }
  out.max_attempts = std::min(num_retries, kMaxAttempts - 1) + 1;
  absl::Duration base = absl::Milliseconds(25);
  absl::Duration max = absl::Milliseconds(250);
  if (policy.has_retry_back_off()) {
    const route_v3::RetryPolicy::RetryBackOff& backoff =
        policy.retry_back_off();
    if (!backoff.has_base_interval()) {
      return FieldError("retry_back_off.base_interval", "missing");
    }
    absl::StatusOr<absl::Duration> b = ConvertDuration(backoff.base_interval());
    if (!b.ok()) return Within("retry_back_off.base_interval", b.status());
    if (*b <= absl::ZeroDuration()) {
      return FieldError("retry_back_off.base_interval", "must be above 0");
    }
    base = *b;
    max = 10 * base;
    if (backoff.has_max_interval()) {
      absl::StatusOr<absl::Duration> m =
          ConvertDuration(backoff.max_interval());
      if (!m.ok()) return Within("retry_back_off.max_interval", m.status());
      if (*m < base) {
        return FieldError(
            "retry_back_off.max_interval",
            absl::StrCat(absl::FormatDuration(*m), " is below base_interval ",
                         absl::FormatDuration(base)));
      }
      max = *m;
    }
  }
  out.backoff_base = std::max(base, kMinBackoff);
  out.backoff_max = std::max(max, kMinBackoff);
  if (policy.has_per_try_timeout()) {
    absl::StatusOr<absl::Duration> t =
        ConvertDuration(policy.per_try_timeout());
    if (!t.ok()) return Within("per_try_timeout", t.status());
    // Zero: none, as Envoy reads it.
    if (*t > absl::ZeroDuration()) out.per_try_timeout = *t;
  }
  return out;
}

// HedgePolicy as mesh hedges: initial_requests above 1 sends that many at
// once; hedge_on_per_try_timeout sends the next attempt when the retry
// policy's per-try timeout passes, keeping the first (as Envoy does), up to
// the retry policy's attempts, its retry_on codes sending the next at once.
// nullopt when it asks for no hedging. gRPC 1.51's xDS client ignores it.
absl::StatusOr<std::optional<HedgePolicy>> ConvertHedgePolicy(
    const route_v3::HedgePolicy& hedge,
    const std::optional<RetryPolicy>& retry) {
  if (hedge.has_additional_request_chance() &&
      hedge.additional_request_chance().numerator() > 0) {
    return FieldError("additional_request_chance",
                      "not supported: mesh hedges after a delay "
                      "(initial_requests, hedge_on_per_try_timeout)");
  }
  uint32_t initial = 1;
  if (hedge.has_initial_requests()) {
    initial = hedge.initial_requests().value();
    if (initial < 1 || initial > kMaxHedgedAttempts) {
      return FieldError(
          "initial_requests",
          absl::StrCat(initial, " is not within 1..", kMaxHedgedAttempts));
    }
  }
  HedgePolicy out;
  if (retry.has_value()) out.non_fatal_codes = retry->retry_on;
  if (hedge.hedge_on_per_try_timeout()) {
    if (initial > 1) {
      return FieldError("hedge_on_per_try_timeout",
                        "not supported with initial_requests above 1");
    }
    if (!retry.has_value() ||
        retry->per_try_timeout == absl::InfiniteDuration()) {
      return FieldError("hedge_on_per_try_timeout",
                        "needs the retry policy's per_try_timeout");
    }
    out.max_attempts =
        std::clamp<uint32_t>(retry->max_attempts, 2, kMaxHedgedAttempts);
    out.delay = retry->per_try_timeout;
    return out;
  }
  if (initial == 1) return std::nullopt;
  out.max_attempts = initial;
  out.delay = absl::ZeroDuration();
  return out;
}

// typed_per_filter_config (gRFC A39): the fault filters' configs by filter
// name. A FilterConfig wrapper is unwrapped; an entry of a type mesh does
// not know is skipped if optional, else refused.
absl::StatusOr<std::map<std::string, FaultInjection>> ConvertFilterOverrides(
    const google::protobuf::Map<std::string, google::protobuf::Any>& configs) {
  std::map<std::string, FaultInjection> out;
  for (const auto& [name, any] : configs) {
    std::string path = absl::StrCat("[\"", name, "\"]");
    if (name.empty()) return FieldError(path, "empty filter name");
    const google::protobuf::Any* config = &any;
    bool is_optional = false;
    route_v3::FilterConfig wrapper;
    if (any.Is<route_v3::FilterConfig>()) {
      if (!any.UnpackTo(&wrapper)) {
        return FieldError(path, "does not parse as a FilterConfig");
      }
      is_optional = wrapper.is_optional();
      path += ".config";
      if (!wrapper.has_config()) {
        if (is_optional) continue;
        return FieldError(path, "missing");
      }
      config = &wrapper.config();
    }
    if (config->Is<fault_v3::HTTPFault>()) {
      fault_v3::HTTPFault fault;
      if (!config->UnpackTo(&fault)) {
        return FieldError(path, "does not parse as an HTTPFault");
      }
      absl::StatusOr<FaultInjection> injection = ConvertHttpFault(fault);
      if (!injection.ok()) return Within(path, injection.status());
      out[name] = *std::move(injection);
    } else if (config->Is<
                   envoy::extensions::filters::http::router::v3::Router>()) {
      return FieldError(path, "the router filter takes no per-route config");
    } else if (!is_optional) {
      return FieldError(
          path, absl::StrCat("unsupported filter type ", TypeNameOf(*config)));
    }
  }
  return out;
}

// A header matcher that the header's absence decides (gRFC A28: "-bin"
// headers are never matched; an empty range holds no value): true or
// false for every call.
RequestMatch Constant(bool value) {
  return value ? RequestMatch::All({}) : RequestMatch::Any({});
}

absl::Status ConvertStringMatch(
    const envoy::type::matcher::v3::StringMatcher& m, HeaderMatch* header) {
  using envoy::type::matcher::v3::StringMatcher;
  header->ignore_case = m.ignore_case();
  switch (m.match_pattern_case()) {
    case StringMatcher::kExact:
      header->kind = HeaderMatch::Kind::kExact;
      header->value = m.exact();
      break;
    case StringMatcher::kPrefix:
      header->kind = HeaderMatch::Kind::kPrefix;
      header->value = m.prefix();
      break;
    case StringMatcher::kSuffix:
      header->kind = HeaderMatch::Kind::kSuffix;
      header->value = m.suffix();
      break;
    case StringMatcher::kContains:
      header->kind = HeaderMatch::Kind::kContains;
      header->value = m.contains();
      break;
    case StringMatcher::kSafeRegex: {
      absl::Status s = CheckRegex(m.safe_regex().regex());
      if (!s.ok()) return Within("safe_regex", s);
      header->kind = HeaderMatch::Kind::kRegex;
      header->value = m.safe_regex().regex();
      header->ignore_case = false;  // Envoy: no effect on safe_regex
      break;
    }
    case StringMatcher::MATCH_PATTERN_NOT_SET:
      return FieldError("match_pattern", "missing (or unknown to mesh)");
  }
  return absl::OkStatus();
}

absl::StatusOr<RequestMatch> ConvertHeaderMatcher(
    const route_v3::HeaderMatcher& m) {
  if (m.name().empty()) return FieldError("name", "empty");
  HeaderMatch header;
  header.name = absl::AsciiStrToLower(m.name());
  bool negate = m.invert_match();
  switch (m.header_match_specifier_case()) {
    case route_v3::HeaderMatcher::kExactMatch:
      header.kind = HeaderMatch::Kind::kExact;
      header.value = m.exact_match();
      break;
    case route_v3::HeaderMatcher::kSafeRegexMatch: {
      absl::Status s = CheckRegex(m.safe_regex_match().regex());
      if (!s.ok()) return Within("safe_regex_match", s);
      header.kind = HeaderMatch::Kind::kRegex;
      header.value = m.safe_regex_match().regex();
      break;
    }
    case route_v3::HeaderMatcher::kRangeMatch:
      if (m.range_match().end() < m.range_match().start()) {
        return FieldError(
            "range_match",
            absl::StrCat("end ", m.range_match().end(), " is below start ",
                         m.range_match().start()));
      }
      if (m.range_match().end() == m.range_match().start()) {
        return Constant(negate);
      }
      header.kind = HeaderMatch::Kind::kRange;
      header.range_start = m.range_match().start();
      header.range_end = m.range_match().end();
      break;
    case route_v3::HeaderMatcher::kPresentMatch:
      header.kind = HeaderMatch::Kind::kPresent;
      negate = negate != !m.present_match();
      break;
    case route_v3::HeaderMatcher::kPrefixMatch:
      header.kind = HeaderMatch::Kind::kPrefix;
      header.value = m.prefix_match();
      break;
    case route_v3::HeaderMatcher::kSuffixMatch:
      header.kind = HeaderMatch::Kind::kSuffix;
      header.value = m.suffix_match();
      break;
    case route_v3::HeaderMatcher::kContainsMatch:
      header.kind = HeaderMatch::Kind::kContains;
      header.value = m.contains_match();
      break;
    case route_v3::HeaderMatcher::kStringMatch: {
      absl::Status s = ConvertStringMatch(m.string_match(), &header);
      if (!s.ok()) return Within("string_match", s);
      break;
    }
    case route_v3::HeaderMatcher::HEADER_MATCH_SPECIFIER_NOT_SET:
      return FieldError("header_match_specifier",
                        "missing (or unknown to mesh)");
  }
  if (absl::EndsWith(header.name, "-bin")) {
    // Matched as if absent, where no condition on the header holds: only a
    // negated one does.
    return Constant(negate);
  }
  RequestMatch match = RequestMatch::Header(std::move(header));
  return negate ? RequestMatch::Not(std::move(match)) : match;
}

absl::StatusOr<RequestMatch> ConvertRouteMatch(const route_v3::RouteMatch& m) {
  std::vector<RequestMatch> conditions;
  const bool case_sensitive =
      !m.has_case_sensitive() || m.case_sensitive().value();
  switch (m.path_specifier_case()) {
    case route_v3::RouteMatch::kPrefix:
      conditions.push_back(
          RequestMatch::PathPrefix(m.prefix(), case_sensitive));
      break;
    case route_v3::RouteMatch::kPath:
      conditions.push_back(RequestMatch::PathExact(m.path(), case_sensitive));
      break;
    case route_v3::RouteMatch::kSafeRegex: {
      // case_sensitive does not apply to safe_regex (Envoy, gRPC).
      absl::Status s = CheckRegex(m.safe_regex().regex());
      if (!s.ok()) return Within("safe_regex", s);
      conditions.push_back(RequestMatch::Path(m.safe_regex().regex()));
      break;
    }
    case route_v3::RouteMatch::kConnectMatcher:
      return FieldError("connect_matcher", "not supported");
    case route_v3::RouteMatch::kPathSeparatedPrefix:
      return FieldError("path_separated_prefix", "not supported");
    case route_v3::RouteMatch::kPathMatchPolicy:
      return FieldError("path_match_policy", "not supported");
    case route_v3::RouteMatch::PATH_SPECIFIER_NOT_SET:
      return FieldError("path_specifier",
                        "missing: one of prefix, path and safe_regex is "
                        "required");
  }
  if (m.headers_size() > kMaxHeaderMatchers) {
    return FieldError("headers",
                      absl::StrCat(m.headers_size(), " matchers, more than ",
                                   kMaxHeaderMatchers));
  }
  for (int i = 0; i < m.headers_size(); ++i) {
    absl::StatusOr<RequestMatch> header = ConvertHeaderMatcher(m.headers(i));
    if (!header.ok()) {
      return Within(absl::StrCat("headers[", i, "]"), header.status());
    }
    conditions.push_back(*std::move(header));
  }
  // Clients have no runtime: the default share applies (gRFC A28).
  if (m.runtime_fraction().has_default_value()) {
    absl::StatusOr<uint32_t> share =
        ConvertFraction(m.runtime_fraction().default_value());
    if (!share.ok()) {
      return Within("runtime_fraction.default_value", share.status());
    }
    conditions.push_back(RequestMatch::Fraction(*share));
  }
  if (conditions.size() == 1) return std::move(conditions.front());
  return RequestMatch::All(std::move(conditions));
}

absl::Status ConvertWeightedClusters(const route_v3::WeightedCluster& split,
                                     std::vector<WeightedBackend>* out) {
  if (split.clusters_size() > kMaxWeightedClusters) {
    return FieldError(
        "clusters", absl::StrCat(split.clusters_size(), " clusters, more than ",
                                 kMaxWeightedClusters));
  }
  uint64_t sum = 0;
  for (int i = 0; i < split.clusters_size(); ++i) {
    const route_v3::WeightedCluster::ClusterWeight& c = split.clusters(i);
    const std::string path = absl::StrCat("clusters[", i, "]");
    if (c.name().empty()) return FieldError(path + ".name", "empty");
    if (!c.has_weight()) return FieldError(path + ".weight", "missing");
    if (c.weight().value() == 0) continue;  // gRPC leaves it out unread
    absl::StatusOr<std::map<std::string, FaultInjection>> faults =
        ConvertFilterOverrides(c.typed_per_filter_config());
    if (!faults.ok()) {
      return Within(path + ".typed_per_filter_config", faults.status());
    }
    if (!faults->empty()) {
      return FieldError(absl::StrCat(path, ".typed_per_filter_config[\"",
                                     faults->begin()->first, "\"]"),
                        "per-cluster fault config is not supported");
    }
    sum += c.weight().value();
    WeightedBackend backend;
    backend.cluster = c.name();
    backend.weight = c.weight().value();
    out->push_back(std::move(backend));
  }
  if (out->empty()) return FieldError("clusters", "no cluster weighs above 0");
  if (sum > std::numeric_limits<uint32_t>::max()) {
    return FieldError("clusters", absl::StrCat("the weights add up to ", sum,
                                               ", more than 2^32 - 1"));
  }
  // Envoy: total_weight, deprecated, is checked only when above 0.
  if (split.total_weight().value() > 0 && split.total_weight().value() != sum) {
    return FieldError("total_weight",
                      absl::StrCat(split.total_weight().value(),
                                   " but the weights add up to ", sum));
  }
  return absl::OkStatus();
}

void ConvertHashPolicies(const google::protobuf::RepeatedPtrField<
                             route_v3::RouteAction::HashPolicy>& policies,
                         std::vector<HashPolicy>* out) {
  // gRFC A42: a policy gRPC cannot compute is skipped, never refused.
  for (const route_v3::RouteAction::HashPolicy& p : policies) {
    HashPolicy policy;
    policy.terminal = p.terminal();
    if (p.has_header()) {
      policy.kind = HashPolicy::Kind::kHeader;
      policy.header_name = absl::AsciiStrToLower(p.header().header_name());
      if (p.header().has_regex_rewrite()) {
        const auto& rewrite = p.header().regex_rewrite();
        if (!rewrite.has_pattern() ||
            !CheckRegex(rewrite.pattern().regex()).ok()) {
          continue;
        }
        policy.regex = rewrite.pattern().regex();
        policy.regex_substitution = rewrite.substitution();
      }
    } else if (p.has_filter_state() &&
               p.filter_state().key() == "io.grpc.channel_id") {
      policy.kind = HashPolicy::Kind::kChannelId;
    } else {
      continue;
    }
    out->push_back(std::move(policy));
  }
}

// Fills `out` from a route action; false if gRPC would leave the route out
// (a cluster specifier other than cluster and weighted_clusters).
absl::StatusOr<bool> ConvertRouteAction(const route_v3::RouteAction& action,
                                        RouteResource* out) {
  switch (action.cluster_specifier_case()) {
    case route_v3::RouteAction::kCluster: {
      if (action.cluster().empty()) return FieldError("cluster", "empty");
      WeightedBackend backend;
      backend.cluster = action.cluster();
      backend.weight = 1;
      out->clusters.push_back(std::move(backend));
      break;
    }
    case route_v3::RouteAction::kWeightedClusters: {
      absl::Status s =
          ConvertWeightedClusters(action.weighted_clusters(), &out->clusters);
      if (!s.ok()) return Within("weighted_clusters", s);
      break;
    }
    default:  // cluster_header, cluster_specifier_plugin, unset (gRFC A28)
      return false;
  }
  if (action.has_max_stream_duration()) {
    const auto& limits = action.max_stream_duration();
    const google::protobuf::Duration* limit = nullptr;
    absl::string_view field;
    if (limits.has_grpc_timeout_header_max()) {
      limit = &limits.grpc_timeout_header_max();
      field = "max_stream_duration.grpc_timeout_header_max";
    } else if (limits.has_max_stream_duration()) {
      limit = &limits.max_stream_duration();
      field = "max_stream_duration.max_stream_duration";
    }
    if (limit != nullptr) {
      absl::StatusOr<absl::Duration> d = ConvertDuration(*limit);
      if (!d.ok()) return Within(field, d.status());
      out->max_stream_duration = *d;
    }
  }
  ConvertHashPolicies(action.hash_policy(), &out->hash_policies);
  return true;
}

void ApplyRetryPolicy(const std::optional<RetryPolicy>& policy, Route* route) {
  if (!policy.has_value() || policy->retry_on.empty()) return;
  route->is_retryable = true;
  route->retry_policy = *policy;
}

// The route, or nullopt where gRPC leaves it out: query_parameters (it
// never matches) or a cluster specifier it does not support.
absl::StatusOr<std::optional<RouteResource>> ConvertRoute(
    const route_v3::Route& route, const std::optional<RetryPolicy>& vhost_retry,
    const route_v3::HedgePolicy* vhost_hedge) {
  if (!route.has_match()) return FieldError("match", "missing");
  if (route.match().query_parameters_size() > 0) return std::nullopt;
  RouteResource out;
  out.route.name = route.name();
  absl::StatusOr<RequestMatch> condition = ConvertRouteMatch(route.match());
  if (!condition.ok()) return Within("match", condition.status());
  out.route.condition = *std::move(condition);
  switch (route.action_case()) {
    case route_v3::Route::kRoute: {
      absl::StatusOr<bool> kept = ConvertRouteAction(route.route(), &out);
      if (!kept.ok()) return Within("route", kept.status());
      if (!*kept) return std::nullopt;
      std::optional<RetryPolicy> retry = vhost_retry;
      if (route.route().has_retry_policy()) {
        absl::StatusOr<RetryPolicy> own =
            ConvertRetryPolicy(route.route().retry_policy());
        if (!own.ok()) return Within("route.retry_policy", own.status());
        retry = *std::move(own);
      }
      ApplyRetryPolicy(retry, &out.route);
      const bool own_hedge = route.route().has_hedge_policy();
      if (own_hedge || vhost_hedge != nullptr) {
        const char* field = own_hedge ? "route.hedge_policy"
                                      : "the virtual host's hedge_policy";
        absl::StatusOr<std::optional<HedgePolicy>> hedge = ConvertHedgePolicy(
            own_hedge ? route.route().hedge_policy() : *vhost_hedge, retry);
        if (!hedge.ok()) return Within(field, hedge.status());
        if (hedge->has_value()) {
          // Hedges in place of retries (gRFC A6: one or the other).
          if (absl::Status s = ValidateHedgePolicy(**hedge, false); !s.ok()) {
            return FieldError(field, s.message());
          }
          out.route.hedge_policy = **hedge;
          out.route.is_retryable = false;
        }
      }
      break;
    }
    case route_v3::Route::kRedirect:
      out.unsupported_action = "redirect";
      break;
    case route_v3::Route::kDirectResponse:
      out.unsupported_action = "direct_response";
      break;
    case route_v3::Route::kFilterAction:
      out.unsupported_action = "filter_action";
      break;
    case route_v3::Route::kNonForwardingAction:
      out.unsupported_action = "non_forwarding_action";
      break;
    case route_v3::Route::ACTION_NOT_SET:
      // An action newer than mesh's protos looks like none (gRPC: kept,
      // its calls fail).
      out.unsupported_action = "an unknown action";
      break;
  }
  absl::StatusOr<std::map<std::string, FaultInjection>> faults =
      ConvertFilterOverrides(route.typed_per_filter_config());
  if (!faults.ok()) return Within("typed_per_filter_config", faults.status());
  out.fault_overrides = *std::move(faults);
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ConvertDomains(
    const std::vector<std::string>& domains) {
  if (domains.empty()) return FieldError("domains", "empty");
  std::vector<std::string> out;
  out.reserve(domains.size());
  for (size_t i = 0; i < domains.size(); ++i) {
    const std::string& domain = domains[i];
    if (!IsDomainPattern(domain)) {
      return FieldError(absl::StrCat("domains[", i, "]"),
                        absl::StrCat("'", QuotedText(domain),
                                     "' is not a domain pattern (a '*' may "
                                     "only start or end it)"));
    }
    out.push_back(absl::AsciiStrToLower(domain));
  }
  return out;
}

absl::Status CheckRouteCount(size_t routes) {
  if (routes == 0) return FieldError("routes", "empty");
  if (routes > kRouteLimits.max_routes) {
    return FieldError("routes", absl::StrCat(routes, " routes, more than ",
                                             kRouteLimits.max_routes,
                                             " (RouteLimits::max_routes)"));
  }
  return absl::OkStatus();
}

absl::Status CheckVirtualHostCount(size_t virtual_hosts) {
  if (virtual_hosts > static_cast<size_t>(kMaxVirtualHosts)) {
    return FieldError("virtual_hosts",
                      absl::StrCat(virtual_hosts, " virtual hosts, more than ",
                                   kMaxVirtualHosts));
  }
  return absl::OkStatus();
}

absl::StatusOr<VirtualHostResource> ConvertVirtualHost(
    const route_v3::VirtualHost& vhost) {
  VirtualHostResource out;
  out.name = vhost.name();
  absl::StatusOr<std::vector<std::string>> domains = ConvertDomains(
      std::vector<std::string>(vhost.domains().begin(), vhost.domains().end()));
  if (!domains.ok()) return domains.status();
  out.domains = *std::move(domains);
  absl::StatusOr<std::map<std::string, FaultInjection>> faults =
      ConvertFilterOverrides(vhost.typed_per_filter_config());
  if (!faults.ok()) return Within("typed_per_filter_config", faults.status());
  out.fault_overrides = *std::move(faults);
  std::optional<RetryPolicy> retry;
  if (vhost.has_retry_policy()) {
    absl::StatusOr<RetryPolicy> policy =
        ConvertRetryPolicy(vhost.retry_policy());
    if (!policy.ok()) return Within("retry_policy", policy.status());
    retry = *std::move(policy);
  }
  if (absl::Status s = CheckRouteCount(vhost.routes_size()); !s.ok()) {
    return s;
  }
  for (int i = 0; i < vhost.routes_size(); ++i) {
    absl::StatusOr<std::optional<RouteResource>> route = ConvertRoute(
        vhost.routes(i), retry,
        vhost.has_hedge_policy() ? &vhost.hedge_policy() : nullptr);
    if (!route.ok()) {
      return Within(absl::StrCat("routes[", i, "]"), route.status());
    }
    if (route->has_value()) out.routes.push_back(**std::move(route));
  }
  if (out.routes.empty()) {
    return FieldError("routes",
                      "none left: every route has query_parameters or a "
                      "cluster specifier mesh does not support");
  }
  if (absl::Status s = CheckRouteTableLimits(out); !s.ok()) return s;
  return out;
}

absl::StatusOr<RouteConfigResource> ConvertRouteConfiguration(
    const route_v3::RouteConfiguration& config) {
  RouteConfigResource out;
  out.name = config.name();
  if (absl::Status s = CheckVirtualHostCount(config.virtual_hosts_size());
      !s.ok()) {
    return s;
  }
  for (int i = 0; i < config.virtual_hosts_size(); ++i) {
    absl::StatusOr<VirtualHostResource> vhost =
        ConvertVirtualHost(config.virtual_hosts(i));
    if (!vhost.ok()) {
      return Within(absl::StrCat("virtual_hosts[", i, "]"), vhost.status());
    }
    out.virtual_hosts.push_back(*std::move(vhost));
  }
  return out;
}

}  // namespace mesh::internal::xds

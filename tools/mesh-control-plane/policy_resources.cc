#include "tools/mesh-control-plane/policy_resources.h"

#include <google/protobuf/util/time_util.h>

#include <cmath>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/base/utf8.h"
#include "tools/mesh-control-plane/linkerd_resources.h"

namespace mesh::controlplane {
namespace {

namespace out = ::io::linkerd::proxy::outbound;
namespace hr = ::io::linkerd::proxy::http_route;
namespace gr = ::io::linkerd::proxy::grpc_route;
namespace meta = ::io::linkerd::proxy::meta;
using google::protobuf::util::TimeUtil;

// "books.ns.svc.cluster.local:7001" → name "books", namespace "ns", 7001.
struct Named {
  std::string name;
  std::string ns = "default";
  uint32_t port = 0;
};

Named NameOf(const std::string& authority) {
  Named n;
  size_t colon = authority.rfind(':');
  std::string host = authority.substr(0, colon);
  if (colon != std::string::npos) {
    uint32_t port = 0;
    if (absl::SimpleAtoi(authority.substr(colon + 1), &port)) n.port = port;
  }
  std::vector<std::string> labels = absl::StrSplit(host, '.');
  n.name = labels[0];
  if (labels.size() > 1 && !labels[1].empty()) n.ns = labels[1];
  return n;
}

void ServiceMeta(const std::string& authority, meta::Metadata* out) {
  Named n = NameOf(authority);
  meta::Resource* r = out->mutable_resource();
  r->set_group("core");
  r->set_kind("Service");
  r->set_name(n.name);
  r->set_namespace_(n.ns);
  r->set_port(n.port);
}

void FillBackend(const std::string& authority, out::Backend* b) {
  ServiceMeta(authority, b->mutable_metadata());
  out::Backend::BalanceP2c* p2c = b->mutable_balancer();
  p2c->mutable_discovery()->mutable_dst()->set_path(authority);
  *p2c->mutable_peak_ewma()->mutable_default_rtt() =
      TimeUtil::MillisecondsToDuration(30);
  *p2c->mutable_peak_ewma()->mutable_decay() =
      TimeUtil::MillisecondsToDuration(10000);
  b->mutable_queue()->set_capacity(100);
  *b->mutable_queue()->mutable_failfast_timeout() =
      TimeUtil::MillisecondsToDuration(3000);
}

// A rule's distribution (HttpRoute's or GrpcRoute's: the same shape).
template <typename Rule>
void FillBackends(const PolicyRuleSpec& spec, const std::string& target,
                  Rule* rule) {
  std::vector<std::pair<std::string, uint32_t>> backends =
      spec.backends
          ? *spec.backends
          : std::vector<std::pair<std::string, uint32_t>>{{target, 1}};
  auto* d = rule->mutable_backends();
  if (backends.empty()) {
    d->mutable_empty();
  } else if (spec.first_available) {
    auto* first = d->mutable_first_available();
    for (const auto& [authority, weight] : backends) {
      (void)weight;
      FillBackend(authority, first->add_backends()->mutable_backend());
    }
  } else {
    auto* random = d->mutable_random_available();
    for (const auto& [authority, weight] : backends) {
      auto* wb = random->add_backends();
      wb->set_weight(weight);
      FillBackend(authority, wb->mutable_backend()->mutable_backend());
    }
  }
}

template <typename Modifier>
void FillModifier(const PolicyHeaderModifier& spec, Modifier* m) {
  for (const auto& [name, value] : spec.add) {
    auto* h = m->mutable_add()->add_headers();
    h->set_name(name);
    h->set_value(value);
  }
  for (const auto& [name, value] : spec.set) {
    auto* h = m->mutable_set()->add_headers();
    h->set_name(name);
    h->set_value(value);
  }
  for (const std::string& name : spec.remove) m->add_remove(name);
}

template <typename Injector>
void FillInjector(const PolicyFailureSpec& spec, Injector* f) {
  f->set_message(spec.message);
  constexpr uint32_t kDenominator = 10000;
  f->mutable_ratio()->set_numerator(
      static_cast<uint32_t>(std::lround(spec.ratio * kDenominator)));
  f->mutable_ratio()->set_denominator(kDenominator);
}

void FillBackoff(int64_t min_ms, int64_t max_ms, out::ExponentialBackoff* b) {
  *b->mutable_min_backoff() = TimeUtil::MillisecondsToDuration(min_ms);
  *b->mutable_max_backoff() = TimeUtil::MillisecondsToDuration(max_ms);
}

template <typename Route>
void FillRouteCommon(const PolicyRouteSpec& spec, const Named& parent,
                     const char* kind, Route* route) {
  meta::Resource* r = route->mutable_metadata()->mutable_resource();
  r->set_group("gateway.networking.k8s.io");
  r->set_kind(kind);
  r->set_name(spec.name);
  r->set_namespace_(parent.ns);
  for (const std::string& host : spec.hosts) {
    hr::HostMatch* h = route->add_hosts();
    if (absl::StartsWith(host, "*.")) {
      std::vector<std::string> labels =
          absl::StrSplit(host.substr(2), '.', absl::SkipEmpty());
      for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
        h->mutable_suffix()->add_reverse_labels(*it);
      }
    } else {
      h->set_exact(host);
    }
  }
}

void FillValueMatch(const PolicyValueMatch& spec, hr::HeaderMatch* m) {
  m->set_name(spec.name);
  spec.regex ? m->set_regex(spec.value) : m->set_exact(spec.value);
}

void FillValueMatch(const PolicyValueMatch& spec, hr::QueryParamMatch* m) {
  m->set_name(spec.name);
  spec.regex ? m->set_regex(spec.value) : m->set_exact(spec.value);
}

// What HTTP and gRPC rules share: the request header modifier (the first
// filter), the backends and the timeouts.
template <typename Rule>
void FillRuleCommon(const PolicyRuleSpec& r, const std::string& target,
                    Rule* rule) {
  if (r.request_headers) {
    FillModifier(*r.request_headers,
                 rule->add_filters()->mutable_request_header_modifier());
  }
  FillBackends(r, target, rule);
  auto* timeouts = rule->mutable_timeouts();
  if (r.timeout_ms > 0)
    *timeouts->mutable_request() =
        TimeUtil::MillisecondsToDuration(r.timeout_ms);
  if (r.response_timeout_ms > 0)
    *timeouts->mutable_response() =
        TimeUtil::MillisecondsToDuration(r.response_timeout_ms);
  if (r.idle_timeout_ms > 0)
    *timeouts->mutable_idle() =
        TimeUtil::MillisecondsToDuration(r.idle_timeout_ms);
  if (timeouts->ByteSizeLong() == 0) rule->clear_timeouts();
}

// What both retry kinds share: max_retries and the backoff.
template <typename Retry>
void FillRetryCommon(const PolicyRetrySpec& spec, Retry* retry) {
  retry->set_max_retries(spec.max_retries);
  FillBackoff(spec.min_backoff_ms, spec.max_backoff_ms,
              retry->mutable_backoff());
}

out::HttpRoute HttpRouteOf(const PolicyRouteSpec& spec, const Named& parent,
                           const std::string& target) {
  out::HttpRoute route;
  FillRouteCommon(spec, parent, "HTTPRoute", &route);
  for (const PolicyRuleSpec& r : spec.rules) {
    out::HttpRoute::Rule* rule = route.add_rules();
    for (const PolicyMatchSpec& m : r.matches) {
      hr::HttpRouteMatch* match = rule->add_matches();
      using Kind = PolicyMatchSpec::PathKind;
      if (m.path_kind == Kind::kExact) match->mutable_path()->set_exact(m.path);
      if (m.path_kind == Kind::kPrefix)
        match->mutable_path()->set_prefix(m.path);
      if (m.path_kind == Kind::kRegex) match->mutable_path()->set_regex(m.path);
      if (!m.http_method.empty())
        SetHttpMethod(m.http_method, match->mutable_method());
      for (const PolicyValueMatch& h : m.headers)
        FillValueMatch(h, match->add_headers());
      for (const PolicyValueMatch& q : m.query)
        FillValueMatch(q, match->add_query_params());
    }
    FillRuleCommon(r, target, rule);
    if (r.response_headers) {
      FillModifier(*r.response_headers,
                   rule->add_filters()->mutable_response_header_modifier());
    }
    if (r.failure_injector) {
      hr::HttpFailureInjector* f =
          rule->add_filters()->mutable_failure_injector();
      f->set_status(r.failure_injector->code);
      FillInjector(*r.failure_injector, f);
    }
    if (r.retry) {
      out::HttpRoute::Retry* retry = rule->mutable_retry();
      FillRetryCommon(*r.retry, retry);
      auto* conditions = retry->mutable_conditions();
      for (const auto& [lo, hi] : r.retry->statuses) {
        auto* range = conditions->add_status_ranges();
        range->set_start(lo);
        range->set_end(hi);
      }
    }
  }
  return route;
}

out::GrpcRoute GrpcRouteOf(const PolicyRouteSpec& spec, const Named& parent,
                           const std::string& target) {
  out::GrpcRoute route;
  FillRouteCommon(spec, parent, "GRPCRoute", &route);
  for (const PolicyRuleSpec& r : spec.rules) {
    out::GrpcRoute::Rule* rule = route.add_rules();
    for (const PolicyMatchSpec& m : r.matches) {
      gr::GrpcRouteMatch* match = rule->add_matches();
      if (!m.service.empty()) {
        match->mutable_rpc()->set_service(m.service);
        match->mutable_rpc()->set_method(m.rpc_method);
      }
      for (const PolicyValueMatch& h : m.headers)
        FillValueMatch(h, match->add_headers());
    }
    FillRuleCommon(r, target, rule);
    if (r.failure_injector) {
      gr::GrpcFailureInjector* f =
          rule->add_filters()->mutable_failure_injector();
      f->set_code(r.failure_injector->code);
      FillInjector(*r.failure_injector, f);
    }
    if (r.retry) {
      out::GrpcRoute::Retry* retry = rule->mutable_retry();
      FillRetryCommon(*r.retry, retry);
      auto* c = retry->mutable_conditions();
      for (const std::string& code : r.retry->codes) {
        if (code == "CANCELLED") c->set_cancelled(true);
        if (code == "DEADLINE_EXCEEDED") c->set_deadine_exceeded(true);
        if (code == "RESOURCE_EXHAUSTED") c->set_resource_exhausted(true);
        if (code == "INTERNAL") c->set_internal(true);
        if (code == "UNAVAILABLE") c->set_unavailable(true);
      }
    }
  }
  return route;
}

void FillAccrual(const PolicyAccrualSpec& spec, out::FailureAccrual* a) {
  auto* consecutive = a->mutable_consecutive_failures();
  consecutive->set_max_failures(spec.max_failures);
  FillBackoff(spec.min_backoff_ms, spec.max_backoff_ms,
              consecutive->mutable_backoff());
  if (spec.min_ready_endpoints > 0) {
    a->mutable_ejection()->set_min_ready_endpoints(spec.min_ready_endpoints);
  }
}

// Linkerd's default for a Service without routes: every request to it.
PolicySpec DefaultPolicy() {
  PolicySpec p;
  p.protocol = "detect";
  PolicyRouteSpec route;
  route.name = "default";
  PolicyRuleSpec rule;
  PolicyMatchSpec all;
  all.path_kind = PolicyMatchSpec::PathKind::kPrefix;
  all.path = "/";
  rule.matches.push_back(all);
  route.rules.push_back(rule);
  p.routes.push_back(route);
  return p;
}

// An HTTP protocol part (Http1, Http2): routes and failure accrual.
template <typename Part>
void FillHttpPart(const PolicySpec& spec, const Named& parent,
                  const std::string& target, Part* part) {
  for (const PolicyRouteSpec& r : spec.routes)
    *part->add_routes() = HttpRouteOf(r, parent, target);
  if (spec.failure_accrual)
    FillAccrual(*spec.failure_accrual, part->mutable_failure_accrual());
}

void FillOpaque(const std::string& target, out::ProxyProtocol::Opaque* o) {
  out::OpaqueRoute* route = o->add_routes();
  route->mutable_metadata()->set_default_("opaq");
  auto* backend = route->add_rules()
                      ->mutable_backends()
                      ->mutable_random_available()
                      ->add_backends();
  backend->set_weight(1);
  FillBackend(target, backend->mutable_backend()->mutable_backend());
}

}  // namespace

absl::StatusOr<out::OutboundPolicy> PolicyFor(const Config& config,
                                              const std::string& authority) {
  auto it = config.targets.find(authority);
  if (it == config.targets.end()) {
    return absl::NotFoundError(
        absl::StrCat("no policy for ", internal::PrintableText(authority),
                     ": the control plane's config does not name it"));
  }
  const PolicySpec spec =
      it->second.policy ? *it->second.policy : DefaultPolicy();
  const Named parent = NameOf(authority);
  out::OutboundPolicy policy;
  ServiceMeta(authority, policy.mutable_metadata());
  out::ProxyProtocol* protocol = policy.mutable_protocol();
  if (spec.protocol == "grpc") {
    out::ProxyProtocol::Grpc* grpc = protocol->mutable_grpc();
    for (const PolicyRouteSpec& r : spec.routes)
      *grpc->add_routes() = GrpcRouteOf(r, parent, authority);
    if (spec.failure_accrual)
      FillAccrual(*spec.failure_accrual, grpc->mutable_failure_accrual());
  } else if (spec.protocol == "http2") {
    FillHttpPart(spec, parent, authority, protocol->mutable_http2());
  } else if (spec.protocol == "http1") {
    FillHttpPart(spec, parent, authority, protocol->mutable_http1());
  } else if (spec.protocol == "detect") {
    out::ProxyProtocol::Detect* detect = protocol->mutable_detect();
    *detect->mutable_timeout() = TimeUtil::MillisecondsToDuration(10000);
    FillHttpPart(spec, parent, authority, detect->mutable_http1());
    FillHttpPart(spec, parent, authority, detect->mutable_http2());
    FillOpaque(authority, detect->mutable_opaque());
    // Linkerd names its default route "default http", not a resource.
    if (!it->second.policy) {
      for (auto* part : {detect->mutable_http1()->mutable_routes(),
                         detect->mutable_http2()->mutable_routes()}) {
        for (out::HttpRoute& r : *part)
          r.mutable_metadata()->set_default_("http");
      }
    }
  } else {
    FillOpaque(authority, protocol->mutable_opaque());
  }
  return policy;
}

}  // namespace mesh::controlplane

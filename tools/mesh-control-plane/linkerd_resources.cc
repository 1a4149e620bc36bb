#include "tools/mesh-control-plane/linkerd_resources.h"

#include <google/protobuf/util/time_util.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "src/model/address.h"

namespace mesh::controlplane {

namespace dst = ::io::linkerd::proxy::destination;
using ::google::protobuf::util::TimeUtil;

void SetHttpMethod(const std::string& method,
                   io::linkerd::proxy::http_types::HttpMethod* out) {
  io::linkerd::proxy::http_types::HttpMethod::Registered registered;
  if (io::linkerd::proxy::http_types::HttpMethod::Registered_Parse(
          method, &registered)) {
    out->set_registered(registered);
  } else {
    out->set_unregistered(method);
  }
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
  // A URI ("spiffe://...") goes as Linkerd's UriLikeIdentity, a name as
  // its DnsLikeIdentity.
  if (absl::StrContains(e.tls_identity, "://")) {
    out.mutable_tls_identity()->mutable_uri_like_identity()->set_uri(
        e.tls_identity);
  } else if (!e.tls_identity.empty()) {
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
  *out.mutable_retry_budget()->mutable_ttl() =
      TimeUtil::MillisecondsToDuration(budget.ttl_ms);
  if (spec == nullptr) return out;
  for (const RouteSpec& r : spec->routes) {
    // Linkerd's routes have no header conditions and no backends of their
    // own: such a route is for xDS clients only.
    if (r.xds_only()) continue;
    dst::Route* route = out.add_routes();
    auto* all = route->mutable_condition()->mutable_all();
    if (!r.path_regex.empty())
      all->add_matches()->mutable_path()->set_regex(r.path_regex);
    if (!r.method.empty()) {
      SetHttpMethod(r.method, all->add_matches()->mutable_method());
    }
    if (!r.name.empty()) (*route->mutable_metrics_labels())["route"] = r.name;
    route->set_is_retryable(r.retryable);
    if (r.timeout_ms > 0) {
      *route->mutable_timeout() =
          TimeUtil::MillisecondsToDuration(r.timeout_ms);
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

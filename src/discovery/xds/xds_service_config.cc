#include "src/discovery/xds/xds_service_config.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "mesh/service_config.h"
#include "src/base/utf8.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/discovery/xds/xds_resources.h"

namespace mesh::internal::xds {
namespace {

// Ordered as gRPC ranks them (xds_routing.cc): a lower value is a better
// match.
enum class DomainKind { kExact, kSuffix, kPrefix, kUniverse, kInvalid };

// One '*' alone, at the front or at the back; any other '*' (in the middle,
// or two of them) makes the domain invalid, as Envoy refuses it.
DomainKind KindOf(absl::string_view domain) {
  if (domain.empty()) return DomainKind::kInvalid;
  size_t stars = std::count(domain.begin(), domain.end(), '*');
  if (stars == 0) return DomainKind::kExact;
  if (stars > 1) return DomainKind::kInvalid;
  if (domain == "*") return DomainKind::kUniverse;
  if (domain.front() == '*') return DomainKind::kSuffix;
  if (domain.back() == '*') return DomainKind::kPrefix;
  return DomainKind::kInvalid;
}

// The wildcard stands for one character or more, so the authority must be
// longer than the domain's fixed part.
bool Matches(DomainKind kind, absl::string_view domain,
             absl::string_view authority) {
  switch (kind) {
    case DomainKind::kExact:
      return absl::EqualsIgnoreCase(domain, authority);
    case DomainKind::kSuffix:
      domain.remove_prefix(1);
      return authority.size() > domain.size() &&
             absl::EndsWithIgnoreCase(authority, domain);
    case DomainKind::kPrefix:
      domain.remove_suffix(1);
      return authority.size() > domain.size() &&
             absl::StartsWithIgnoreCase(authority, domain);
    case DomainKind::kUniverse:
      return true;
    case DomainKind::kInvalid:
      return false;
  }
  return false;
}

// "host" of "host:port" and of "host"; "[v6]" of "[v6]:port" (brackets
// kept, as a URI's host has them); a bare IPv6 address whole.
std::string HostOf(absl::string_view authority) {
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close != absl::string_view::npos) {
      return std::string(authority.substr(0, close + 1));
    }
    return std::string(authority);
  }
  size_t colon = authority.find(':');
  if (colon != absl::string_view::npos &&
      authority.find(':', colon + 1) == absl::string_view::npos) {
    return std::string(authority.substr(0, colon));
  }
  return std::string(authority);
}

// The domains of every virtual host, for an error message: the first
// kMaxListed, then how many more.
std::string ListDomains(const RouteConfigResource& config) {
  constexpr size_t kMaxListed = 10;
  std::vector<absl::string_view> listed;
  size_t total = 0;
  for (const VirtualHostResource& vhost : config.virtual_hosts) {
    for (const std::string& domain : vhost.domains) {
      if (listed.size() < kMaxListed) listed.push_back(domain);
      ++total;
    }
  }
  if (total == 0) return "no domains";
  std::string out = absl::StrCat("domains: ", absl::StrJoin(listed, ", "));
  if (total > listed.size()) {
    absl::StrAppend(&out, ", … ", total - listed.size(), " more");
  }
  return out;
}

// The listener's first fault filter's config, replaced by the virtual
// host's then the route's config for that filter's name. No filter: none.
FaultInjection FaultFor(const ListenerResource& listener,
                        const VirtualHostResource& vhost,
                        const RouteResource& route) {
  if (listener.fault_filters.empty()) return FaultInjection();
  const FaultFilter& filter = listener.fault_filters.front();
  FaultInjection fault = filter.config;
  if (auto it = vhost.fault_overrides.find(filter.name);
      it != vhost.fault_overrides.end()) {
    fault = it->second;
  }
  if (auto it = route.fault_overrides.find(filter.name);
      it != route.fault_overrides.end()) {
    fault = it->second;
  }
  return fault;
}

// What a route whose action mesh cannot carry out does instead: fail every
// call at once. Built whole, so no delay and no max_active_faults limit
// (past which calls would go on to the destination) carry over.
FaultInjection AbortAll(const RouteConfigResource& config,
                        const RouteResource& route, size_t index) {
  FaultInjection fault;
  fault.abort_per_million = 1'000'000;
  fault.abort_code = absl::StatusCode::kUnavailable;
  std::string name =
      route.route.name.empty() ? absl::StrCat("#", index) : route.route.name;
  fault.abort_message =
      absl::StrCat("route '", name, "' of route configuration '", config.name,
                   "': ", route.unsupported_action, " is not supported");
  return fault;
}

}  // namespace

const VirtualHostResource* SelectVirtualHost(const RouteConfigResource& config,
                                             absl::string_view authority) {
  const VirtualHostResource* best = nullptr;
  DomainKind best_kind = DomainKind::kInvalid;
  size_t best_length = 0;
  for (const VirtualHostResource& vhost : config.virtual_hosts) {
    for (const std::string& domain : vhost.domains) {
      DomainKind kind = KindOf(domain);
      // Strictly better only: among equals the first virtual host stays.
      if (kind > best_kind) continue;
      if (kind == best_kind && domain.size() <= best_length) continue;
      if (!Matches(kind, domain, authority)) continue;
      best = &vhost;
      best_kind = kind;
      best_length = domain.size();
      if (kind == DomainKind::kExact) return best;
    }
  }
  return best;
}

absl::StatusOr<ServiceConfig> BuildServiceConfig(
    const ListenerResource& listener, const RouteConfigResource& route_config,
    absl::string_view authority) {
  const VirtualHostResource* vhost = SelectVirtualHost(route_config, authority);
  if (vhost == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("route configuration '", route_config.name,
                     "' has no virtual host for '", authority, "' (",
                     ListDomains(route_config), ")"));
  }
  // A virtual host no target reached when it came is converted now; an
  // error found now fails this target (the resource was ACKed).
  absl::StatusOr<VirtualHostResource> converted;
  if (!vhost->wire.empty()) {
    converted = ConvertLazyVirtualHost(*vhost);
    if (!converted.ok()) {
      return absl::UnavailableError(absl::StrCat(
          "route configuration '", QuotedText(route_config.name),
          "': virtual host '", QuotedText(vhost->name),
          "' (converted when first reached): ", converted.status().message()));
    }
    vhost = &*converted;
  }
  ServiceConfig config;
  config.fully_qualified_name = HostOf(authority);
  config.require_route_match = true;
  config.routes.reserve(vhost->routes.size());
  for (size_t i = 0; i < vhost->routes.size(); ++i) {
    const RouteResource& resource = vhost->routes[i];
    Route route = resource.route;
    absl::Duration timeout =
        resource.max_stream_duration.value_or(listener.max_stream_duration);
    route.timeout =
        timeout <= absl::ZeroDuration() ? absl::InfiniteDuration() : timeout;
    if (!resource.unsupported_action.empty()) {
      route.backends.clear();
      route.fault = AbortAll(route_config, resource, i);
    } else {
      route.backends = resource.clusters;
      for (WeightedBackend& backend : route.backends) backend.authority.clear();
      route.fault = FaultFor(listener, *vhost, resource);
    }
    for (const HashPolicy& h : resource.hash_policies) {
      RequestHashPolicy policy;
      policy.kind = h.kind == HashPolicy::Kind::kChannelId
                        ? RequestHashPolicy::Kind::kChannel
                        : RequestHashPolicy::Kind::kHeader;
      policy.header = h.header_name;
      policy.regex = h.regex;
      policy.substitution = h.regex_substitution;
      policy.terminal = h.terminal;
      route.hash_policies.push_back(std::move(policy));
    }
    config.routes.push_back(std::move(route));
  }
  return config;
}

std::vector<std::string> ClustersOf(const ServiceConfig& config) {
  std::vector<std::string> clusters;
  auto add = [&clusters](const std::vector<WeightedBackend>& backends) {
    for (const WeightedBackend& backend : backends) {
      if (!backend.cluster.empty()) clusters.push_back(backend.cluster);
    }
  };
  add(config.backends);
  for (const Route& route : config.routes) add(route.backends);
  std::sort(clusters.begin(), clusters.end());
  clusters.erase(std::unique(clusters.begin(), clusters.end()), clusters.end());
  return clusters;
}

}  // namespace mesh::internal::xds

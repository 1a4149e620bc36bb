#include "src/discovery/xds/xds_watchers.h"

#include <grpc/support/log.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/utf8.h"
#include "src/discovery/common/queued_observers.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/discovery/xds/xds_service_config.h"

namespace mesh::internal::xds {

struct XdsWatchers::TargetWatch {
  std::string target;
  // The subscriber's observers (null: not asked for), reached after the
  // client's lock is released, through `gate`.
  std::shared_ptr<DeliveryGate> gate = std::make_shared<DeliveryGate>();
  std::unique_ptr<QueuedConfigs> config;
  std::unique_ptr<QueuedEndpoints> endpoints;
  // What was delivered last: built from these two, held so that their
  // addresses stay theirs (null: a failure, then `failure` is its message).
  std::shared_ptr<const AnyResource> listener;
  std::shared_ptr<const AnyResource> routes;
  std::string failure;
  bool delivered = false;
  bool exists_sent = false;
  std::vector<std::string> clusters;  // asked for ahead of the first call
  // What the watch was last told it waits for (WaitingFor).
  std::string waiting_for;
};

struct XdsWatchers::ClusterWatch {
  std::string cluster;
  // The subscriber's observer, reached after the client's lock is
  // released, through `gate`.
  std::shared_ptr<DeliveryGate> gate = std::make_shared<DeliveryGate>();
  std::unique_ptr<QueuedEndpoints> endpoints;
  // What was delivered last: the Cluster it came from (null: a failure,
  // then `failure` is its message), the ClusterLoadAssignment (EDS).
  std::shared_ptr<const AnyResource> cluster_resource;
  std::shared_ptr<const AnyResource> endpoints_resource;
  std::string failure;
  bool delivered = false;
  // A DNS cluster's hosts, in the cluster's order (empty for EDS), and
  // what their answers made last (unset until delivered).
  std::vector<DnsWatch> dns;
  std::optional<DnsClusterUpdate> dns_delivered;
};

XdsWatchers::XdsWatchers(Options options) : options_(std::move(options)) {}

XdsWatchers::~XdsWatchers() = default;

const void* XdsWatchers::AddTarget(std::string target,
                                   ServiceConfigObserver* config,
                                   EndpointObserver* endpoints) {
  auto& w = targets_.emplace_back(std::make_unique<TargetWatch>());
  w->target = std::move(target);
  if (config != nullptr) {
    w->config =
        std::make_unique<QueuedConfigs>(config, options_.serializer, w->gate);
  }
  if (endpoints != nullptr) {
    w->endpoints = std::make_unique<QueuedEndpoints>(
        endpoints, options_.serializer, w->gate);
  }
  return w.get();
}

const void* XdsWatchers::AddCluster(std::string cluster,
                                    EndpointObserver* endpoints) {
  auto& w = clusters_.emplace_back(std::make_unique<ClusterWatch>());
  w->cluster = std::move(cluster);
  w->endpoints = std::make_unique<QueuedEndpoints>(
      endpoints, options_.serializer, w->gate);
  return w.get();
}

std::shared_ptr<DeliveryGate> XdsWatchers::Remove(const void* watch) {
  std::shared_ptr<DeliveryGate> gate;
  auto take = [watch, &gate](auto& watches) {
    for (auto it = watches.begin(); it != watches.end(); ++it) {
      if (it->get() != watch) continue;
      gate = (*it)->gate;
      watches.erase(it);
      return;
    }
  };
  take(targets_);
  take(clusters_);
  return gate;
}

std::array<std::set<std::string>, kResourceTypes> XdsWatchers::NamesWanted(
    const ResourceCache& cache) const {
  std::array<std::set<std::string>, kResourceTypes> want;
  auto names = [&want](ResourceType type) -> std::set<std::string>& {
    return want[static_cast<int>(type)];
  };
  for (const auto& t : targets_) {
    names(ResourceType::kListener).insert(t->target);
    const auto* listener =
        cache.Get<ListenerResource>(ResourceType::kListener, t->target);
    if (listener != nullptr && !listener->route_config_name.empty()) {
      names(ResourceType::kRouteConfig).insert(listener->route_config_name);
    }
    for (const std::string& c : t->clusters) {
      names(ResourceType::kCluster).insert(c);
    }
  }
  for (const auto& c : clusters_)
    names(ResourceType::kCluster).insert(c->cluster);
  for (const std::string& c : names(ResourceType::kCluster)) {
    const auto* cluster = cache.Get<ClusterResource>(ResourceType::kCluster, c);
    // DNS clusters ask DNS, not EDS.
    if (cluster != nullptr &&
        cluster->discovery == ClusterResource::Discovery::kEds) {
      names(ResourceType::kEndpoints).insert(cluster->eds_service_name);
    }
  }
  return want;
}

std::vector<std::string> XdsWatchers::AuthoritiesReaching(
    const ResourceCache& cache, const std::string& route_config_name) const {
  std::vector<std::string> out;
  for (const auto& t : targets_) {
    const auto* listener =
        cache.Get<ListenerResource>(ResourceType::kListener, t->target);
    if (listener != nullptr &&
        listener->route_config_name == route_config_name) {
      out.push_back(t->target);
    }
  }
  return out;
}

void XdsWatchers::ReportStreamEnd(const absl::Status& error, bool final) {
  for (auto& t : targets_) {
    if (t->delivered) continue;
    t->waiting_for.clear();
    if (t->endpoints != nullptr) t->endpoints->OnDiscoveryError(error);
    if (final && t->config != nullptr) t->config->OnServiceConfigError(error);
  }
  for (auto& c : clusters_) {
    if (!c->delivered) c->endpoints->OnDiscoveryError(error);
  }
}

void XdsWatchers::WaitingFor(TargetWatch& w, std::string what) {
  if (w.waiting_for == what || w.endpoints == nullptr) return;
  w.waiting_for = what;
  w.endpoints->OnDiscoveryError(absl::UnavailableError(std::move(what)));
}

void XdsWatchers::NotifyTargets(const ResourceCache& cache) {
  for (auto& t : targets_) NotifyTarget(cache, *t);
}

void XdsWatchers::NotifyClusters(const ResourceCache& cache) {
  for (auto& c : clusters_) NotifyCluster(cache, *c);
}

void XdsWatchers::NotifyTarget(const ResourceCache& cache, TargetWatch& w) {
  auto fail = [&w](std::string why, bool exists) {
    if (w.delivered && w.listener == nullptr && w.failure == why) return;
    gpr_log(GPR_ERROR, "mesh: xds: target '%s': %s",
            QuotedText(w.target).c_str(), why.c_str());
    w.delivered = true;
    w.listener = w.routes = nullptr;
    w.failure = why;
    w.clusters.clear();
    w.exists_sent = false;  // a restored listener says so again
    if (w.config != nullptr) {
      w.config->OnServiceConfigRemoved(absl::UnavailableError(std::move(why)));
    }
    if (w.endpoints != nullptr) {
      w.endpoints->OnEndpointUpdate(EndpointUpdate::NoEndpoints(exists));
    }
  };
  // A rejected update: reported; a good config that serves is kept.
  auto error = [&w](std::string why) {
    if (w.config != nullptr) {
      w.config->OnServiceConfigError(absl::UnavailableError(why));
    }
  };
  const CachedResource* l = cache.Find(ResourceType::kListener, w.target);
  if (l == nullptr) return;
  if (l->resource == nullptr) {
    switch (l->status.state) {
      case ResourceStatus::State::kDoesNotExist:
        return fail(
            absl::StrCat("xDS Listener '", w.target, "' does not exist"),
            false);
      case ResourceStatus::State::kNacked:
        return error(absl::StrCat("xDS Listener '", w.target,
                                  "' was rejected: ", l->status.error));
      default:
        return;  // not answered yet
    }
  }
  const auto& listener = std::get<ListenerResource>(*l->resource);
  const RouteConfigResource* routes = nullptr;
  std::shared_ptr<const AnyResource> routes_key;
  if (listener.inline_route_config) {
    routes = &*listener.inline_route_config;
    routes_key = l->resource;
  } else {
    const CachedResource* r =
        cache.Find(ResourceType::kRouteConfig, listener.route_config_name);
    const std::string waiting = absl::StrCat(
        "xDS Listener '", QuotedText(w.target), "' names RouteConfiguration '",
        QuotedText(listener.route_config_name), "', which has not come");
    if (r == nullptr) {  // asked for by the next update
      if (!w.delivered) WaitingFor(w, waiting);
      return;
    }
    if (r->resource == nullptr) {
      switch (r->status.state) {
        case ResourceStatus::State::kDoesNotExist:
          return fail(
              absl::StrCat("xDS RouteConfiguration '",
                           listener.route_config_name, "' of Listener '",
                           w.target, "' does not exist"),
              true);
        case ResourceStatus::State::kNacked:
          return error(absl::StrCat("xDS RouteConfiguration '",
                                    listener.route_config_name,
                                    "' was rejected: ", r->status.error));
        default:
          // Calls waiting for routes say which resource they wait for.
          if (!w.delivered) WaitingFor(w, waiting);
          return;
      }
    }
    routes = &std::get<RouteConfigResource>(*r->resource);
    routes_key = r->resource;
  }
  if (w.delivered && w.listener == l->resource && w.routes == routes_key) {
    return;  // unchanged
  }
  if (w.config == nullptr) {
    // The target's own endpoint state: it exists.
    w.delivered = true;
    w.listener = l->resource;
    w.routes = routes_key;
    w.failure.clear();
    if (!w.exists_sent && w.endpoints != nullptr) {
      w.exists_sent = true;
      w.endpoints->OnEndpointUpdate(EndpointUpdate::NoEndpoints(true));
    }
    return;
  }
  absl::StatusOr<ServiceConfig> config =
      BuildServiceConfig(listener, *routes, w.target);
  if (!config.ok()) return fail(std::string(config.status().message()), true);
  w.delivered = true;
  w.listener = l->resource;
  w.routes = routes_key;
  w.failure.clear();
  w.clusters = ClustersOf(*config);
  w.config->OnServiceConfig(*std::move(config));
  if (!w.exists_sent && w.endpoints != nullptr) {
    w.exists_sent = true;
    w.endpoints->OnEndpointUpdate(EndpointUpdate::NoEndpoints(true));
  }
}

void XdsWatchers::FailCluster(ClusterWatch& w, std::string why) {
  w.dns.clear();
  w.dns_delivered.reset();
  if (w.delivered && w.cluster_resource == nullptr && w.failure == why) {
    return;
  }
  w.delivered = true;
  w.cluster_resource = w.endpoints_resource = nullptr;
  w.failure = why;
  w.endpoints->OnDiscoveryError(absl::UnavailableError(why));
  w.endpoints->OnEndpointUpdate(EndpointUpdate::NoEndpoints(false, why));
}

void XdsWatchers::NotifyCluster(const ResourceCache& cache, ClusterWatch& w) {
  const CachedResource* c = cache.Find(ResourceType::kCluster, w.cluster);
  if (c == nullptr) return;
  if (c->resource == nullptr) {
    if (c->status.state == ResourceStatus::State::kDoesNotExist) {
      return FailCluster(
          w, absl::StrCat("xDS Cluster '", w.cluster, "' does not exist"));
    }
    if (c->status.state == ResourceStatus::State::kNacked) {
      w.endpoints->OnDiscoveryError(absl::UnavailableError(absl::StrCat(
          "xDS Cluster '", w.cluster, "' was rejected: ", c->status.error)));
    }
    return;
  }
  const auto& cluster = std::get<ClusterResource>(*c->resource);
  if (cluster.discovery != ClusterResource::Discovery::kEds) {
    return NotifyDnsCluster(w, c->resource);
  }
  // Was it a DNS cluster? Its names are no longer asked; what they
  // answered serves until the assignment replaces it.
  w.dns.clear();
  w.dns_delivered.reset();
  const CachedResource* e =
      cache.Find(ResourceType::kEndpoints, cluster.eds_service_name);
  if (e == nullptr) return;
  if (e->resource == nullptr) {
    if (e->status.state == ResourceStatus::State::kDoesNotExist) {
      return FailCluster(
          w,
          absl::StrCat("xDS ClusterLoadAssignment '", cluster.eds_service_name,
                       "' of Cluster '", w.cluster, "' does not exist"));
    }
    if (e->status.state == ResourceStatus::State::kNacked) {
      w.endpoints->OnDiscoveryError(absl::UnavailableError(
          absl::StrCat("xDS ClusterLoadAssignment '", cluster.eds_service_name,
                       "' was rejected: ", e->status.error)));
    }
    return;
  }
  if (w.delivered && w.cluster_resource == c->resource &&
      w.endpoints_resource == e->resource) {
    return;
  }
  w.delivered = true;
  w.cluster_resource = c->resource;
  w.endpoints_resource = e->resource;
  w.failure.clear();
  const auto& assignment = std::get<EndpointsResource>(*e->resource);
  BackendPolicy policy =
      ClusterBackendPolicy(cluster, options_.honour_round_robin);
  for (const EndpointsResource::Drop& d : assignment.drop_overloads) {
    policy.drops.push_back({d.category, d.per_million});
  }
  w.endpoints->OnBackendPolicy(policy);
  std::vector<Endpoint> endpoints = EndpointsToServe(assignment);
  GiveClusterTls(cluster, &endpoints);
  if (endpoints.empty()) {
    w.endpoints->OnEndpointUpdate(EndpointUpdate::NoEndpoints(true));
  } else {
    w.endpoints->OnEndpointUpdate(EndpointUpdate::Reset(std::move(endpoints)));
  }
}

absl::Status XdsWatchers::WatchDnsHosts(ClusterWatch& w,
                                        const ClusterResource& cluster) {
  const bool same =
      w.dns.size() == cluster.dns_hosts.size() &&
      std::equal(
          w.dns.begin(), w.dns.end(), cluster.dns_hosts.begin(),
          [](const DnsWatch& d, const DnsHost& h) { return d.host == h; });
  if (same) return absl::OkStatus();
  if (dns_taken_) return absl::UnavailableError("the xDS client is shut down");
  // A source that could not be made is tried again at a later update, at
  // most every 5 s.
  if (dns_ == nullptr &&
      (dns_status_.ok() || absl::Now() - dns_failed_at_ >= absl::Seconds(5))) {
    absl::StatusOr<std::shared_ptr<DiscoverySource>> made =
        options_.dns ? options_.dns()
                     : absl::FailedPreconditionError("no DNS source");
    if (made.ok()) {
      dns_ = *std::move(made);
    } else {
      dns_status_ = made.status();
      dns_failed_at_ = absl::Now();
      gpr_log(GPR_ERROR, "mesh: xds: cannot resolve DNS clusters: %s",
              std::string(dns_status_.message()).c_str());
    }
  }
  if (dns_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("DNS cannot be asked: ", dns_status_.message()));
  }
  std::vector<DnsWatch> next;
  next.reserve(cluster.dns_hosts.size());
  for (const DnsHost& host : cluster.dns_hosts) {
    const std::string target = host.Target();
    auto kept =
        std::find_if(w.dns.begin(), w.dns.end(), [&](const DnsWatch& d) {
          return d.subscription != nullptr && d.host.Target() == target;
        });
    if (kept != w.dns.end()) {
      kept->host = host;  // a new weight needs no new query
      next.push_back(std::move(*kept));
      continue;
    }
    DnsWatch& d = next.emplace_back();
    d.id = ++dns_ids_;
    d.host = host;
    // The answer is looked at on another thread, under the client's lock (see
    // DnsHostAnswer): never on the DNS source's thread.
    d.answer = std::make_unique<DnsHostAnswer>(
        [this, id = d.id] { options_.wake_dns(id); });
    d.subscription = dns_->Subscribe(target, d.answer.get());
  }
  // The hosts left out are unsubscribed here.
  w.dns = std::move(next);
  return absl::OkStatus();
}

void XdsWatchers::OnDnsAnswer(const ResourceCache& cache, uint64_t id) {
  for (auto& c : clusters_) {
    for (const DnsWatch& d : c->dns) {
      if (d.id == id) return NotifyCluster(cache, *c);
    }
  }
}

void XdsWatchers::NotifyDnsCluster(
    ClusterWatch& w, const std::shared_ptr<const AnyResource>& resource) {
  const auto& cluster = std::get<ClusterResource>(*resource);
  if (absl::Status s = WatchDnsHosts(w, cluster); !s.ok()) {
    return FailCluster(
        w, absl::StrCat("xDS Cluster '", w.cluster, "': ", s.message()));
  }
  std::vector<DnsHost> hosts;
  std::vector<DnsHostAnswer::State> answers;
  hosts.reserve(w.dns.size());
  answers.reserve(w.dns.size());
  for (const DnsWatch& d : w.dns) {
    hosts.push_back(d.host);
    answers.push_back(d.answer->Take());
  }
  DnsClusterUpdate update =
      CombineDnsAnswers(hosts, answers, cluster.dns_family);
  GiveClusterTls(cluster, &update.endpoints);
  const bool deliver =
      update.kind != DnsClusterUpdate::Kind::kWaiting &&
      (!w.delivered || w.cluster_resource != resource ||
       !w.dns_delivered.has_value() || !(*w.dns_delivered == update));
  // Failed queries first: the last answers stand (the DNS source keeps
  // them); said so, as the DNS source says it to its own subscribers, and
  // before the update, whose own reason (if none serve) comes last.
  for (size_t i = 0; i < answers.size(); ++i) {
    if (answers[i].error.empty()) continue;
    w.endpoints->OnDiscoveryError(absl::UnavailableError(
        absl::StrCat("xDS Cluster '", w.cluster, "': ", answers[i].error)));
  }
  if (deliver) {
    w.delivered = true;
    w.cluster_resource = resource;
    w.endpoints_resource = nullptr;
    w.failure.clear();
    w.endpoints->OnBackendPolicy(
        ClusterBackendPolicy(cluster, options_.honour_round_robin));
    if (update.kind == DnsClusterUpdate::Kind::kEndpoints) {
      w.endpoints->OnEndpointUpdate(EndpointUpdate::Reset(update.endpoints));
    } else {
      // Calls that find no endpoint name the hosts that have none.
      w.endpoints->OnEndpointUpdate(EndpointUpdate::NoEndpoints(
          update.exists,
          absl::StrCat("xDS Cluster '", w.cluster, "': ", update.why)));
    }
    w.dns_delivered = std::move(update);
  }
}

void XdsWatchers::AddResourcesOf(const ResourceCache& cache, const void* watch,
                                 DiscoverySubscription::State* state) const {
  auto add = [&cache, state](ResourceType type, const std::string& name) {
    const CachedResource* e = cache.Find(type, name);
    if (e == nullptr) return;
    const ResourceStatus& s = e->status;
    DiscoverySubscription::Resource& r = state->resources.emplace_back();
    r.type = TypeName(type);
    r.name = name;
    r.state = StateName(s.state);
    r.version = s.version;
    r.updated = s.has_resource ? s.updated : absl::InfinitePast();
    r.error = s.error;
  };
  for (const auto& t : targets_) {
    if (t.get() != watch) continue;
    add(ResourceType::kListener, t->target);
    const auto* listener =
        cache.Get<ListenerResource>(ResourceType::kListener, t->target);
    if (listener != nullptr && !listener->route_config_name.empty()) {
      add(ResourceType::kRouteConfig, listener->route_config_name);
    }
  }
  for (const auto& c : clusters_) {
    if (c.get() != watch) continue;
    add(ResourceType::kCluster, c->cluster);
    // A DNS cluster's names in place of the assignment.
    for (const DnsWatch& d : c->dns) {
      if (d.subscription == nullptr) continue;
      DiscoverySubscription::State dns = d.subscription->GetState();
      for (DiscoverySubscription::Resource& r : dns.resources) {
        state->resources.push_back(std::move(r));
      }
    }
    const auto* cluster =
        cache.Get<ClusterResource>(ResourceType::kCluster, c->cluster);
    if (cluster != nullptr &&
        cluster->discovery == ClusterResource::Discovery::kEds) {
      add(ResourceType::kEndpoints, cluster->eds_service_name);
    }
  }
}

void XdsWatchers::RefreshSoon(const void* watch) {
  for (const auto& c : clusters_) {
    if (c.get() != watch) continue;
    // A DNS cluster's names may have moved; the DNS source only posts this
    // to its own thread.
    for (const DnsWatch& d : c->dns) {
      if (d.subscription != nullptr) d.subscription->RefreshSoon();
    }
  }
}

XdsWatchers::Dns XdsWatchers::TakeDns() {
  Dns out;
  dns_taken_ = true;
  for (auto& c : clusters_) {
    for (DnsWatch& d : c->dns) out.watches.push_back(std::move(d));
    c->dns.clear();
  }
  out.source = std::move(dns_);
  return out;
}

}  // namespace mesh::internal::xds

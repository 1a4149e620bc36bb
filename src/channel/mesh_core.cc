#include "src/channel/mesh_core.h"

#include <grpc/support/log.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/base/mutex.h"
#include "src/discovery/common/builtin_source.h"
#include "src/model/address.h"
#include "src/tap/tap_transport.h"
#include "src/tls/certificate_check.h"
#include "src/transport/grpc_callback_queue.h"
#include "src/transport/grpc_transport.h"

namespace mesh::internal {

MeshCore::MeshCore(MeshOptions options)
    : options_(std::move(options)),
      tap_hub_(std::make_shared<TapHub>(
          options_.tap_redacted_headers,
          /*clock=*/nullptr, options_.tap_max_subscriptions,
          /*identity_in_use=*/options_.identity.enabled() &&
              !options_.transport_factory,
          /*default_transport=*/!options_.transport_factory)) {
  // One timer thread for the Mesh and every built-in source it is given.
  if (BuiltinSource* source = AsBuiltin(options_.discovery.get())) {
    source->LendTimers(timers_);
  }
  for (const auto& [scheme, source] : options_.discovery_by_scheme) {
    if (BuiltinSource* builtin = AsBuiltin(source.get())) {
      builtin->LendTimers(timers_);
    }
  }
}

namespace {

// The combinations of a server's TLS options (MeshOptions::tap_tls,
// MeshOptions::admin_tls) that make sense: nothing (plain text), or cert,
// key, CA, allowed identities and an address together. `field` and
// `address_field` name them in messages, `server` says what they secure.
absl::Status ValidateServerTls(const TapTlsOptions& tls,
                               const std::string& address,
                               absl::string_view field,
                               absl::string_view address_field,
                               absl::string_view server) {
  const std::string f = absl::StrCat("MeshOptions.", field);
  if (tls.cert_chain_pem.empty()) {
    if (!tls.private_key_pem.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          f, ".cert_chain_pem is required with ", f, ".private_key_pem"));
    }
    if (!tls.client_ca_pem.empty() || !tls.allowed_identities.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(f, ".cert_chain_pem is required with ", f,
                       ".client_ca_pem or allowed_identities: without it the ",
                       server, " would run in plain text"));
    }
    return absl::OkStatus();
  }
  if (tls.private_key_pem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        f, ".private_key_pem is required with ", f, ".cert_chain_pem"));
  }
  if (tls.client_ca_pem.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(f,
                     ".client_ca_pem is required with TLS: it verifies "
                     "the clients' certificates"));
  }
  if (tls.allowed_identities.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(f,
                     ".allowed_identities must not be empty with TLS: no "
                     "client would be served"));
  }
  if (address.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(f, " is set but MeshOptions.", address_field,
                     " is empty: there is no ", server, " to secure"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status MeshCore::StartIdentity() {
  const IdentityOptions& id = options_.identity;
  if (!id.enabled()) {
    // Half an identity is a mistake, not a request for plaintext.
    if (!id.private_key_file.empty() || !id.private_key_pem.empty() ||
        !id.trust_roots_file.empty() || !id.trust_roots_pem.empty() ||
        id.require_identity) {
      return absl::InvalidArgumentError(
          "MeshOptions.identity has no certificate chain (cert_chain_file "
          "or cert_chain_pem) but other fields set: without it every "
          "endpoint would be called in plaintext");
    }
    return absl::OkStatus();
  }
  if (options_.transport_factory) {
    return absl::InvalidArgumentError(
        "MeshOptions.identity is used by the default transport, and "
        "MeshOptions.transport_factory replaces it: set one or the other");
  }
  absl::StatusOr<std::shared_ptr<IdentityStore>> store =
      IdentityStore::Create(options_.identity);
  if (!store.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("MeshOptions.", store.status().message()));
  }
  identity_ = *std::move(store);
  if (identity_->watches_files()) {
    WatchFiles(identity_);
    ScheduleIdentityRefresh();
  }
  return absl::OkStatus();
}

void MeshCore::WatchFiles(const std::shared_ptr<IdentityStore>& store) {
  absl::Status watched = identity_watch_.Add(store);
  if (!watched.ok()) {
    gpr_log(GPR_INFO,
            "mesh: identity: files read again every %s only (not watched: "
            "%s)",
            absl::FormatDuration(store->options().refresh_interval).c_str(),
            std::string(watched.message()).c_str());
    return;
  }
  if (!watch_ticking_.exchange(true)) ScheduleWatchTick();
}

void MeshCore::ScheduleWatchTick() {
  absl::AnyInvocable<void()> tick = [this] {
    if (shut_down()) return;
    identity_watch_.Tick();
    ScheduleWatchTick();
  };
  timers_->TryRunAfter(IdentityWatch::kTick, tick);
}

void MeshCore::ScheduleIdentityRefresh() {
  absl::AnyInvocable<void()> refresh = [this] {
    // Close() at shutdown runs the pending refresh once: nothing to read.
    if (shut_down()) return;
    identity_->Refresh();
    ScheduleIdentityRefresh();
  };
  timers_->TryRunAfter(options_.identity.refresh_interval, refresh);
}

void MeshCore::ScheduleEndpointStoreRefresh(
    std::shared_ptr<IdentityStore> store) {
  const absl::Duration interval = store->options().refresh_interval;
  // Weak: a set no connection uses any more may leave endpoint_stores_.
  absl::AnyInvocable<void()> refresh =
      [this, weak = std::weak_ptr<IdentityStore>(store)] {
        if (shut_down()) return;
        std::shared_ptr<IdentityStore> alive = weak.lock();
        if (alive == nullptr) return;
        alive->Refresh();
        ScheduleEndpointStoreRefresh(std::move(alive));
      };
  timers_->TryRunAfter(interval, refresh);
}

absl::Status MeshCore::StartTapServer() {
  if (absl::Status s =
          ValidateServerTls(options_.tap_tls, options_.tap_address, "tap_tls",
                            "tap_address", "Observe server");
      !s.ok()) {
    return s;
  }
  if (options_.tap_address.empty()) return absl::OkStatus();
  // The sources' status services (xDS: CSDS), each once: sources may share
  // one, and a source may be both `discovery` and a scheme's.
  std::vector<std::shared_ptr<grpc::Service>> services;
  auto add = [&services](const std::shared_ptr<DiscoverySource>& source) {
    if (source == nullptr) return;
    const BuiltinSource* builtin = AsBuiltin(source.get());
    if (builtin == nullptr) return;
    std::shared_ptr<grpc::Service> service = builtin->StatusService();
    if (service != nullptr && std::find(services.begin(), services.end(),
                                        service) == services.end()) {
      services.push_back(std::move(service));
    }
  };
  add(options_.discovery);
  for (const auto& entry : options_.discovery_by_scheme) add(entry.second);
  // The Observe server is a callback-API server: gRPC's callback queue
  // must stay for it (a process that makes and drops meshes would tear the
  // queue down with each server otherwise).
  PinGrpcCallbackQueue();
  absl::StatusOr<std::unique_ptr<ObserveServer>> server = ObserveServer::Start(
      options_.tap_address, tap_hub_, options_.tap_tls, std::move(services));
  if (!server.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(options_.tap_tls.cert_chain_pem.empty()
                         ? "MeshOptions.tap_address: "
                         : "MeshOptions.tap_address or MeshOptions.tap_tls: ",
                     server.status().message()));
  }
  observe_server_ = *std::move(server);
  tap_port_ = observe_server_->port();
  return absl::OkStatus();
}

absl::Status MeshCore::StartAdminServer() {
  const TapTlsOptions& tls = options_.admin_tls;
  if (absl::Status s =
          ValidateServerTls(tls, options_.admin_address, "admin_tls",
                            "admin_address", "admin page");
      !s.ok()) {
    return s;
  }
  if (options_.admin_address.empty()) return absl::OkStatus();
  AdminTls admin_tls;
  if (!tls.cert_chain_pem.empty()) {
    // Checked here so that a bad PEM is named; libmicrohttpd would only
    // fail to start.
    if (absl::StatusOr<CertificateFacts> pair =
            CheckKeyPair(tls.cert_chain_pem, tls.private_key_pem, absl::Now());
        !pair.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("MeshOptions.admin_tls: ", pair.status().message()));
    }
    if (absl::Status roots = CheckTrustRoots(tls.client_ca_pem); !roots.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MeshOptions.admin_tls.client_ca_pem: ", roots.message()));
    }
    admin_tls.cert_chain_pem = tls.cert_chain_pem;
    admin_tls.private_key_pem = tls.private_key_pem;
    admin_tls.client_ca_pem = tls.client_ca_pem;
    admin_tls.allowed_identities = tls.allowed_identities;
  }
  AdminSources sources;
  // The server ends in Shutdown, before this core.
  sources.describe = [this] { return Describe(); };
  sources.metrics = [this] { return Metrics(); };
  sources.tap = [this](const TapOptions& options) {
    return tap_hub_->Subscribe(options);
  };
  absl::StatusOr<std::unique_ptr<AdminServer>> server = AdminServer::Start(
      options_.admin_address, std::move(sources), {}, std::move(admin_tls));
  if (!server.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("MeshOptions.admin_address: ", server.status().message()));
  }
  admin_server_ = *std::move(server);
  return absl::OkStatus();
}

std::string MeshCore::admin_address() const {
  return admin_server_ != nullptr ? admin_server_->address() : std::string();
}

absl::StatusOr<std::pair<DiscoverySource*, std::string>> MeshCore::SourceFor(
    const std::string& scheme) const {
  if (scheme.empty()) {
    return std::make_pair(options_.discovery.get(),
                          options_.discovery->Scheme());
  }
  auto found = options_.discovery_by_scheme.find(scheme);
  if (found != options_.discovery_by_scheme.end()) {
    return std::make_pair(found->second.get(), scheme);
  }
  if (options_.discovery->Scheme() == scheme) {
    return std::make_pair(options_.discovery.get(), scheme);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no discovery source serves the target scheme '", scheme,
                   "' (MeshOptions::discovery_by_scheme)"));
}

absl::StatusOr<std::shared_ptr<Destination>> MeshCore::GetDestination(
    const std::string& target) {
  absl::StatusOr<Target> parsed = ParseTarget(target);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<std::pair<DiscoverySource*, std::string>> source =
      SourceFor(parsed->scheme);
  if (!source.ok()) return source.status();
  if (const BuiltinSource* builtin = AsBuiltin(source->first);
      !parsed->authority.empty() &&
      (builtin == nullptr || !builtin->TakesAuthority())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target '", target, "' names an authority, which the '",
        source->second.empty() ? "default" : source->second,
        "' discovery source does not take: write scheme:///name:port"));
  }
  return FindOrMake(target, *source->first, SourceName(*parsed), parsed->name,
                    /*cluster=*/false);
}

absl::StatusOr<std::shared_ptr<Destination>> MeshCore::GetClusterDestination(
    const std::string& target, const std::string& cluster) {
  absl::StatusOr<Target> parsed = ParseTarget(target);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<std::pair<DiscoverySource*, std::string>> source =
      SourceFor(parsed->scheme);
  if (!source.ok()) return source.status();
  // Targets hold no spaces: a cluster's key never names a target.
  std::string key = absl::StrCat(
      source->second, source->second.empty() ? "" : " ", "cluster ", cluster);
  return FindOrMake(key, *source->first, cluster, /*authority=*/"",
                    /*cluster=*/true);
}

absl::StatusOr<std::shared_ptr<Destination>> MeshCore::FindOrMake(
    const std::string& key, DiscoverySource& source, const std::string& name,
    const std::string& authority, bool cluster) {
  std::shared_ptr<Destination> dest;
  {
    MutexLock lock(&mu_);
    if (shut_down()) {
      return absl::FailedPreconditionError("mesh is shut down");
    }
    auto found = destinations_.find(key);
    if (found != destinations_.end()) {
      dest = found->second.lock();
      if (dest != nullptr) return dest;
    }
    // Targets no channel uses any more leave the map here, so it holds at
    // most the live targets plus those dropped since the last new one.
    absl::erase_if(destinations_,
                   [](const auto& entry) { return entry.second.expired(); });
    std::unique_ptr<Transport> transport =
        options_.transport_factory
            ? options_.transport_factory()
            : std::make_unique<GrpcTransport>(GrpcTransportOptions{}, identity_,
                                              endpoint_stores_);
    if (transport == nullptr) {
      return absl::InvalidArgumentError(
          "MeshOptions.transport_factory returned null");
    }
    // Not make_shared: a weak_ptr left in the map must not keep the whole
    // Destination's memory. A cluster's calls carry their channel's
    // authority; a target's, its name.
    dest = std::shared_ptr<Destination>(new Destination(
        key, authority, std::move(transport), tap_hub_, metrics_, timers_,
        options_.route_limits,
        DestinationTls{
            identity_ != nullptr,
            identity_ != nullptr && options_.identity.require_identity,
            !options_.transport_factory}));
    destinations_[key] = dest;
    // Subscribing under mu_ keeps a second channel for the same target from
    // seeing the destination before its first update. REQUIRES (see
    // DiscoverySource::Subscribe): sources do not call back into the Mesh.
    dest->Start(source, name, cluster);
  }
  return dest;
}

std::vector<std::shared_ptr<Destination>> MeshCore::LiveDestinations() {
  std::vector<std::shared_ptr<Destination>> live;
  {
    MutexLock lock(&mu_);
    for (auto& [target, weak] : destinations_) {
      if (auto d = weak.lock()) live.push_back(std::move(d));
    }
  }
  std::sort(live.begin(), live.end(), [](const auto& a, const auto& b) {
    return a->target() < b->target();
  });
  return live;
}

std::string MeshCore::Describe() {
  std::vector<std::shared_ptr<Destination>> live = LiveDestinations();
  std::string out = "[";
  for (size_t i = 0; i < live.size(); ++i) {
    if (i > 0) out += ",";
    out += DescribeJson(live[i]->View());
  }
  return out + "]";
}

std::string MeshCore::Metrics() {
  std::vector<EndpointGauges> gauges;
  for (const auto& d : LiveDestinations()) d->CollectGauges(&gauges);
  return metrics_->RenderPrometheus(gauges);
}

bool MeshCore::RunLater(absl::Duration delay,
                        absl::AnyInvocable<void()>& task) {
  return timers_->TryRunAfter(delay, task) != 0;
}

void MeshCore::Shutdown() {
  std::vector<std::shared_ptr<Destination>> live;
  {
    MutexLock lock(&mu_);
    shut_down_.store(true, std::memory_order_release);
    for (auto& [target, weak] : destinations_) {
      if (auto d = weak.lock()) live.push_back(std::move(d));
    }
    destinations_.clear();
  }
  // The admin page and tap streams end first (their handlers return within
  // a poll).
  admin_server_.reset();
  observe_server_.reset();
  // Retries waiting out their backoff see the shutdown and fail at once.
  // So do calls waiting for endpoints, when their timeout runs here.
  for (auto& retry : timers_->Close()) retry();
  for (auto& d : live) d->Shutdown();
}

}  // namespace mesh::internal

#include "mesh/mesh.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "src/balance/balancer.h"
#include "src/channel/channel_core.h"
#include "src/channel/grpc_channel.h"
#include "src/channel/mesh_core.h"
#include "src/model/address.h"

namespace mesh {

absl::StatusOr<std::unique_ptr<Mesh>> Mesh::Create(MeshOptions options) {
  if (options.discovery == nullptr) {
    return absl::InvalidArgumentError(
        "MeshOptions.discovery is required (e.g. StaticDiscovery::Create())");
  }
  for (const auto& [scheme, source] : options.discovery_by_scheme) {
    if (source == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MeshOptions.discovery_by_scheme['", scheme, "'] is null"));
    }
    absl::StatusOr<internal::Target> t =
        internal::ParseTarget(absl::StrCat(scheme, ":///a:1"));
    if (!t.ok() || t->scheme != scheme) {
      return absl::InvalidArgumentError(
          absl::StrCat("MeshOptions.discovery_by_scheme: '", scheme,
                       "' is not a lower-case URI scheme"));
    }
  }
  if (options.tap_max_subscriptions < 1) {
    return absl::InvalidArgumentError(
        "MeshOptions.tap_max_subscriptions must be at least 1");
  }
  const RouteLimits& limits = options.route_limits;
  for (auto [name, value] :
       {std::make_pair("max_routes", int64_t{limits.max_routes}),
        std::make_pair("max_conditions_per_route",
                       int64_t{limits.max_conditions_per_route}),
        std::make_pair("max_depth", int64_t{limits.max_depth}),
        std::make_pair("max_regex_program_size",
                       limits.max_regex_program_size)}) {
    if (value < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MeshOptions.route_limits.", name, " must be at least 1"));
    }
  }
  auto core = std::make_shared<internal::MeshCore>(std::move(options));
  absl::Status started = core->StartIdentity();
  if (started.ok()) started = core->StartTapServer();
  if (started.ok()) started = core->StartAdminServer();
  if (!started.ok()) {
    // Stops what did start (the identity's refresh) before the core goes.
    core->Shutdown();
    return started;
  }
  return std::unique_ptr<Mesh>(new Mesh(std::move(core)));
}

Mesh::Mesh(std::shared_ptr<internal::MeshCore> core) : core_(std::move(core)) {}

Mesh::~Mesh() { core_->Shutdown(); }

std::string Mesh::Describe() const { return core_->Describe(); }

std::string Mesh::Metrics() const { return core_->Metrics(); }

absl::StatusOr<std::unique_ptr<TapSubscription>> Mesh::Tap(
    const TapOptions& options) const {
  return core_->tap_hub().Subscribe(options);
}

int Mesh::tap_port() const { return core_->tap_port(); }

std::string Mesh::AdminAddress() const { return core_->admin_address(); }

absl::StatusOr<std::unique_ptr<Channel>> Mesh::NewChannel(
    const std::string& target, const ChannelOptions& options) {
  absl::StatusOr<std::shared_ptr<internal::ChannelCore>> core =
      NewChannelCore(target, options);
  if (!core.ok()) return core.status();
  return std::unique_ptr<Channel>(new Channel(*std::move(core)));
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> Mesh::NewGrpcChannel(
    const std::string& target, const ChannelOptions& options) {
  absl::StatusOr<std::shared_ptr<internal::ChannelCore>> core =
      NewChannelCore(target, options);
  if (!core.ok()) return core.status();
  return internal::NewHijackingChannel(*std::move(core));
}

absl::StatusOr<std::shared_ptr<internal::ChannelCore>> Mesh::NewChannelCore(
    const std::string& target, const ChannelOptions& options) {
  absl::StatusOr<internal::Target> parsed = internal::ParseTarget(target);
  if (!parsed.ok()) return parsed.status();
  if (options.default_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "ChannelOptions.default_timeout must be > 0");
  }
  if (options.fail_fast_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "ChannelOptions.fail_fast_timeout must be >= 0");
  }
  absl::StatusOr<std::unique_ptr<internal::Balancer>> balancer =
      internal::Balancer::Create(options.balancer);
  if (!balancer.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ChannelOptions.balancer: ", balancer.status().message()));
  }
  absl::StatusOr<std::shared_ptr<internal::Destination>> dest =
      core_->GetDestination(target);
  if (!dest.ok()) return dest.status();
  return std::make_shared<internal::ChannelCore>(target, parsed->name, options,
                                                 core_, *std::move(dest),
                                                 *std::move(balancer));
}

}  // namespace mesh

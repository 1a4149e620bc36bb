// NewXdsDiscovery: the DiscoverySource over one XdsClient.
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mesh/dns.h"
#include "mesh/xds.h"
#include "src/discovery/common/builtin_source.h"
#include "src/discovery/dns/dns_options.h"
#include "src/discovery/xds/bootstrap.h"
#include "src/discovery/xds/csds_service.h"
#include "src/discovery/xds/xds_client.h"
#include "src/tls/tls_credentials.h"

namespace mesh {
namespace {

class XdsDiscovery final : public internal::BuiltinSource {
 public:
  explicit XdsDiscovery(std::shared_ptr<internal::xds::XdsClient> client)
      : client_(std::move(client)) {}
  ~XdsDiscovery() override { client_->Shutdown(); }

  std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) override {
    return client_->WatchTarget(target, nullptr, observer);
  }
  std::unique_ptr<DiscoverySubscription> SubscribeConfig(
      const std::string& target, ServiceConfigObserver* observer) override {
    return client_->WatchTarget(target, observer, nullptr);
  }
  std::unique_ptr<DiscoverySubscription> SubscribeCluster(
      const std::string& cluster, EndpointObserver* observer) override {
    return client_->WatchCluster(cluster, observer);
  }
  bool RoutesRequired() const override { return true; }
  std::string Scheme() const override { return "xds"; }
  std::string KindName() const override { return "xds"; }
  // One CSDS service for the process, showing every xDS client.
  std::shared_ptr<grpc::Service> StatusService() const override {
    return internal::xds::CsdsService();
  }
  void LendTimers(
      const std::shared_ptr<internal::TimerThread>& timers) override {
    client_->LendTimers(timers);
  }

 private:
  const std::shared_ptr<internal::xds::XdsClient> client_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<DiscoverySource>> NewXdsDiscovery(
    const XdsOptions& options) {
  if (options.resource_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "XdsOptions.resource_timeout must be > 0");
  }
  if (options.backoff_min <= absl::ZeroDuration() ||
      options.backoff_max < options.backoff_min) {
    return absl::InvalidArgumentError(
        "XdsOptions.backoff_min must be > 0 and backoff_max >= backoff_min");
  }
  if (options.max_message_bytes < 1024) {
    return absl::InvalidArgumentError(
        "XdsOptions.max_message_bytes must be at least 1024");
  }
  if (absl::Status s = internal::ValidateDnsOptions(options.dns); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("XdsOptions.dns: ", s.message()));
  }
  absl::StatusOr<internal::xds::XdsBootstrap> bootstrap =
      internal::xds::LoadXdsBootstrap(options.bootstrap_json,
                                      options.bootstrap_path);
  if (!bootstrap.ok()) return bootstrap.status();
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  const internal::xds::XdsServer& server = bootstrap->servers[0];
  if (server.channel_creds_type == "tls") {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> tls =
        internal::WatchedFileTlsCredentials(
            server.tls.ca_certificate_file, server.tls.certificate_file,
            server.tls.private_key_file, server.tls.refresh_interval);
    if (!tls.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("xDS bootstrap: xds_servers[0].channel_creds tls: ",
                       tls.status().message()));
    }
    credentials = *std::move(tls);
  }
  // DNS clusters' source: made by the client when it first needs one.
  auto client = std::make_shared<internal::xds::XdsClient>(
      *std::move(bootstrap), options, std::move(credentials),
      [dns = options.dns] { return NewDnsDiscovery(dns); });
  internal::xds::RegisterForCsds(client);
  return std::shared_ptr<DiscoverySource>(
      std::make_shared<XdsDiscovery>(std::move(client)));
}

}  // namespace mesh

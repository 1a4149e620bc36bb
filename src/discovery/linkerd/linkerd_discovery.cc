// The Linkerd discovery source: Destination.Get and GetProfile streams per
// target, parsed and converted into the model at this edge (convert.h) and
// kept open with StreamWatch.
#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "linkerd/destination.grpc.pb.h"
#include "mesh/discovery.h"
#include "src/base/timer_thread.h"
#include "src/discovery/linkerd/convert.h"
#include "src/discovery/stream_watch.h"
#include "src/tls/tls_credentials.h"
#include "src/transport/grpc_callback_queue.h"

namespace mesh {
namespace {

namespace dst = ::io::linkerd::proxy::destination;
using internal::ExponentialBackoff;
using internal::StreamWatch;

// What every subscription of one source shares; subscriptions keep it alive,
// so the timer thread outlives every watch that uses it.
struct Shared {
  LinkerdDiscoveryOptions options;
  std::shared_ptr<grpc::Channel> channel;
  internal::TimerThread timers;
};

// "Not a mesh service": the controller will never answer this target.
const std::vector<absl::StatusCode> kFinalCodes = {
    absl::StatusCode::kInvalidArgument, absl::StatusCode::kFailedPrecondition};

std::string MethodPath(const char* method) {
  return absl::StrCat("/", dst::Destination::service_full_name(), "/", method);
}

class Subscription final : public DiscoverySubscription {
 public:
  Subscription(std::shared_ptr<Shared> shared, const std::string& target,
               const char* method, StreamWatch::Hooks hooks)
      : shared_(std::move(shared)) {
    dst::GetDestination request;
    request.set_path(target);
    request.set_context_token(shared_->options.context_token);
    hooks.method = MethodPath(method);
    hooks.request = request.SerializeAsString();
    hooks.name = absl::StrCat("linkerd ", method, " '", target, "'");
    hooks.final_codes = kFinalCodes;
    watch_ = std::make_unique<StreamWatch>(
        shared_->channel, &shared_->timers,
        ExponentialBackoff(shared_->options.backoff_min,
                           shared_->options.backoff_max),
        std::move(hooks));
    watch_->Start();
  }
  ~Subscription() override { watch_.reset(); }

  State GetState() const override { return watch_->State(); }

 private:
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<StreamWatch> watch_;  // stopped before the rest
};

class LinkerdDiscovery final : public DiscoverySource {
 public:
  explicit LinkerdDiscovery(std::shared_ptr<Shared> shared)
      : shared_(std::move(shared)) {}

  std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) override {
    StreamWatch::Hooks hooks;
    hooks.on_message = [observer, target](const grpc::ByteBuffer& bytes,
                                          bool first) -> absl::Status {
      dst::Update update;
      absl::Status parsed = internal::ParseReceived(bytes, &update);
      absl::StatusOr<EndpointUpdate> converted =
          parsed.ok() ? internal::linkerd::ConvertUpdate(update) : parsed;
      if (!converted.ok()) {
        // The stream restarts (StreamWatch logs it) and resynchronizes.
        observer->OnDiscoveryError(converted.status());
        return absl::Status(
            converted.status().code(),
            absl::StrCat("rejected an update: ", converted.status().message()));
      }
      // A new stream's first Add is the whole set: apply it as a Reset so
      // endpoints removed while we were disconnected go away.
      // (An empty Add is left an Add: it must not empty the set.)
      if (first && converted->kind == EndpointUpdate::Kind::kAdd &&
          !converted->endpoints.empty()) {
        converted->kind = EndpointUpdate::Kind::kReset;
      }
      observer->OnEndpointUpdate(*converted);
      return absl::OkStatus();
    };
    hooks.on_end = [observer, target](const absl::Status& status, bool final) {
      absl::Status s = status;
      if (final) {
        s = absl::Status(absl::StatusCode::kFailedPrecondition,
                         absl::StrCat("'", target,
                                      "' is not a mesh service (destination "
                                      "controller said: ",
                                      status.message(), ")"));
      } else if (status.ok()) {
        s = absl::UnavailableError("destination stream ended; reconnecting");
      }
      observer->OnDiscoveryError(s);  // StreamWatch has logged the end
    };
    return std::make_unique<Subscription>(shared_, target, "Get",
                                          std::move(hooks));
  }

  std::unique_ptr<DiscoverySubscription> SubscribeConfig(
      const std::string& target, ServiceConfigObserver* observer) override {
    StreamWatch::Hooks hooks;
    hooks.on_message = [observer, target](const grpc::ByteBuffer& bytes,
                                          bool) -> absl::Status {
      dst::DestinationProfile profile;
      if (absl::Status parsed = internal::ParseReceived(bytes, &profile);
          !parsed.ok()) {
        observer->OnServiceConfigError(parsed);
        return absl::Status(parsed.code(), absl::StrCat("rejected a profile: ",
                                                        parsed.message()));
      }
      // Each profile replaces the last whole, so the new stream's first one
      // resynchronizes by itself.
      internal::linkerd::ProfileConversion converted =
          internal::linkerd::ConvertProfile(profile);
      for (const std::string& line : converted.dropped) {
        gpr_log(GPR_ERROR, "mesh: linkerd profile '%s': %s", target.c_str(),
                line.c_str());
      }
      observer->OnServiceConfig(converted.config);
      return absl::OkStatus();
    };
    hooks.on_end = [observer](const absl::Status& status, bool) {
      // Reconnects; the last profile stays. StreamWatch has logged the end.
      if (!status.ok()) observer->OnServiceConfigError(status);
    };
    return std::make_unique<Subscription>(shared_, target, "GetProfile",
                                          std::move(hooks));
  }

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<DiscoverySource>> NewLinkerdDiscovery(
    const LinkerdDiscoveryOptions& options) {
  if (options.address.empty()) {
    return absl::InvalidArgumentError(
        "LinkerdDiscoveryOptions.address is required (e.g. 127.0.0.1:8086)");
  }
  if (options.backoff_min <= absl::ZeroDuration() ||
      options.backoff_max < options.backoff_min) {
    return absl::InvalidArgumentError(
        "LinkerdDiscoveryOptions.backoff_min must be > 0 and <= backoff_max");
  }
  if (options.max_message_bytes < 1024) {
    return absl::InvalidArgumentError(
        "LinkerdDiscoveryOptions.max_message_bytes must be at least 1024");
  }
  internal::PinGrpcCallbackQueue();
  auto shared = std::make_shared<Shared>();
  shared->options = options;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::InsecureChannelCredentials();
  if (options.identity.enabled() || !options.server_identity.empty()) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> tls =
        internal::ControlPlaneTlsCredentials(options.identity,
                                             options.server_identity);
    if (!tls.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("LinkerdDiscoveryOptions.", tls.status().message()));
    }
    credentials = *std::move(tls);
    internal::SetServerNameFor(options.server_identity, &args);
  }
  shared->channel =
      grpc::CreateCustomChannel(options.address, credentials, args);
  return std::shared_ptr<DiscoverySource>(
      std::make_shared<LinkerdDiscovery>(std::move(shared)));
}

}  // namespace mesh

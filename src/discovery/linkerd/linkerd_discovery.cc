// The Linkerd discovery source: Destination.Get and GetProfile streams per
// target, converted into the model at this edge (convert.h) and kept open
// with StreamWatch.
#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "linkerd/destination.grpc.pb.h"
#include "mesh/discovery.h"
#include "src/discovery/linkerd/convert.h"
#include "src/discovery/linkerd/stream_watch.h"
#include "src/discovery/timer_thread.h"
#include "src/transport/reaper.h"

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
  std::unique_ptr<dst::Destination::Stub> stub;
  internal::TimerThread timers;
};

// "Not a mesh service": the controller will never answer this target.
const std::vector<grpc::StatusCode> kFinalCodes = {
    grpc::StatusCode::INVALID_ARGUMENT, grpc::StatusCode::FAILED_PRECONDITION};

absl::Status ToAbsl(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      s.error_message());
}

template <typename Response>
class Subscription final : public DiscoverySubscription {
 public:
  Subscription(std::shared_ptr<Shared> shared, const std::string& target)
      : shared_(std::move(shared)) {
    request_.set_path(target);
    request_.set_context_token(shared_->options.context_token);
  }
  ~Subscription() override { watch_.reset(); }

  void Start(typename StreamWatch<Response>::Hooks hooks) {
    watch_ = std::make_unique<StreamWatch<Response>>(
        &shared_->timers,
        ExponentialBackoff(shared_->options.backoff_min,
                           shared_->options.backoff_max),
        std::move(hooks));
    watch_->Start();
  }

  State GetState() const override { return watch_ ? watch_->State() : State{}; }

  const dst::GetDestination& request() const { return request_; }
  dst::Destination::Stub& stub() { return *shared_->stub; }

 private:
  std::shared_ptr<Shared> shared_;
  dst::GetDestination request_;
  std::unique_ptr<StreamWatch<Response>> watch_;  // stopped before the rest
};

class LinkerdDiscovery final : public DiscoverySource {
 public:
  explicit LinkerdDiscovery(std::shared_ptr<Shared> shared)
      : shared_(std::move(shared)) {}

  std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) override {
    auto sub = std::make_unique<Subscription<dst::Update>>(shared_, target);
    auto* s = sub.get();
    typename StreamWatch<dst::Update>::Hooks hooks;
    hooks.final_codes = kFinalCodes;
    hooks.start = [s](grpc::ClientContext* ctx,
                      grpc::ClientReadReactor<dst::Update>* reactor) {
      s->stub().async()->Get(ctx, &s->request(), reactor);
    };
    hooks.on_message = [observer, target](const dst::Update& update,
                                          bool first) {
      absl::StatusOr<EndpointUpdate> converted =
          internal::linkerd::ConvertUpdate(update);
      if (!converted.ok()) {
        gpr_log(GPR_ERROR, "mesh: linkerd Get '%s': rejected update: %s",
                target.c_str(), converted.status().ToString().c_str());
        observer->OnDiscoveryError(converted.status());
        return false;  // the stream restarts and resynchronizes
      }
      // A new stream's first Add is the whole set: apply it as a Reset so
      // endpoints removed while we were disconnected go away.
      // (An empty Add is left an Add: it must not empty the set.)
      if (first && converted->kind == EndpointUpdate::Kind::kAdd &&
          !converted->endpoints.empty()) {
        converted->kind = EndpointUpdate::Kind::kReset;
      }
      observer->OnEndpointUpdate(*converted);
      return true;
    };
    hooks.on_end = [observer, target](const grpc::Status& status, bool final) {
      absl::Status s = ToAbsl(status);
      if (final) {
        s = absl::Status(absl::StatusCode::kFailedPrecondition,
                         absl::StrCat("'", target,
                                      "' is not a mesh service (destination "
                                      "controller said: ",
                                      status.error_message(), ")"));
      } else if (status.ok()) {
        s = absl::UnavailableError("destination stream ended; reconnecting");
      }
      gpr_log(__FILE__, __LINE__,
              final ? GPR_LOG_SEVERITY_ERROR : GPR_LOG_SEVERITY_INFO,
              "mesh: linkerd Get '%s': %s", target.c_str(),
              s.ToString().c_str());
      observer->OnDiscoveryError(s);
    };
    sub->Start(std::move(hooks));
    return sub;
  }

  std::unique_ptr<DiscoverySubscription> SubscribeConfig(
      const std::string& target, ServiceConfigObserver* observer) override {
    auto sub = std::make_unique<Subscription<dst::DestinationProfile>>(shared_,
                                                                       target);
    auto* s = sub.get();
    typename StreamWatch<dst::DestinationProfile>::Hooks hooks;
    hooks.final_codes = kFinalCodes;
    hooks.start =
        [s](grpc::ClientContext* ctx,
            grpc::ClientReadReactor<dst::DestinationProfile>* reactor) {
          s->stub().async()->GetProfile(ctx, &s->request(), reactor);
        };
    hooks.on_message = [observer, target](
                           const dst::DestinationProfile& profile, bool) {
      internal::linkerd::ProfileConversion converted =
          internal::linkerd::ConvertProfile(profile);
      for (const std::string& line : converted.dropped) {
        gpr_log(GPR_ERROR, "mesh: linkerd profile '%s': %s", target.c_str(),
                line.c_str());
      }
      observer->OnServiceConfig(converted.config);
      return true;
    };
    hooks.on_end = [observer, target](const grpc::Status& status, bool) {
      if (status.ok()) return;  // reconnects; the last profile stays
      gpr_log(GPR_INFO, "mesh: linkerd GetProfile '%s': %s", target.c_str(),
              status.error_message().c_str());
      observer->OnServiceConfigError(ToAbsl(status));
    };
    sub->Start(std::move(hooks));
    return sub;
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
  internal::PinGrpcCallbackQueue();
  auto shared = std::make_shared<Shared>();
  shared->options = options;
  shared->channel =
      grpc::CreateChannel(options.address, grpc::InsecureChannelCredentials());
  shared->stub = dst::Destination::NewStub(shared->channel);
  return std::shared_ptr<DiscoverySource>(
      std::make_shared<LinkerdDiscovery>(std::move(shared)));
}

}  // namespace mesh

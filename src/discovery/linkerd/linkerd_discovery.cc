// The Linkerd discovery source: Destination.Get and GetProfile streams per
// target, and OutboundPolicies.Watch where a policy controller is given,
// parsed and converted into the model at this edge (convert.h,
// convert_policy.h) and kept open with StreamWatch.
#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "linkerd/destination.grpc.pb.h"
#include "linkerd/outbound.grpc.pb.h"
#include "mesh/discovery.h"
#include "mesh/dns.h"
#include "src/base/mutex.h"
#include "src/base/timer_thread.h"
#include "src/discovery/common/builtin_source.h"
#include "src/discovery/common/stream_watch.h"
#include "src/discovery/linkerd/convert.h"
#include "src/discovery/linkerd/convert_policy.h"
#include "src/discovery/linkerd/policy_backends.h"
#include "src/discovery/linkerd/routing_combiner.h"
#include "src/model/address.h"
#include "src/tls/tls_credentials.h"
#include "src/transport/grpc_callback_queue.h"

namespace mesh {
namespace {

namespace dst = ::io::linkerd::proxy::destination;
namespace outbound = ::io::linkerd::proxy::outbound;
using internal::ExponentialBackoff;
using internal::StreamWatch;
using internal::linkerd::ForwardBackends;
using internal::linkerd::PolicyBackends;
using internal::linkerd::RoutingCombiner;

// What every subscription of one source shares; subscriptions keep it alive.
struct Shared {
  LinkerdDiscoveryOptions options;
  std::shared_ptr<grpc::Channel> channel;
  // The policy controller's (null: no policy is watched); `channel` when
  // both addresses are the same.
  std::shared_ptr<grpc::Channel> policy_channel;

  // The timer thread of the streams' reconnects: the one a Mesh lent
  // (BuiltinSource::LendTimers), else one of the source's own, made when a
  // stream first needs one.
  std::shared_ptr<internal::TimerThread> Timers() {
    internal::MutexLock lock(&mu);
    if (timers == nullptr) timers = std::make_shared<internal::TimerThread>();
    return timers;
  }
  void LendTimers(const std::shared_ptr<internal::TimerThread>& lent) {
    internal::MutexLock lock(&mu);
    if (timers == nullptr) timers = lent;
  }

  // The source for targets that are not mesh services (options'
  // dns_fallback_source, else a DNS source made on first need).
  absl::StatusOr<std::shared_ptr<DiscoverySource>> Fallback() {
    internal::MutexLock lock(&mu);
    if (fallback == nullptr) {
      if (options.dns_fallback_source != nullptr) {
        fallback = options.dns_fallback_source;
      } else {
        absl::StatusOr<std::shared_ptr<DiscoverySource>> dns =
            NewDnsDiscovery(DnsOptions{});
        if (!dns.ok()) return dns.status();
        fallback = *std::move(dns);
      }
    }
    return fallback;
  }

  // The backend policy each target's endpoints take from the outbound
  // policies routing to it.
  PolicyBackends policy_backends;
  // The endpoint of each `forward` backend the outbound policies name, by
  // its cluster name.
  ForwardBackends forward_backends;

  internal::Mutex mu;
  std::shared_ptr<DiscoverySource> fallback ABSL_GUARDED_BY(mu);
  std::shared_ptr<internal::TimerThread> timers ABSL_GUARDED_BY(mu);
};

// A target's subscription to the fallback source, once the destination
// service has refused the target.
struct FallbackSlot {
  internal::Mutex mu;
  std::unique_ptr<DiscoverySubscription> subscription ABSL_GUARDED_BY(mu);
};

// "Not a mesh service": the controller will never answer this target.
const std::vector<absl::StatusCode> kFinalCodes = {
    absl::StatusCode::kInvalidArgument, absl::StatusCode::kFailedPrecondition};

std::string MethodPath(const char* method) {
  return absl::StrCat("/", dst::Destination::service_full_name(), "/", method);
}

class Subscription final : public DiscoverySubscription {
 public:
  // `backend_policy`: the endpoint observer's registration for the backend
  // policies of outbound policies (Get only).
  Subscription(
      std::shared_ptr<Shared> shared, const std::string& target,
      const char* method, StreamWatch::Hooks hooks,
      std::shared_ptr<FallbackSlot> fallback = nullptr,
      std::unique_ptr<PolicyBackends::Registration> backend_policy = nullptr)
      : shared_(std::move(shared)),
        fallback_(std::move(fallback)),
        backend_policy_(std::move(backend_policy)) {
    target_ = target;
    dst::GetDestination request;
    request.set_path(target);
    request.set_context_token(shared_->options.context_token);
    hooks.method = MethodPath(method);
    hooks.request = request.SerializeAsString();
    hooks.name = absl::StrCat("linkerd ", method, " '", target, "'");
    hooks.final_codes = kFinalCodes;
    watch_ = std::make_unique<StreamWatch>(
        shared_->channel, shared_->Timers(),
        ExponentialBackoff(shared_->options.backoff_min,
                           shared_->options.backoff_max),
        std::move(hooks));
    watch_->Start();
  }
  ~Subscription() override {
    watch_.reset();  // no hook runs after this: the slot stays as it is
    if (fallback_ != nullptr) {
      std::unique_ptr<DiscoverySubscription> sub;
      {
        internal::MutexLock lock(&fallback_->mu);
        sub = std::move(fallback_->subscription);
      }
    }
  }

  State GetState() const override {
    // The watch's lock, then the slot's: one at a time, never nested.
    State linkerd = watch_->State();
    if (fallback_ == nullptr) return linkerd;
    State dns;
    {
      internal::MutexLock lock(&fallback_->mu);
      if (fallback_->subscription == nullptr) return linkerd;
      dns = fallback_->subscription->GetState();
    }
    // The DNS names, after a line saying why DNS serves the target.
    Resource r;
    r.type = "Linkerd Destination";
    r.name = target_;
    r.state = absl::StrCat("NOT_A_MESH_SERVICE (", linkerd.last_error,
                           "), resolved through DNS");
    dns.resources.insert(dns.resources.begin(), std::move(r));
    return dns;
  }

  void RefreshSoon() override {
    if (fallback_ == nullptr) return;
    internal::MutexLock lock(&fallback_->mu);
    if (fallback_->subscription != nullptr) {
      fallback_->subscription->RefreshSoon();
    }
  }

 private:
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<FallbackSlot> fallback_;                        // Get only
  std::unique_ptr<PolicyBackends::Registration> backend_policy_;  // Get only
  std::string target_;
  std::unique_ptr<StreamWatch> watch_;  // stopped before the rest
};

// A `forward` backend's one endpoint, from the outbound policies (no
// stream of its own).
class ForwardSubscription final : public DiscoverySubscription {
 public:
  ForwardSubscription(std::shared_ptr<Shared> shared,
                      std::unique_ptr<ForwardBackends::Registration> r)
      : shared_(std::move(shared)), registration_(std::move(r)) {}

 private:
  std::shared_ptr<Shared> shared_;  // holds the registry
  std::unique_ptr<ForwardBackends::Registration> registration_;
};

// "No policy for this target" (a controller older than 2.13 answers
// Unimplemented), or a request it refuses: the profile alone routes.
const std::vector<absl::StatusCode> kPolicyFinalCodes = {
    absl::StatusCode::kNotFound, absl::StatusCode::kUnimplemented,
    absl::StatusCode::kInvalidArgument, absl::StatusCode::kFailedPrecondition};

// A target's config: its profile's stream and, with a policy controller,
// its policy's, combined (routing_combiner.h).
class ConfigSubscription final : public DiscoverySubscription {
 public:
  ConfigSubscription(std::shared_ptr<Shared> shared,
                     std::shared_ptr<RoutingCombiner> combiner,
                     std::unique_ptr<DiscoverySubscription> profile,
                     std::unique_ptr<StreamWatch> policy, std::string target)
      : shared_(std::move(shared)),
        combiner_(std::move(combiner)),
        profile_(std::move(profile)),
        policy_(std::move(policy)),
        target_(std::move(target)) {}
  ~ConfigSubscription() override {
    policy_.reset();  // no hook of either runs after these
    profile_.reset();
    // What its policy set for its backends goes with it.
    shared_->policy_backends.ClearParent(target_);
  }

  State GetState() const override {
    State state = profile_->GetState();
    if (policy_ == nullptr) return state;
    State policy = policy_->State();
    RoutingCombiner::Report report = combiner_->GetReport();
    Resource p;
    p.type = "Linkerd OutboundPolicy";
    p.name = target_;
    p.state = report.policy_state;
    if (!report.policy_parent.empty()) {
      absl::StrAppend(&p.state, " (", report.policy_protocol, ", parent ",
                      report.policy_parent, ")");
    }
    p.error =
        !report.policy_error.empty() ? report.policy_error : policy.last_error;
    Resource r;
    r.type = "Linkerd routing";
    r.name = target_;
    r.state = report.routing.empty() ? "waiting" : report.routing;
    state.resources.push_back(std::move(p));
    state.resources.push_back(std::move(r));
    state.streams_started += policy.streams_started;
    state.messages += policy.messages;
    if (state.last_error.empty()) state.last_error = policy.last_error;
    return state;
  }

 private:
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<RoutingCombiner> combiner_;
  std::unique_ptr<DiscoverySubscription> profile_;
  std::unique_ptr<StreamWatch> policy_;
  std::string target_;
};

// The policy watch of `target`, feeding `combiner` (already told it is
// watched).
std::unique_ptr<StreamWatch> WatchPolicy(
    const std::shared_ptr<Shared>& shared, const std::string& target,
    std::shared_ptr<RoutingCombiner> combiner) {
  StreamWatch::Hooks hooks;
  outbound::TrafficSpec spec;
  spec.set_source_workload(shared->options.source_workload);
  spec.set_authority(target);
  hooks.request = spec.SerializeAsString();
  hooks.method = absl::StrCat(
      "/", outbound::OutboundPolicies::service_full_name(), "/Watch");
  hooks.name = absl::StrCat("linkerd OutboundPolicies.Watch '", target, "'");
  hooks.final_codes = kPolicyFinalCodes;
  // The owner holds them.
  PolicyBackends* backends = &shared->policy_backends;
  ForwardBackends* forwards = &shared->forward_backends;
  hooks.on_message = [combiner, target, backends, forwards](
                         const grpc::ByteBuffer& bytes, bool) -> absl::Status {
    outbound::OutboundPolicy policy;
    if (absl::Status parsed = internal::ParseReceived(bytes, &policy);
        !parsed.ok()) {
      combiner->OnPolicyError(parsed);
      return absl::Status(
          parsed.code(), absl::StrCat("rejected a policy: ", parsed.message()));
    }
    absl::StatusOr<internal::linkerd::PolicyConversion> converted =
        internal::linkerd::ConvertPolicy(policy, target);
    if (!converted.ok()) {
      // Well formed but unusable: the last good policy stays, and the
      // stream too (the controller's next update may mend it).
      gpr_log(GPR_ERROR,
              "mesh: linkerd policy '%s': %s; the last good "
              "policy stays",
              target.c_str(),
              std::string(converted.status().message()).c_str());
      combiner->OnPolicyError(converted.status());
      return absl::OkStatus();
    }
    for (const std::string& line : converted->dropped) {
      gpr_log(GPR_ERROR, "mesh: linkerd policy '%s': %s", target.c_str(),
              line.c_str());
    }
    backends->SetFromParent(target, converted->backend_policies);
    // Before the routes that name them are published.
    forwards->SetFromParent(target, converted->forward_backends);
    combiner->OnPolicy(*std::move(converted));
    return absl::OkStatus();
  };
  hooks.on_end = [combiner, target, backends, forwards](
                     const absl::Status& status, bool final) {
    if (final) {
      gpr_log(GPR_INFO,
              "mesh: linkerd: no outbound policy for '%s' (%s); its profile "
              "routes it",
              target.c_str(), status.ToString().c_str());
      backends->ClearParent(target);
      forwards->ClearParent(target);
      combiner->OnPolicyGone(status);
      return;
    }
    // Reconnects; the last good policy stays. StreamWatch has logged it.
    combiner->OnPolicyError(
        status.ok()
            ? absl::UnavailableError("policy stream ended; reconnecting")
            : status);
  };
  auto watch = std::make_unique<StreamWatch>(
      shared->policy_channel, shared->Timers(),
      ExponentialBackoff(shared->options.backoff_min,
                         shared->options.backoff_max),
      std::move(hooks));
  watch->Start();
  return watch;
}

class LinkerdDiscovery final : public internal::BuiltinSource {
 public:
  explicit LinkerdDiscovery(std::shared_ptr<Shared> shared)
      : shared_(std::move(shared)) {}

  std::string KindName() const override { return "linkerd"; }

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
    auto fallback = std::make_shared<FallbackSlot>();
    Shared* shared = shared_.get();  // the subscription holds it
    hooks.on_end = [observer, target, shared, fallback](
                       const absl::Status& status, bool final) {
      absl::Status s = status;
      if (final) {
        std::string why = absl::StrCat("'", target,
                                       "' is not a mesh service (destination "
                                       "controller said: ",
                                       status.message(), ")");
        if (shared->options.dns_fallback) {
          absl::StatusOr<std::shared_ptr<DiscoverySource>> source =
              shared->Fallback();
          if (source.ok()) {
            gpr_log(GPR_INFO, "mesh: linkerd: %s; resolving it through DNS",
                    why.c_str());
            // Subscribed outside the slot's lock; only stored under it.
            std::unique_ptr<DiscoverySubscription> sub =
                (*source)->Subscribe(target, observer);
            internal::MutexLock lock(&fallback->mu);
            fallback->subscription = std::move(sub);
            return;
          }
          absl::StrAppend(
              &why, "; the DNS fallback failed: ", source.status().message());
        }
        s = absl::Status(absl::StatusCode::kFailedPrecondition, why);
      } else if (status.ok()) {
        s = absl::UnavailableError("destination stream ended; reconnecting");
      }
      observer->OnDiscoveryError(s);  // StreamWatch has logged the end
    };
    // Registered before the stream starts: a policy's ejection applies from
    // the first endpoint on.
    std::unique_ptr<PolicyBackends::Registration> backend_policy =
        shared_->policy_backends.Register(target, observer);
    return std::make_unique<Subscription>(shared_, target, "Get",
                                          std::move(hooks), std::move(fallback),
                                          std::move(backend_policy));
  }

  // The clusters of the source: the `forward` backends of outbound
  // policies, each one endpoint (its routes come before it is subscribed).
  std::unique_ptr<DiscoverySubscription> SubscribeCluster(
      const std::string& cluster, EndpointObserver* observer) override {
    if (!absl::StartsWith(cluster, internal::linkerd::kForwardBackendPrefix)) {
      return nullptr;
    }
    return std::make_unique<ForwardSubscription>(
        shared_, shared_->forward_backends.Register(cluster, observer));
  }

  std::unique_ptr<DiscoverySubscription> SubscribeConfig(
      const std::string& target, ServiceConfigObserver* observer) override {
    auto combiner = std::make_shared<RoutingCombiner>(observer);
    // Before the profile's stream starts: a profile that came first must
    // wait for the policy too.
    if (shared_->policy_channel != nullptr) combiner->SetWatching();
    StreamWatch::Hooks hooks;
    hooks.on_message = [combiner, target](const grpc::ByteBuffer& bytes,
                                          bool) -> absl::Status {
      dst::DestinationProfile profile;
      if (absl::Status parsed = internal::ParseReceived(bytes, &profile);
          !parsed.ok()) {
        combiner->OnProfileError(parsed);
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
      combiner->OnProfile(std::move(converted.config));
      return absl::OkStatus();
    };
    hooks.on_end = [combiner](const absl::Status& status, bool final) {
      // Not a mesh service: no profile will come.
      if (final) return combiner->OnProfileGone(status);
      // Reconnects; the last profile stays. StreamWatch has logged the end.
      if (!status.ok()) combiner->OnProfileError(status);
    };
    auto profile = std::make_unique<Subscription>(shared_, target, "GetProfile",
                                                  std::move(hooks));
    std::unique_ptr<StreamWatch> policy =
        shared_->policy_channel != nullptr
            ? WatchPolicy(shared_, target, combiner)
            : nullptr;
    return std::make_unique<ConfigSubscription>(shared_, std::move(combiner),
                                                std::move(profile),
                                                std::move(policy), target);
  }

  void LendTimers(
      const std::shared_ptr<internal::TimerThread>& timers) override {
    shared_->LendTimers(timers);
  }

  // With policies, a call waits for its target's routes (the policy and
  // the profile, or one of them once the other's stream fails or the
  // controller has no policy): the policy may route it elsewhere than the
  // default route.
  bool RoutesRequired() const override {
    return shared_->policy_channel != nullptr;
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
  if (absl::Status s = internal::ValidateServerAddress(options.address);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("LinkerdDiscoveryOptions.address: ", s.message()));
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
  if (!options.policy_address.empty()) {
    if (absl::Status s =
            internal::ValidateServerAddress(options.policy_address);
        !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "LinkerdDiscoveryOptions.policy_address: ", s.message()));
    }
    shared->policy_channel =
        options.policy_address == options.address
            ? shared->channel
            : grpc::CreateCustomChannel(options.policy_address, credentials,
                                        args);
  }
  return std::shared_ptr<DiscoverySource>(
      std::make_shared<LinkerdDiscovery>(std::move(shared)));
}

}  // namespace mesh

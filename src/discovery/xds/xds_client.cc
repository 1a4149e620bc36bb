#include "src/discovery/xds/xds_client.h"

#include <grpc/support/log.h>

#include <array>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "envoy/config/core/v3/core.pb.h"
#include "envoy/service/discovery/v3/discovery.pb.h"
#include "src/base/destroy_later.h"
#include "src/base/utf8.h"
#include "src/discovery/common/stream_watch.h"

namespace mesh::internal::xds {
namespace {

using envoy::service::discovery::v3::DiscoveryRequest;
using envoy::service::discovery::v3::DiscoveryResponse;

// The most resource errors one NACK lists (its message stays bounded).
constexpr int kMaxNackErrors = 10;

}  // namespace

void FillNode(const XdsNode& node, envoy::config::core::v3::Node* out) {
  out->set_id(node.id);
  out->set_cluster(node.cluster);
  out->mutable_locality()->set_region(node.region);
  out->mutable_locality()->set_zone(node.zone);
  out->mutable_locality()->set_sub_zone(node.sub_zone);
  *out->mutable_metadata() = node.metadata;
  out->set_user_agent_name("mesh");
  out->set_user_agent_version("0.1");
  out->add_client_features("envoy.lb.does_not_support_overprovisioning");
  out->add_client_features("xds.config.resource-in-sotw");
}

class XdsClient::Subscription final : public DiscoverySubscription {
 public:
  Subscription(std::shared_ptr<XdsClient> client, const void* watch)
      : client_(std::move(client)), watch_(watch) {}
  ~Subscription() override { client_->Unwatch(watch_); }
  State GetState() const override { return client_->WatchState(watch_); }
  void RefreshSoon() override { client_->RefreshSoon(watch_); }

 private:
  const std::shared_ptr<XdsClient> client_;
  const void* const watch_;
};

XdsClient::XdsClient(XdsBootstrap bootstrap, const XdsOptions& options,
                     std::shared_ptr<grpc::ChannelCredentials> credentials,
                     DnsSourceFactory dns)
    : bootstrap_(std::move(bootstrap)),
      options_(options),
      stub_(MakeAdsChannel(
          bootstrap_.servers[0].server_uri, options_.max_message_bytes,
          credentials != nullptr ? std::move(credentials)
                                 : grpc::InsecureChannelCredentials())),
      backoff_(options.backoff_min, options.backoff_max),
      watchers_(XdsWatchers::Options{
          &serializer_, options.honour_round_robin, std::move(dns),
          // The answer is looked at on the timer thread, under mu_: never
          // on the DNS source's thread.
          [this](uint64_t id) {
            PostToTimers([id](XdsClient& self) { self.OnDnsAnswer(id); });
          }}) {}

XdsClient::~XdsClient() { Shutdown(); }

void XdsClient::Shutdown() {
  TimerScope::Id reconnect;
  XdsWatchers::Dns dns;
  {
    MutexLock lock(&mu_);
    shut_down_ = true;
    if (call_ != nullptr) call_->Cancel();
    reconnect = std::exchange(reconnect_timer_, 0);
    dns = watchers_.TakeDns();
  }
  // The subscriptions before their source (its thread is joined when it
  // goes); each waits for a call of its own that is running, which takes
  // none of our locks.
  dns.watches.clear();
  dns.source.reset();
  TimerScope* timers;
  {
    MutexLock lock(&timers_mu_);
    timers_closed_ = true;
    timers = timers_.get();
  }
  if (timers != nullptr) {
    if (reconnect != 0) timers->Cancel(reconnect);
    timers->Close();
  }
  {
    MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](XdsClient* c) ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return c->call_ == nullptr && c->callbacks_draining_ == 0;
        },
        this));
  }
  // Deliveries still running on another thread end before the client does.
  serializer_.WaitUntilIdle();
}

std::unique_ptr<DiscoverySubscription> XdsClient::WatchTarget(
    const std::string& target, ServiceConfigObserver* config,
    EndpointObserver* endpoints) {
  const void* key;
  {
    MutexLock lock(&mu_);
    key = watchers_.AddTarget(target, config, endpoints);
    UpdateSubscriptionsLocked();
    NotifyLocked();
  }
  serializer_.DrainQueue();
  return std::make_unique<Subscription>(shared_from_this(), key);
}

std::unique_ptr<DiscoverySubscription> XdsClient::WatchCluster(
    const std::string& cluster, EndpointObserver* endpoints) {
  const void* key;
  {
    MutexLock lock(&mu_);
    key = watchers_.AddCluster(cluster, endpoints);
    UpdateSubscriptionsLocked();
    NotifyLocked();
  }
  serializer_.DrainQueue();
  return std::make_unique<Subscription>(shared_from_this(), key);
}

void XdsClient::Unwatch(const void* watch) {
  std::shared_ptr<DeliveryGate> gate;
  {
    MutexLock lock(&mu_);
    gate = watchers_.Remove(watch);
    UpdateSubscriptionsLocked();
  }
  // Deliveries queued for it are dropped; one running on another thread is
  // waited for.
  if (gate != nullptr) gate->Close(serializer_);
}

void XdsClient::UpdateSubscriptionsLocked() {
  std::array<std::set<std::string>, kResourceTypes> want =
      watchers_.NamesWanted(cache_);
  for (ResourceType type : kAllResourceTypes) {
    // Names no longer wanted leave the cache; new ones are asked for.
    if (!cache_.SetNames(type, std::move(want[static_cast<int>(type)]))) {
      continue;
    }
    // An empty Listener or Cluster list could read as "all" to a server:
    // not sent (what it still sends is ignored).
    if (cache_.of(type).names.empty() &&
        (type == ResourceType::kListener || type == ResourceType::kCluster)) {
      continue;
    }
    SendRequestLocked(type, cache_.of(type).nonce, "");
  }
  const bool wanted = !watchers_.empty();
  if (call_ == nullptr && reconnect_timer_ == 0 && !shut_down_ && wanted) {
    StartCallLocked();
  } else if (call_ != nullptr && !wanted && !ending_on_purpose_) {
    // Nothing is watched: the stream ends (an empty name list could read
    // as "all" to an older server), and the next watch opens a new one.
    ending_on_purpose_ = true;
    call_->Cancel();
  }
}

void XdsClient::SendRequestLocked(ResourceType type, const std::string& nonce,
                                  const std::string& error) {
  if (call_ == nullptr) return;  // the next stream asks for everything
  const ResourceCache::TypeState& state = cache_.of(type);
  DiscoveryRequest request;
  if (!sent_node_) {
    sent_node_ = true;
    FillNode(bootstrap_.node, request.mutable_node());
  }
  request.set_version_info(state.version);
  for (const std::string& name : state.names) request.add_resource_names(name);
  request.set_type_url(TypeUrl(type));
  request.set_response_nonce(nonce);
  if (!error.empty()) {
    request.mutable_error_detail()->set_code(3);  // INVALID_ARGUMENT
    request.mutable_error_detail()->set_message(error);
  }
  // Names asked for and not yet had start their does-not-exist clock now,
  // once the stream has answered (gRFC A57: a server that cannot be reached
  // does not make resources vanish).
  if (stream_state_.connected) ArmTimersLocked(type);
  call_->Send(request.SerializeAsString());
}

void XdsClient::ArmTimersLocked(ResourceType type) {
  for (auto& [name, entry] : cache_.of(type).entries) {
    if (entry.resource != nullptr || entry.timer != 0 ||
        entry.status.state != ResourceStatus::State::kRequested) {
      continue;
    }
    const uint64_t number = entry.timer = ++timer_numbers_;
    std::weak_ptr<XdsClient> weak = weak_from_this();
    RunAfter(options_.resource_timeout, [weak, type, name = name, number] {
      auto self = weak.lock();
      if (self == nullptr) return;
      self->OnResourceTimeout(type, name, number);
      self->serializer_.DrainQueue();
      // Possibly the last owner: not destroyed on its own timer thread.
      DestroyLater([self = std::move(self)] {});
    });
  }
}

void XdsClient::StartCallLocked() {
  call_ = new AdsCall(&stub_, &mu_, this);
  call_->Prepare();
  sent_node_ = false;
  // Nonces belong to the stream that sent them.
  for (ResourceType t : kAllResourceTypes) cache_.of(t).nonce.clear();
  ++stream_state_.streams_started;
  // Every type with names is asked for again, with the versions accepted
  // before: the cache keeps serving meanwhile.
  for (ResourceType type : kAllResourceTypes) {
    if (!cache_.of(type).names.empty()) SendRequestLocked(type, "", "");
  }
  // Writes queued before StartCall go out once the call starts.
  call_->Begin();
}

void XdsClient::OnResourceTimeout(ResourceType type, const std::string& name,
                                  uint64_t number) {
  MutexLock lock(&mu_);
  CachedResource* e = cache_.Find(type, name);
  if (e == nullptr || e->timer != number) return;
  e->timer = 0;
  if (e->resource != nullptr ||
      e->status.state != ResourceStatus::State::kRequested) {
    return;
  }
  e->status.state = ResourceStatus::State::kDoesNotExist;
  gpr_log(GPR_INFO, "mesh: xds: %s '%s' does not exist (not sent within %s)",
          TypeName(type), QuotedText(name).c_str(),
          absl::FormatDuration(options_.resource_timeout).c_str());
  NotifyLocked();
}

void XdsClient::OnAdsResponse(AdsCall* call, const grpc::ByteBuffer& bytes) {
  MutexLock lock(&mu_);
  if (call != call_ || shut_down_) return;
  if (!stream_state_.connected) {
    stream_state_.connected = true;
    for (ResourceType t : kAllResourceTypes) ArmTimersLocked(t);
  }
  ++stream_state_.messages;
  DiscoveryResponse response;
  if (absl::Status s = ParseReceived(bytes, &response); !s.ok()) {
    gpr_log(GPR_ERROR, "mesh: xds: %s; ending the stream",
            std::string(s.message()).c_str());
    call->rejection = std::string(s.message());
    call->Cancel();
    return;
  }
  std::optional<ResourceType> type;
  for (ResourceType t : kAllResourceTypes) {
    if (response.type_url() == TypeUrl(t)) type = t;
  }
  if (!type) {
    // A server may send these as fast as it likes: one line a period.
    uint64_t held_back = 0;
    if (log_limiter_.Admit("unknown type", &held_back)) {
      gpr_log(GPR_ERROR,
              "mesh: xds: ignoring a response of type '%s' (never asked "
              "for)%s",
              QuotedText(response.type_url()).c_str(),
              LogLimiter::HeldBack(held_back).c_str());
    }
    return;
  }
  cache_.of(*type).nonce = response.nonce();
  ResourceCache::ApplyOptions apply;
  apply.providers = &bootstrap_.certificate_providers;
  apply.ignore_resource_deletion =
      bootstrap_.servers[0].ignore_resource_deletion;
  apply.log = &log_limiter_;
  std::vector<std::string> errors = cache_.Apply(
      *type, response,
      [this](const std::string& route_config_name)
          ABSL_NO_THREAD_SAFETY_ANALYSIS {  // called under mu_, here
            return watchers_.AuthoritiesReaching(cache_, route_config_name);
          },
      apply);
  if (errors.empty()) {
    cache_.of(*type).version = response.version_info();
    SendRequestLocked(*type, response.nonce(), "");
  } else {
    std::string detail =
        NackDetail(*type, response.version_info(), response.resources_size(),
                   std::move(errors));
    stream_state_.last_error = detail;
    // Valid resources of the response are applied; the version stays the
    // last accepted one.
    SendRequestLocked(*type, response.nonce(), detail);
  }
  UpdateSubscriptionsLocked();
  NotifyLocked();
}

std::string XdsClient::NackDetail(ResourceType type, const std::string& version,
                                  int resources,
                                  std::vector<std::string> errors) {
  std::string detail =
      absl::StrCat("mesh rejected ", errors.size(), " of ", resources,
                   " resources (version '", QuotedText(version), "'): ");
  if (errors.size() > kMaxNackErrors) {
    size_t more = errors.size() - kMaxNackErrors;
    errors.resize(kMaxNackErrors);
    errors.push_back(absl::StrCat("and ", more, " more"));
  }
  absl::StrAppend(&detail, absl::StrJoin(errors, "; "));
  // Every NACK goes to the server; the log gets one line a period per type
  // (a server that resends a bad response would fill it).
  uint64_t held_back = 0;
  if (log_limiter_.Admit(absl::StrCat("NACK ", TypeName(type)), &held_back)) {
    gpr_log(GPR_ERROR, "mesh: xds: NACK %s: %s%s", TypeName(type),
            detail.c_str(), LogLimiter::HeldBack(held_back).c_str());
  }
  return detail;
}

void XdsClient::OnAdsDone(AdsCall* call, const grpc::Status& status,
                          bool got_responses) {
  {
    MutexLock lock(&mu_);
    EndCallLocked(call, status, got_responses);
    ++callbacks_draining_;
  }
  // The stream's end told to the watches. The call is gone: what keeps the
  // client alive meanwhile is Shutdown waiting for callbacks_draining_.
  serializer_.DrainQueue();
  MutexLock lock(&mu_);
  --callbacks_draining_;
}

void XdsClient::EndCallLocked(AdsCall* call, const grpc::Status& status,
                              bool got_responses) {
  if (call != call_) return;
  call_ = nullptr;
  stream_state_.connected = false;
  // Pending does-not-exist clocks stop with the stream; the next one
  // starts them again. Nothing cached is dropped.
  cache_.ForgetTimers();
  if (shut_down_) return;
  // A stream that delivered was healthy, unless this client ended it for a
  // message it could not parse: a server that sends one good message and
  // then a bad one would otherwise be asked again every backoff_min.
  const bool rejected = !call->rejection.empty();
  if (got_responses && !rejected) backoff_.Reset();
  const bool wanted = !watchers_.empty();
  if (std::exchange(ending_on_purpose_, false)) {
    // Ended because nothing was watched; a watch that came meanwhile gets a
    // new stream at once.
    if (wanted) StartCallLocked();
    return;
  }
  if (!wanted) return;
  absl::Duration wait = backoff_.Next(gen_);
  if (rejected) {
    stream_state_.last_error = call->rejection;
  } else if (status.ok()) {
    stream_state_.last_error = "stream ended by the server";
  } else {
    stream_state_.last_error =
        absl::StrCat(absl::StatusCodeToString(
                         static_cast<absl::StatusCode>(status.error_code())),
                     ": ", QuotedText(status.error_message()));
  }
  gpr_log(
      GPR_ERROR, "mesh: xds: stream to %s ended (%s); reconnecting in %s",
      bootstrap_.servers[0].server_uri.c_str(),
      stream_state_.last_error.c_str(),
      absl::FormatDuration(absl::Trunc(wait, absl::Milliseconds(1))).c_str());
  ReportStreamEndLocked(status);
  std::weak_ptr<XdsClient> weak = weak_from_this();
  reconnect_timer_ = RunAfter(wait, [weak] {
    auto self = weak.lock();
    if (self == nullptr) return;
    {
      MutexLock lock(&self->mu_);
      self->reconnect_timer_ = 0;
      if (!self->shut_down_ && self->call_ == nullptr) self->StartCallLocked();
    }
    DestroyLater([self = std::move(self)] {});
  });
}

void XdsClient::ReportStreamEndLocked(const grpc::Status& status) {
  // A server that does not implement ADS will not start to: calls fail at
  // once (FAILED_PRECONDITION is final to the destination) instead of
  // waiting out their fail-fast time. The client still reconnects, and a
  // server that comes to answer serves.
  const bool final = status.error_code() == grpc::StatusCode::UNIMPLEMENTED;
  const std::string why =
      absl::StrCat("xDS stream to ", bootstrap_.servers[0].server_uri,
                   " ended: ", stream_state_.last_error,
                   final ? " (the server does not serve ADS)" : "");
  const absl::Status error =
      final ? absl::FailedPreconditionError(why) : absl::UnavailableError(why);
  // Only watches that have nothing yet: the others keep serving what they
  // have, and their calls have no reason to hear of it.
  watchers_.ReportStreamEnd(error, final);
}

void XdsClient::NotifyLocked() {
  watchers_.NotifyTargets(cache_);
  // The targets' routes may name new clusters to ask for.
  UpdateSubscriptionsLocked();
  watchers_.NotifyClusters(cache_);
}

void XdsClient::OnDnsAnswer(uint64_t id) {
  MutexLock lock(&mu_);
  if (shut_down_) return;
  watchers_.OnDnsAnswer(cache_, id);
}

std::vector<ResourceSnapshot> XdsClient::Snapshot(bool with_contents) const {
  MutexLock lock(&mu_);
  return cache_.Snapshot(with_contents);
}

bool XdsClient::shut_down() const {
  MutexLock lock(&mu_);
  return shut_down_;
}

DiscoverySubscription::State XdsClient::WatchState(const void* watch) const {
  MutexLock lock(&mu_);
  DiscoverySubscription::State state = stream_state_;
  watchers_.AddResourcesOf(cache_, watch, &state);
  return state;
}

void XdsClient::RefreshSoon(const void* watch) {
  // On the call path: mu_ is taken on the timer thread, never here.
  PostToTimers([watch](XdsClient& self) {
    MutexLock lock(&self.mu_);
    self.watchers_.RefreshSoon(watch);
  });
}

void XdsClient::PostToTimers(absl::AnyInvocable<void(XdsClient&)> work) {
  absl::AnyInvocable<void()> task = [weak = weak_from_this(),
                                     work = std::move(work)]() mutable {
    auto self = weak.lock();
    if (self == nullptr) return;
    work(*self);
    self->serializer_.DrainQueue();
    // Possibly the last owner: not destroyed on its own timer thread.
    DestroyLater([self = std::move(self)] {});
  };
  RunAfter(absl::ZeroDuration(), std::move(task));  // dropped after Shutdown
}

TimerScope::Id XdsClient::RunAfter(absl::Duration delay,
                                   absl::AnyInvocable<void()> task) {
  MutexLock lock(&timers_mu_);
  if (timers_ == nullptr) {
    if (timers_closed_) return 0;
    timers_ = std::make_unique<TimerScope>(std::make_shared<TimerThread>());
  }
  return timers_->RunAfter(delay, std::move(task));
}

void XdsClient::LendTimers(const std::shared_ptr<TimerThread>& timers) {
  MutexLock lock(&timers_mu_);
  if (timers_ == nullptr && !timers_closed_) {
    timers_ = std::make_unique<TimerScope>(timers);
  }
}

DiscoverySubscription::State XdsClient::StreamState() const {
  MutexLock lock(&mu_);
  return stream_state_;
}

}  // namespace mesh::internal::xds

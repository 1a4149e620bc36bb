#include "src/discovery/xds/xds_client.h"

#include <grpc/support/log.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "envoy/config/cluster/v3/cluster.pb.h"
#include "envoy/config/core/v3/core.pb.h"
#include "envoy/config/endpoint/v3/endpoint.pb.h"
#include "envoy/config/listener/v3/listener.pb.h"
#include "envoy/config/route/v3/route.pb.h"
#include "envoy/service/discovery/v3/discovery.pb.h"
#include "google/protobuf/arena.h"
#include "src/base/destroy_later.h"
#include "src/base/utf8.h"
#include "src/discovery/common/queued_observers.h"
#include "src/discovery/common/stream_watch.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/discovery/xds/xds_dns_cluster.h"
#include "src/discovery/xds/xds_service_config.h"
#include "src/transport/grpc_callback_queue.h"

namespace mesh::internal::xds {
namespace {

using envoy::service::discovery::v3::DiscoveryRequest;
using envoy::service::discovery::v3::DiscoveryResponse;

constexpr char kMethod[] =
    "/envoy.service.discovery.v3.AggregatedDiscoveryService/"
    "StreamAggregatedResources";
constexpr char kResourceWrapper[] =
    "type.googleapis.com/envoy.service.discovery.v3.Resource";
constexpr ResourceType kTypes[] = {
    ResourceType::kListener, ResourceType::kRouteConfig, ResourceType::kCluster,
    ResourceType::kEndpoints};
// Ring-hash rings get at most this many entries, as gRPC's do.
constexpr uint64_t kMaxRingSize = 4096;
// The most resource errors one NACK lists (its message stays bounded).
constexpr int kMaxNackErrors = 10;

int Index(ResourceType type) { return static_cast<int>(type); }

std::shared_ptr<grpc::Channel> MakeChannel(
    const XdsBootstrap& bootstrap, const XdsOptions& options,
    std::shared_ptr<grpc::ChannelCredentials> credentials) {
  // The ADS stream is a callback-API call: its queue stays (see there).
  PinGrpcCallbackQueue();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(std::max(1024, options.max_message_bytes));
  return grpc::CreateCustomChannel(bootstrap.servers[0].server_uri, credentials,
                                   args);
}

// The name a resource goes by and its converted form, or the problem.
struct Decoded {
  std::string name;
  absl::StatusOr<AnyResource> resource = absl::UnknownError("");
  std::string bytes;       // the serialized resource, to see it unchanged
  bool not_asked = false;  // its name was not asked for: not converted
};

// A name the client asks for (only those are converted: converting costs).
using Wanted = absl::FunctionRef<bool(const std::string& name)>;

template <typename Wire, typename Convert>
Decoded DecodeAs(const google::protobuf::Any& any, Convert convert,
                 Wanted wanted) {
  Decoded d;
  // On an arena: a ClusterLoadAssignment of 10,000 endpoints is some 60,000
  // small messages and strings, freed here at once instead of one by one.
  google::protobuf::Arena arena;
  Wire& wire = *google::protobuf::Arena::CreateMessage<Wire>(&arena);
  if (!any.UnpackTo(&wire)) {
    d.resource = absl::InvalidArgumentError(
        absl::StrCat("cannot parse a ", Wire::descriptor()->full_name()));
    return d;
  }
  if constexpr (std::is_same_v<
                    Wire, envoy::config::endpoint::v3::ClusterLoadAssignment>) {
    d.name = wire.cluster_name();
  } else {
    d.name = wire.name();
  }
  if (!wanted(d.name)) {
    d.not_asked = true;
    return d;
  }
  d.bytes = any.value();
  absl::StatusOr<typename decltype(convert(wire))::value_type> converted =
      convert(wire);
  if (converted.ok()) {
    d.resource = AnyResource(*std::move(converted));
  } else {
    d.resource = converted.status();
  }
  return d;
}

// The authorities (targets) whose Listener names a RouteConfiguration.
using Reaching = absl::FunctionRef<std::vector<std::string>(
    const std::string& route_config_name)>;

// RDS: split, not parsed whole; only the virtual hosts a watched target
// reaches are converted now, the others when first reached (xds_convert.h).
// `value` (the resource's bytes, megabytes for a large table) is taken,
// not copied: the slices and Decoded::bytes share it.
Decoded DecodeRouteConfiguration(std::string* value, Wanted wanted,
                                 Reaching reaching) {
  Decoded d;
  d.bytes = std::move(*value);
  absl::StatusOr<RouteConfigurationSlices> slices =
      SliceRouteConfiguration(d.bytes);
  if (!slices.ok()) {
    d.resource = slices.status();
    return d;
  }
  d.name = slices->name;
  if (!wanted(d.name)) {
    d.not_asked = true;
    return d;
  }
  const std::vector<std::string> authorities = reaching(d.name);
  // The slices view d.bytes; they are used up before it moves.
  absl::StatusOr<RouteConfigResource> converted = ConvertRouteConfiguration(
      *slices, [&authorities](const RouteConfigResource& heads) {
        std::vector<size_t> chosen;
        for (const std::string& authority : authorities) {
          const VirtualHostResource* v = SelectVirtualHost(heads, authority);
          if (v != nullptr) chosen.push_back(v - heads.virtual_hosts.data());
        }
        return chosen;
      });
  if (converted.ok()) {
    d.resource = AnyResource(*std::move(converted));
  } else {
    d.resource = converted.status();
  }
  return d;
}

Decoded Decode(ResourceType type, google::protobuf::Any& any, Wanted wanted,
               const CertificateProviders& providers, Reaching reaching) {
  switch (type) {
    case ResourceType::kListener:
      return DecodeAs<envoy::config::listener::v3::Listener>(
          any, [](const auto& w) { return ConvertListener(w); }, wanted);
    case ResourceType::kRouteConfig:
      return DecodeRouteConfiguration(any.mutable_value(), wanted, reaching);
    case ResourceType::kCluster:
      return DecodeAs<envoy::config::cluster::v3::Cluster>(
          any,
          [&providers](const auto& w) { return ConvertCluster(w, providers); },
          wanted);
    case ResourceType::kEndpoints:
      return DecodeAs<envoy::config::endpoint::v3::ClusterLoadAssignment>(
          any, [](const auto& w) { return ConvertClusterLoadAssignment(w); },
          wanted);
  }
  return Decoded{};
}

}  // namespace

const char* TypeUrl(ResourceType type) {
  switch (type) {
    case ResourceType::kListener:
      return "type.googleapis.com/envoy.config.listener.v3.Listener";
    case ResourceType::kRouteConfig:
      return "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
    case ResourceType::kCluster:
      return "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    case ResourceType::kEndpoints:
      return "type.googleapis.com/"
             "envoy.config.endpoint.v3.ClusterLoadAssignment";
  }
  return "";
}

const char* TypeName(ResourceType type) {
  switch (type) {
    case ResourceType::kListener:
      return "Listener";
    case ResourceType::kRouteConfig:
      return "RouteConfiguration";
    case ResourceType::kCluster:
      return "Cluster";
    case ResourceType::kEndpoints:
      return "ClusterLoadAssignment";
  }
  return "";
}

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

const char* StateName(ResourceStatus::State state) {
  switch (state) {
    case ResourceStatus::State::kRequested:
      return "REQUESTED";
    case ResourceStatus::State::kDoesNotExist:
      return "DOES_NOT_EXIST";
    case ResourceStatus::State::kAcked:
      return "ACKED";
    case ResourceStatus::State::kNacked:
      return "NACKED";
  }
  return "";
}

BackendPolicy::Ejection EjectionOf(const OutlierDetection& od) {
  BackendPolicy::Ejection e;
  e.consecutive_failures =
      od.enforcing_consecutive_5xx == 0 ? 0 : od.consecutive_5xx;
  e.base = od.base_ejection_time;
  // Envoy: max_ejection_time, or base_ejection_time if that is larger.
  e.max = std::max(od.base_ejection_time, od.max_ejection_time);
  e.max_share = od.max_ejection_percent / 100.0;
  e.interval.interval = od.interval;
  if (od.success_rate) {
    IntervalEjection::SuccessRate& r = e.interval.success_rate.emplace();
    r.stdev_factor = od.success_rate->stdev_factor;
    r.enforcement_percentage = od.success_rate->enforcement_percentage;
    r.minimum_hosts = od.success_rate->minimum_hosts;
    r.request_volume = od.success_rate->request_volume;
  }
  if (od.failure_percentage) {
    IntervalEjection::FailurePercentage& r =
        e.interval.failure_percentage.emplace();
    r.threshold = od.failure_percentage->threshold;
    r.enforcement_percentage = od.failure_percentage->enforcement_percentage;
    r.minimum_hosts = od.failure_percentage->minimum_hosts;
    r.request_volume = od.failure_percentage->request_volume;
  }
  return e;
}

namespace {

// `e` of locality `l` as served: labelled with the locality's names.
void AddServed(const LocalityEndpoints& l, const Endpoint& e,
               std::vector<Endpoint>* out) {
  Endpoint& served = out->emplace_back(e);
  if (!l.region.empty()) served.labels.emplace("region", l.region);
  if (!l.zone.empty()) served.labels.emplace("zone", l.zone);
  if (!l.sub_zone.empty()) served.labels.emplace("sub_zone", l.sub_zone);
}

}  // namespace

std::vector<Endpoint> EndpointsToServe(const EndpointsResource& resource) {
  // Localities are sorted by priority: the first priority with endpoints.
  size_t begin = 0;
  while (begin < resource.localities.size()) {
    size_t end = begin;
    bool any = false;
    while (end < resource.localities.size() &&
           resource.localities[end].priority ==
               resource.localities[begin].priority) {
      any = any || !resource.localities[end].endpoints.empty();
      ++end;
    }
    if (!any) {
      begin = end;
      continue;
    }
    std::vector<Endpoint> out;
    size_t n = 0;
    for (size_t i = begin; i < end; ++i) {
      n += resource.localities[i].endpoints.size();
    }
    out.reserve(n);
    if (end - begin == 1) {
      const LocalityEndpoints& l = resource.localities[begin];
      for (const Endpoint& e : l.endpoints) AddServed(l, e, &out);
      return out;  // its own weights
    }
    // Each endpoint's share: its locality's weight split among the
    // locality's endpoints by theirs. In long double (weight × weight does
    // not fit 64 bits), then scaled together so that the largest is 2^31 at
    // most and the ratios stay.
    std::vector<long double> shares;
    long double largest = 0;
    for (size_t i = begin; i < end; ++i) {
      const LocalityEndpoints& l = resource.localities[i];
      long double sum = 0;
      for (const Endpoint& e : l.endpoints) sum += e.weight;
      for (const Endpoint& e : l.endpoints) {
        AddServed(l, e, &out);
        shares.push_back(static_cast<long double>(l.weight) * e.weight /
                         std::max<long double>(sum, 1));
        largest = std::max(largest, shares.back());
      }
    }
    const long double scale =
        2147483648.0L / std::max<long double>(largest, 1e-300L);
    for (size_t k = 0; k < out.size(); ++k) {
      out[k].weight = static_cast<uint32_t>(std::clamp<long double>(
          std::round(shares[k] * scale), 1, 2147483648.0L));
    }
    return out;
  }
  return {};
}

struct XdsClient::Entry {
  ResourceStatus status;
  std::shared_ptr<const AnyResource> resource;  // the last good one
  // Its serialized form: tells an unchanged resource apart, and is what
  // CSDS shows (Snapshot shares it).
  std::shared_ptr<const std::string> bytes;
  // The does-not-exist clock's number (0: none). A clock is never
  // cancelled under mu_ (TimerThread::Cancel waits for a running task, which
  // may be waiting for mu_): it is forgotten, and a task whose number is no
  // longer its entry's does nothing.
  uint64_t timer = 0;
};

struct XdsClient::TypeState {
  std::string version;  // last accepted
  std::string nonce;    // of the last response
  std::set<std::string> names;
  std::map<std::string, Entry> entries;
};

struct XdsClient::TargetWatch {
  std::string target;
  // The subscriber's observers (null: not asked for), reached after mu_ is
  // released, through `gate`.
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
  // What the watch was last told it waits for (WaitingForLocked).
  std::string waiting_for;
};

// One host of a DNS cluster, followed by the client's DNS source.
struct XdsClient::DnsWatch {
  // Unique in the client: what a delivery scheduled by `answer` looks for
  // (it finds nothing once the watch is gone).
  uint64_t id = 0;
  DnsHost host;
  std::unique_ptr<DnsHostAnswer> answer;
  // Declared last, destroyed first: `answer` is not called after.
  std::unique_ptr<DiscoverySubscription> subscription;
};

struct XdsClient::ClusterWatch {
  std::string cluster;
  // The subscriber's observer, reached after mu_ is released, through
  // `gate`.
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

// One ADS stream. Deletes itself when gRPC is done with it.
class XdsClient::Call final
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit Call(XdsClient* client) : client_(client) {}

  // Binds the reactor to a new call; requests may be queued from here on.
  void Prepare() {
    client_->stub_.PrepareBidiStreamingCall(&context, kMethod,
                                            grpc::StubOptions(), this);
  }
  void Begin() {
    // Held until the read side has ended: writes come from other threads
    // (new watches, timers), and gRPC must not finish the call under them.
    AddHold();
    StartRead(&message_);
    StartCall();
  }

  // Queues one request; they go out one at a time, in order.
  // REQUIRES: client_->mu_ held (asserted: the analysis cannot see that the
  // caller's mu_ is this client's).
  void Send(std::string bytes) {
    client_->mu_.AssertHeld();
    if (closed_) return;  // the stream is ending: the next one asks again
    queue_.push_back(std::move(bytes));
    if (!writing_) WriteNext();
  }

  void OnWriteDone(bool ok) override {
    MutexLock lock(&client_->mu_);
    writing_ = false;
    if (ok) WriteNext();
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The stream ends: no write starts any more, then the hold goes and
      // OnDone follows.
      {
        MutexLock lock(&client_->mu_);
        closed_ = true;
      }
      RemoveHold();
      return;
    }
    got_responses_ = true;
    XdsClient* const client = client_;
    client->OnResponse(this, message_);
    message_.Clear();
    // The next response is read (and ACKed) while this one's deliveries
    // run: a slow observer holds up neither the stream nor other clusters.
    // The hold keeps the call, and so the client (Shutdown waits for the
    // call's end), alive until they have run.
    AddHold();
    StartRead(&message_);
    client->serializer_.DrainQueue();
    RemoveHold();  // may end the call: `this` is not used after
  }

  void OnDone(const grpc::Status& status) override {
    client_->OnCallDone(this, status, got_responses_);
    delete this;
  }

  grpc::ClientContext context;
  // Under client_->mu_: why this client cancelled the stream (a message it
  // could not parse); empty if it did not.
  std::string rejection;

 private:
  // REQUIRES: client_->mu_ held.
  void WriteNext() {
    client_->mu_.AssertHeld();
    if (queue_.empty() || closed_) return;
    grpc::Slice slice(queue_.front());
    queue_.erase(queue_.begin());
    writing_buffer_ = grpc::ByteBuffer(&slice, 1);
    writing_ = true;
    StartWrite(&writing_buffer_);
  }

  XdsClient* const client_;
  grpc::ByteBuffer message_;
  std::vector<std::string> queue_;
  grpc::ByteBuffer writing_buffer_;
  bool writing_ = false;
  bool closed_ = false;  // under client_->mu_
  bool got_responses_ = false;
};

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
      dns_factory_(std::move(dns)),
      stub_(MakeChannel(bootstrap_, options_,
                        credentials != nullptr
                            ? std::move(credentials)
                            : grpc::InsecureChannelCredentials())),
      backoff_(options.backoff_min, options.backoff_max) {
  for (auto& t : types_) t = std::make_unique<TypeState>();
}

XdsClient::~XdsClient() { Shutdown(); }

void XdsClient::Shutdown() {
  TimerScope::Id reconnect;
  std::vector<DnsWatch> dns_watches;
  std::shared_ptr<DiscoverySource> dns;
  {
    MutexLock lock(&mu_);
    shut_down_ = true;
    if (call_ != nullptr) call_->context.TryCancel();
    reconnect = std::exchange(reconnect_timer_, 0);
    for (auto& c : clusters_) {
      for (DnsWatch& d : c->dns) dns_watches.push_back(std::move(d));
      c->dns.clear();
    }
    dns = std::move(dns_);
  }
  // The subscriptions before their source (its thread is joined when it
  // goes); each waits for a call of its own that is running, which takes
  // none of our locks.
  dns_watches.clear();
  dns.reset();
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
  auto watch = std::make_unique<TargetWatch>();
  watch->target = target;
  if (config != nullptr) {
    watch->config =
        std::make_unique<QueuedConfigs>(config, &serializer_, watch->gate);
  }
  if (endpoints != nullptr) {
    watch->endpoints =
        std::make_unique<QueuedEndpoints>(endpoints, &serializer_, watch->gate);
  }
  const void* key = watch.get();
  {
    MutexLock lock(&mu_);
    targets_.push_back(std::move(watch));
    UpdateSubscriptionsLocked();
    NotifyLocked();
  }
  serializer_.DrainQueue();
  return std::make_unique<Subscription>(shared_from_this(), key);
}

std::unique_ptr<DiscoverySubscription> XdsClient::WatchCluster(
    const std::string& cluster, EndpointObserver* endpoints) {
  auto watch = std::make_unique<ClusterWatch>();
  watch->cluster = cluster;
  watch->endpoints =
      std::make_unique<QueuedEndpoints>(endpoints, &serializer_, watch->gate);
  const void* key = watch.get();
  {
    MutexLock lock(&mu_);
    clusters_.push_back(std::move(watch));
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
    UpdateSubscriptionsLocked();
  }
  // Deliveries queued for it are dropped; one running on another thread is
  // waited for.
  if (gate != nullptr) gate->Close(serializer_);
}

XdsClient::Entry* XdsClient::Find(ResourceType type, const std::string& name) {
  auto& entries = types_[Index(type)]->entries;
  auto found = entries.find(name);
  return found == entries.end() ? nullptr : &found->second;
}

void XdsClient::UpdateSubscriptionsLocked() {
  std::array<std::set<std::string>, kResourceTypes> want;
  for (const auto& t : targets_) {
    want[Index(ResourceType::kListener)].insert(t->target);
    Entry* l = Find(ResourceType::kListener, t->target);
    if (l != nullptr && l->resource != nullptr) {
      const auto& listener = std::get<ListenerResource>(*l->resource);
      if (!listener.route_config_name.empty()) {
        want[Index(ResourceType::kRouteConfig)].insert(
            listener.route_config_name);
      }
    }
    for (const std::string& c : t->clusters) {
      want[Index(ResourceType::kCluster)].insert(c);
    }
  }
  for (const auto& c : clusters_) {
    want[Index(ResourceType::kCluster)].insert(c->cluster);
  }
  for (const std::string& c : want[Index(ResourceType::kCluster)]) {
    Entry* e = Find(ResourceType::kCluster, c);
    if (e == nullptr || e->resource == nullptr) continue;
    // DNS clusters ask DNS, not EDS.
    const auto& cluster = std::get<ClusterResource>(*e->resource);
    if (cluster.discovery == ClusterResource::Discovery::kEds) {
      want[Index(ResourceType::kEndpoints)].insert(cluster.eds_service_name);
    }
  }
  for (ResourceType type : kTypes) {
    TypeState& state = *types_[Index(type)];
    std::set<std::string>& names = want[Index(type)];
    if (names == state.names) continue;
    // Names no longer wanted leave the cache; new ones are asked for.
    for (auto it = state.entries.begin(); it != state.entries.end();) {
      if (names.count(it->first) == 0) {
        it = state.entries.erase(it);
      } else {
        ++it;
      }
    }
    for (const std::string& name : names) state.entries.try_emplace(name);
    state.names = std::move(names);
    // An empty Listener or Cluster list could read as "all" to a server:
    // not sent (what it still sends is ignored).
    if (state.names.empty() &&
        (type == ResourceType::kListener || type == ResourceType::kCluster)) {
      continue;
    }
    SendRequestLocked(type, state.nonce, "");
  }
  const bool wanted = !targets_.empty() || !clusters_.empty();
  if (call_ == nullptr && reconnect_timer_ == 0 && !shut_down_ && wanted) {
    StartCallLocked();
  } else if (call_ != nullptr && !wanted && !ending_on_purpose_) {
    // Nothing is watched: the stream ends (an empty name list could read
    // as "all" to an older server), and the next watch opens a new one.
    ending_on_purpose_ = true;
    call_->context.TryCancel();
  }
}

void XdsClient::SendRequestLocked(ResourceType type, const std::string& nonce,
                                  const std::string& error) {
  if (call_ == nullptr) return;  // the next stream asks for everything
  TypeState& state = *types_[Index(type)];
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
  for (auto& [name, entry] : types_[Index(type)]->entries) {
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
  call_ = new Call(this);
  call_->Prepare();
  sent_node_ = false;
  // Nonces belong to the stream that sent them.
  for (auto& t : types_) t->nonce.clear();
  ++stream_state_.streams_started;
  // Every type with names is asked for again, with the versions accepted
  // before: the cache keeps serving meanwhile.
  for (ResourceType type : kTypes) {
    if (!types_[Index(type)]->names.empty()) SendRequestLocked(type, "", "");
  }
  // Writes queued before StartCall go out once the call starts.
  call_->Begin();
}

void XdsClient::OnResourceTimeout(ResourceType type, const std::string& name,
                                  uint64_t number) {
  MutexLock lock(&mu_);
  Entry* e = Find(type, name);
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

void XdsClient::OnResponse(Call* call, const grpc::ByteBuffer& bytes) {
  MutexLock lock(&mu_);
  if (call != call_ || shut_down_) return;
  if (!stream_state_.connected) {
    stream_state_.connected = true;
    for (ResourceType t : kTypes) ArmTimersLocked(t);
  }
  ++stream_state_.messages;
  DiscoveryResponse response;
  if (absl::Status s = ParseReceived(bytes, &response); !s.ok()) {
    gpr_log(GPR_ERROR, "mesh: xds: %s; ending the stream",
            std::string(s.message()).c_str());
    call->rejection = std::string(s.message());
    call->context.TryCancel();
    return;
  }
  std::optional<ResourceType> type;
  for (ResourceType t : kTypes) {
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
  TypeState& state = *types_[Index(*type)];
  state.nonce = response.nonce();
  std::vector<std::string> errors;
  std::set<std::string> seen;
  const absl::Time now = absl::Now();
  // What each resource's status (CSDS, Describe) and the NACK say of the
  // version: at most 256 bytes of it (a server's 1 MiB version, copied
  // into each of 10,000 resources, would cost 10 GB). The ACK echoes it
  // whole.
  const std::string version_quote = QuotedText(response.version_info());
  for (int i = 0; i < response.resources_size(); ++i) {
    google::protobuf::Any* any = response.mutable_resources(i);
    envoy::service::discovery::v3::Resource wrapper;
    if (any->type_url() == kResourceWrapper) {
      if (!any->UnpackTo(&wrapper)) {
        errors.push_back(absl::StrCat("resource index ", i,
                                      ": cannot parse a Resource wrapper"));
        continue;
      }
      any = wrapper.mutable_resource();
    }
    if (any->type_url() != response.type_url()) {
      errors.push_back(absl::StrCat(
          "resource index ", i, ": type '", QuotedText(any->type_url()),
          "' in a response of '", QuotedText(response.type_url()), "'"));
      continue;
    }
    Decoded d = Decode(
        *type, *any,
        [&state](const std::string& name) {
          return state.entries.count(name) != 0;
        },
        bootstrap_.certificate_providers,
        [this](const std::string& route_config_name)
            ABSL_NO_THREAD_SAFETY_ANALYSIS {  // called under mu_, here
              return AuthoritiesReachingLocked(route_config_name);
            });
    if (d.not_asked) continue;  // ignored
    if (d.name.empty() && !d.resource.ok()) {
      errors.push_back(absl::StrCat("resource index ", i, ": ",
                                    d.resource.status().message()));
      continue;
    }
    if (!seen.insert(d.name).second) {
      errors.push_back(absl::StrCat(TypeName(*type), " '", QuotedText(d.name),
                                    "': sent twice"));
      continue;
    }
    Entry* e = Find(*type, d.name);
    if (e == nullptr) continue;  // not asked for: ignored
    if (!d.resource.ok()) {
      errors.push_back(absl::StrCat(TypeName(*type), " '", QuotedText(d.name),
                                    "': ", d.resource.status().message()));
      e->status.state = ResourceStatus::State::kNacked;
      e->status.error = std::string(d.resource.status().message());
      e->status.nacked_version = version_quote;
      e->status.nacked_at = now;
      continue;
    }
    e->timer = 0;
    if (e->resource == nullptr || e->bytes == nullptr || *e->bytes != d.bytes) {
      e->resource = std::make_shared<const AnyResource>(*std::move(d.resource));
      e->bytes = std::make_shared<const std::string>(std::move(d.bytes));
    }
    e->status.state = ResourceStatus::State::kAcked;
    e->status.version = version_quote;
    e->status.updated = now;
    e->status.error.clear();
    e->status.nacked_version.clear();
    e->status.nacked_at = absl::Time();
    e->status.has_resource = true;
  }
  // LDS and CDS responses hold the whole set: a name left out is gone.
  if (*type == ResourceType::kListener || *type == ResourceType::kCluster) {
    for (auto& [name, e] : state.entries) {
      // A name not had yet waits for its clock: this response may predate
      // the request that named it.
      if (seen.count(name) != 0 || e.resource == nullptr) continue;
      if (e.resource != nullptr &&
          bootstrap_.servers[0].ignore_resource_deletion) {
        // Said again by every response that leaves it out: one line a
        // period for all of them.
        uint64_t held_back = 0;
        if (log_limiter_.Admit("left out, kept", &held_back)) {
          gpr_log(GPR_INFO,
                  "mesh: xds: %s '%s' left out of a response; kept "
                  "(ignore_resource_deletion)%s",
                  TypeName(*type), QuotedText(name).c_str(),
                  LogLimiter::HeldBack(held_back).c_str());
        }
        continue;
      }
      if (e.resource != nullptr) {
        gpr_log(GPR_INFO, "mesh: xds: %s '%s' deleted by the server",
                TypeName(*type), QuotedText(name).c_str());
      }
      e.timer = 0;
      e.resource = nullptr;
      e.bytes = nullptr;
      e.status.state = ResourceStatus::State::kDoesNotExist;
      e.status.has_resource = false;
    }
  }
  if (errors.empty()) {
    state.version = response.version_info();
    SendRequestLocked(*type, response.nonce(), "");
  } else {
    std::string detail = absl::StrCat(
        "mesh rejected ", errors.size(), " of ", response.resources_size(),
        " resources (version '", version_quote, "'): ");
    if (errors.size() > kMaxNackErrors) {
      size_t more = errors.size() - kMaxNackErrors;
      errors.resize(kMaxNackErrors);
      errors.push_back(absl::StrCat("and ", more, " more"));
    }
    absl::StrAppend(&detail, absl::StrJoin(errors, "; "));
    // Every NACK goes to the server; the log gets one line a period per
    // type (a server that resends a bad response would fill it).
    uint64_t held_back = 0;
    if (log_limiter_.Admit(absl::StrCat("NACK ", TypeName(*type)),
                           &held_back)) {
      gpr_log(GPR_ERROR, "mesh: xds: NACK %s: %s%s", TypeName(*type),
              detail.c_str(), LogLimiter::HeldBack(held_back).c_str());
    }
    stream_state_.last_error = detail;
    // Valid resources of the response are applied; the version stays the
    // last accepted one.
    SendRequestLocked(*type, response.nonce(), detail);
  }
  UpdateSubscriptionsLocked();
  NotifyLocked();
}

void XdsClient::OnCallDone(Call* call, const grpc::Status& status,
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

void XdsClient::EndCallLocked(Call* call, const grpc::Status& status,
                              bool got_responses) {
  if (call != call_) return;
  call_ = nullptr;
  stream_state_.connected = false;
  // Pending does-not-exist clocks stop with the stream; the next one
  // starts them again. Nothing cached is dropped.
  for (auto& t : types_) {
    for (auto& [name, e] : t->entries) {
      e.timer = 0;
    }
  }
  if (shut_down_) return;
  // A stream that delivered was healthy, unless this client ended it for a
  // message it could not parse: a server that sends one good message and
  // then a bad one would otherwise be asked again every backoff_min.
  const bool rejected = !call->rejection.empty();
  if (got_responses && !rejected) backoff_.Reset();
  const bool wanted = !targets_.empty() || !clusters_.empty();
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

std::vector<std::string> XdsClient::AuthoritiesReachingLocked(
    const std::string& route_config_name) {
  std::vector<std::string> out;
  for (const auto& t : targets_) {
    Entry* l = Find(ResourceType::kListener, t->target);
    if (l == nullptr || l->resource == nullptr) continue;
    const auto& listener = std::get<ListenerResource>(*l->resource);
    if (listener.route_config_name == route_config_name) {
      out.push_back(t->target);
    }
  }
  return out;
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

void XdsClient::WaitingForLocked(TargetWatch& w, std::string what) {
  if (w.waiting_for == what || w.endpoints == nullptr) return;
  w.waiting_for = what;
  w.endpoints->OnDiscoveryError(absl::UnavailableError(std::move(what)));
}

void XdsClient::NotifyLocked() {
  for (auto& t : targets_) NotifyTargetLocked(*t);
  // The targets' routes may name new clusters to ask for.
  UpdateSubscriptionsLocked();
  for (auto& c : clusters_) NotifyClusterLocked(*c);
}

void XdsClient::NotifyTargetLocked(TargetWatch& w) {
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
  Entry* l = Find(ResourceType::kListener, w.target);
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
    Entry* r = Find(ResourceType::kRouteConfig, listener.route_config_name);
    const std::string waiting = absl::StrCat(
        "xDS Listener '", QuotedText(w.target), "' names RouteConfiguration '",
        QuotedText(listener.route_config_name), "', which has not come");
    if (r == nullptr) {  // asked for by the next update
      if (!w.delivered) WaitingForLocked(w, waiting);
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
          if (!w.delivered) WaitingForLocked(w, waiting);
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

void XdsClient::FailClusterLocked(ClusterWatch& w, std::string why) {
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

namespace {

// The cluster's TLS context (if any) on each of its endpoints.
void GiveClusterTls(const ClusterResource& cluster,
                    std::vector<Endpoint>* endpoints) {
  if (cluster.tls == nullptr) return;
  for (Endpoint& e : *endpoints) {
    e.tls = cluster.tls;
    e.tls_identity = cluster.tls_identity;
  }
}

}  // namespace

BackendPolicy XdsClient::PolicyOf(const ClusterResource& cluster) const {
  BackendPolicy policy;
  switch (cluster.lb_policy) {
    case ClusterResource::LbPolicy::kRoundRobin:
      if (options_.honour_round_robin) {
        policy.balancing = BackendPolicy::Balancing::kRoundRobin;
      }
      break;
    case ClusterResource::LbPolicy::kLeastRequest:
      break;  // P2C is least-request's better cousin
    case ClusterResource::LbPolicy::kRingHash:
      // Rings are built on every endpoint update, per channel: capped at
      // kMaxRingSize entries as gRPC caps them (4096).
      policy.balancing = BackendPolicy::Balancing::kRingHash;
      policy.ring_max_size = std::min(cluster.max_ring_size, kMaxRingSize);
      policy.ring_min_size =
          std::min(cluster.min_ring_size, policy.ring_max_size);
      break;
  }
  policy.max_requests = cluster.max_requests;
  if (cluster.outlier_detection) {
    policy.ejection = EjectionOf(*cluster.outlier_detection);
  }
  return policy;
}

void XdsClient::NotifyClusterLocked(ClusterWatch& w) {
  Entry* c = Find(ResourceType::kCluster, w.cluster);
  if (c == nullptr) return;
  if (c->resource == nullptr) {
    if (c->status.state == ResourceStatus::State::kDoesNotExist) {
      return FailClusterLocked(
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
    return NotifyDnsClusterLocked(w, c->resource);
  }
  // Was it a DNS cluster? Its names are no longer asked; what they
  // answered serves until the assignment replaces it.
  w.dns.clear();
  w.dns_delivered.reset();
  Entry* e = Find(ResourceType::kEndpoints, cluster.eds_service_name);
  if (e == nullptr) return;
  if (e->resource == nullptr) {
    if (e->status.state == ResourceStatus::State::kDoesNotExist) {
      return FailClusterLocked(
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
  BackendPolicy policy = PolicyOf(cluster);
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

absl::Status XdsClient::WatchDnsHostsLocked(ClusterWatch& w,
                                            const ClusterResource& cluster) {
  const bool same =
      w.dns.size() == cluster.dns_hosts.size() &&
      std::equal(
          w.dns.begin(), w.dns.end(), cluster.dns_hosts.begin(),
          [](const DnsWatch& d, const DnsHost& h) { return d.host == h; });
  if (same) return absl::OkStatus();
  if (shut_down_) return absl::UnavailableError("the xDS client is shut down");
  // A source that could not be made is tried again at a later update, at
  // most every 5 s.
  if (dns_ == nullptr &&
      (dns_status_.ok() || absl::Now() - dns_failed_at_ >= absl::Seconds(5))) {
    absl::StatusOr<std::shared_ptr<DiscoverySource>> made =
        dns_factory_ ? dns_factory_()
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
    // The answer is looked at on the timer thread, under mu_ (see
    // DnsHostAnswer): never on the DNS source's thread.
    d.answer = std::make_unique<DnsHostAnswer>([this, id = d.id] {
      PostToTimers([id](XdsClient& self) { self.OnDnsAnswer(id); });
    });
    d.subscription = dns_->Subscribe(target, d.answer.get());
  }
  // The hosts left out are unsubscribed here.
  w.dns = std::move(next);
  return absl::OkStatus();
}

void XdsClient::OnDnsAnswer(uint64_t id) {
  MutexLock lock(&mu_);
  if (shut_down_) return;
  for (auto& c : clusters_) {
    for (const DnsWatch& d : c->dns) {
      if (d.id == id) return NotifyClusterLocked(*c);
    }
  }
}

void XdsClient::NotifyDnsClusterLocked(
    ClusterWatch& w, const std::shared_ptr<const AnyResource>& resource) {
  const auto& cluster = std::get<ClusterResource>(*resource);
  if (absl::Status s = WatchDnsHostsLocked(w, cluster); !s.ok()) {
    return FailClusterLocked(
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
    w.endpoints->OnBackendPolicy(PolicyOf(cluster));
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

std::vector<ResourceSnapshot> XdsClient::Snapshot(bool with_contents) const {
  MutexLock lock(&mu_);
  std::vector<ResourceSnapshot> out;
  for (ResourceType type : kTypes) {
    for (const auto& [name, e] : types_[Index(type)]->entries) {
      ResourceSnapshot& r = out.emplace_back();
      r.type = type;
      r.name = name;
      r.status = e.status;
      if (with_contents && e.resource != nullptr) r.contents = e.bytes;
    }
  }
  return out;
}

bool XdsClient::shut_down() const {
  MutexLock lock(&mu_);
  return shut_down_;
}

DiscoverySubscription::State XdsClient::WatchState(const void* watch) const {
  MutexLock lock(&mu_);
  DiscoverySubscription::State state = stream_state_;
  auto add = [this, &state](ResourceType type, const std::string& name)
                 ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
                   const auto& entries = types_[Index(type)]->entries;
                   auto found = entries.find(name);
                   if (found == entries.end()) return;
                   const ResourceStatus& s = found->second.status;
                   DiscoverySubscription::Resource r;
                   r.type = TypeName(type);
                   r.name = name;
                   r.state = StateName(s.state);
                   r.version = s.version;
                   r.updated =
                       s.has_resource ? s.updated : absl::InfinitePast();
                   r.error = s.error;
                   state.resources.push_back(std::move(r));
                 };
  auto resource_of =
      [this](ResourceType type, const std::string& name)
          ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> const AnyResource* {
    const auto& entries = types_[Index(type)]->entries;
    auto found = entries.find(name);
    return found == entries.end() ? nullptr : found->second.resource.get();
  };
  for (const auto& t : targets_) {
    if (t.get() != watch) continue;
    add(ResourceType::kListener, t->target);
    if (const AnyResource* l =
            resource_of(ResourceType::kListener, t->target)) {
      const auto& name = std::get<ListenerResource>(*l).route_config_name;
      if (!name.empty()) add(ResourceType::kRouteConfig, name);
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
        state.resources.push_back(std::move(r));
      }
    }
    if (const AnyResource* r =
            resource_of(ResourceType::kCluster, c->cluster)) {
      const auto& cluster = std::get<ClusterResource>(*r);
      if (cluster.discovery == ClusterResource::Discovery::kEds) {
        add(ResourceType::kEndpoints, cluster.eds_service_name);
      }
    }
  }
  return state;
}

void XdsClient::RefreshSoon(const void* watch) {
  // On the call path: mu_ is taken on the timer thread, never here.
  PostToTimers([watch](XdsClient& self) {
    MutexLock lock(&self.mu_);
    for (const auto& c : self.clusters_) {
      if (c.get() != watch) continue;
      // A DNS cluster's names may have moved; the DNS source only posts
      // this to its own thread.
      for (const DnsWatch& d : c->dns) {
        if (d.subscription != nullptr) d.subscription->RefreshSoon();
      }
    }
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

#include "tools/mesh-control-plane/control_plane.h"

#include <cstdio>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "linkerd/destination.grpc.pb.h"
#include "linkerd/outbound.grpc.pb.h"
#include "src/base/mutex.h"
#include "src/base/utf8.h"
#include "tools/mesh-control-plane/linkerd_resources.h"
#include "tools/mesh-control-plane/policy_resources.h"

namespace mesh::controlplane {
namespace {

namespace dst = ::io::linkerd::proxy::destination;
namespace out = ::io::linkerd::proxy::outbound;

// The endpoints a stream last sent, keyed by address, as serialized wire
// messages so that any change of attributes counts.
using SentSet = std::map<std::string, std::string>;

// What the Get stream for one target shows at one config version.
struct View {
  enum class Kind { kUnknown, kEmpty, kEndpoints } kind = Kind::kUnknown;
  std::map<std::string, dst::WeightedAddr> endpoints;
};

View ViewOf(const Config& config, const std::string& target) {
  View v;
  auto it = config.targets.find(target);
  if (it == config.targets.end()) return v;
  // Linkerd's Get sends ready endpoints only: an unhealthy one is left out,
  // and a target whose endpoints are all unhealthy has none.
  for (const EndpointSpec& e : it->second.endpoints) {
    if (e.healthy) v.endpoints[e.address] = ToWire(e);
  }
  v.kind = v.endpoints.empty() ? View::Kind::kEmpty : View::Kind::kEndpoints;
  return v;
}

}  // namespace

class ControlPlane::Service final : public dst::Destination::Service {
 public:
  explicit Service(ControlPlane* owner) : owner_(owner) {}

  grpc::Status Get(grpc::ServerContext* context,
                   const dst::GetDestination* request,
                   grpc::ServerWriter<dst::Update>* writer) override {
    const std::string& target = request->path();
    std::optional<View::Kind> last;  // nothing sent yet
    SentSet sent;
    return Serve(context, target, "Get", [&](const Config& config) -> bool {
      View view = ViewOf(config, target);
      if (view.kind != View::Kind::kEndpoints) {
        if (last == view.kind) return true;
        last = view.kind;
        sent.clear();
        dst::Update u;
        u.mutable_no_endpoints()->set_exists(view.kind == View::Kind::kEmpty);
        return writer->Write(u);
      }
      dst::Update removes;
      for (const auto& [address, bytes] : sent) {
        if (!view.endpoints.count(address)) {
          dst::WeightedAddr gone;
          gone.ParseFromString(bytes);
          *removes.mutable_remove()->add_addrs() = gone.addr();
        }
      }
      dst::Update adds;
      SentSet now;
      for (const auto& [address, wire] : view.endpoints) {
        std::string bytes = wire.SerializeAsString();
        auto it = sent.find(address);
        if (last != View::Kind::kEndpoints || it == sent.end() ||
            it->second != bytes) {
          *adds.mutable_add()->add_addrs() = wire;
        }
        now.emplace(address, std::move(bytes));
      }
      bool had_endpoints = last == View::Kind::kEndpoints;
      last = View::Kind::kEndpoints;
      sent = std::move(now);
      if (had_endpoints && removes.has_remove() && !writer->Write(removes))
        return false;
      if (adds.has_add() && !writer->Write(adds)) return false;
      return true;
    });
  }

  grpc::Status GetProfile(
      grpc::ServerContext* context, const dst::GetDestination* request,
      grpc::ServerWriter<dst::DestinationProfile>* writer) override {
    const std::string& target = request->path();
    std::string sent;
    bool any = false;
    return Serve(context, target, "GetProfile",
                 [&](const Config& config) -> bool {
                   dst::DestinationProfile profile = ProfileFor(config, target);
                   std::string bytes = profile.SerializeAsString();
                   if (any && bytes == sent) return true;
                   any = true;
                   sent = std::move(bytes);
                   return writer->Write(profile);
                 });
  }

  // Runs `send` with the config at each new version until the client goes
  // away, the server stops, or a write fails.
  template <typename Send>
  grpc::Status Serve(grpc::ServerContext* context, const std::string& target,
                     const char* method, Send send) {
    internal::MutexLock lock(&owner_->mu_);
    ++owner_->calls_[{method, target}];
    if (owner_->config_.not_mesh.count(target)) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat(internal::PrintableText(target),
                                       " is not a mesh service"));
    }
    ++owner_->open_streams_;
    int64_t seen = -1;
    grpc::Status result = grpc::Status::OK;
    while (true) {
      // Wake for a new version or stopping; look at cancellation every
      // 100 ms (gRPC's sync API has no cancellation callback).
      struct Wake {
        ControlPlane* cp;
        const int64_t* seen;
      } wake{owner_, &seen};
      owner_->mu_.AwaitWithTimeout(
          absl::Condition(
              +[](Wake* w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                return w->cp->stopping_ || w->cp->version_ != *w->seen;
              },
              &wake),
          absl::Milliseconds(100));
      if (owner_->stopping_) {
        result = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                              "control plane stopping");
        break;
      }
      if (context->IsCancelled()) break;
      if (owner_->version_ == seen) continue;
      seen = owner_->version_;
      if (owner_->config_.silent.count(target)) continue;
      Config config = owner_->config_;
      owner_->mu_.Unlock();
      bool ok = send(config);
      owner_->mu_.Lock();
      if (!ok) break;
    }
    --owner_->open_streams_;
    return result;
  }

 private:
  ControlPlane* const owner_;
};

class ControlPlane::PolicyService final
    : public out::OutboundPolicies::Service {
 public:
  PolicyService(ControlPlane* owner, ControlPlane::Service* streams)
      : owner_(owner), streams_(streams) {}

  grpc::Status Get(grpc::ServerContext* context,
                   const out::TrafficSpec* request,
                   out::OutboundPolicy* response) override {
    (void)context;
    if (!request->has_authority()) return AddressTarget();
    const std::string& target = request->authority();
    absl::StatusOr<out::OutboundPolicy> policy;
    {
      internal::MutexLock lock(&owner_->mu_);
      ++owner_->calls_[{"OutboundPolicies.Get", target}];
      if (owner_->config_.not_mesh.count(target)) return NotMesh(target);
      policy = PolicyFor(owner_->config_, target);
    }
    if (!policy.ok()) return NotFound(policy.status());
    *response = *std::move(policy);
    return grpc::Status::OK;
  }

  grpc::Status Watch(grpc::ServerContext* context,
                     const out::TrafficSpec* request,
                     grpc::ServerWriter<out::OutboundPolicy>* writer) override {
    if (!request->has_authority()) return AddressTarget();
    const std::string& target = request->authority();
    std::string sent;
    bool any = false;
    grpc::Status end = grpc::Status::OK;
    grpc::Status served =
        streams_->Serve(context, target, "OutboundPolicies.Watch",
                        [&](const Config& config) -> bool {
                          absl::StatusOr<out::OutboundPolicy> policy =
                              PolicyFor(config, target);
                          // A target the config no longer names ends the stream
                          // as one it never named: NOT_FOUND, which clients
                          // take as final.
                          if (!policy.ok()) {
                            end = NotFound(policy.status());
                            return false;
                          }
                          std::string bytes = policy->SerializeAsString();
                          if (any && bytes == sent) return true;
                          any = true;
                          sent = std::move(bytes);
                          return writer->Write(*policy);
                        });
    return end.ok() ? served : end;
  }

 private:
  // Only an authority ("name:port") names a config target; an address
  // target is not found.
  static grpc::Status AddressTarget() {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "the local control plane has policies for authority "
                        "targets (name:port) only, not for addresses");
  }
  static grpc::Status NotFound(const absl::Status& status) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        std::string(status.message()));
  }
  static grpc::Status NotMesh(const std::string& target) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat(internal::PrintableText(target),
                                     " is not a mesh service"));
  }

  ControlPlane* const owner_;
  ControlPlane::Service* const streams_;
};

absl::StatusOr<std::unique_ptr<ControlPlane>> ControlPlane::Start(
    const std::string& listen, Config config, bool verbose_xds,
    std::shared_ptr<grpc::ServerCredentials> credentials) {
  std::unique_ptr<ControlPlane> cp(new ControlPlane());
  cp->ads_ = std::make_unique<AdsService>(verbose_xds);
  cp->ads_->Publish(config);
  cp->config_ = std::move(config);
  cp->service_ = std::make_unique<Service>(cp.get());
  cp->policy_service_ =
      std::make_unique<PolicyService>(cp.get(), cp->service_.get());
  grpc::ServerBuilder builder;
  // Without this gRPC sets SO_REUSEPORT, and a second server on a port in
  // use would start and silently share it.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // A request is a target name or an xDS subscription: 1 MiB is plenty
  // (10,000 long names), and bounds what one client makes the server hold.
  builder.SetMaxReceiveMessageSize(1 << 20);
  builder.AddListeningPort(
      listen,
      credentials != nullptr ? credentials : grpc::InsecureServerCredentials(),
      &cp->port_);
  builder.RegisterService(cp->service_.get());
  builder.RegisterService(cp->policy_service_.get());
  builder.RegisterService(cp->ads_.get());
  cp->server_ = builder.BuildAndStart();
  if (cp->server_ == nullptr || cp->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("control plane cannot listen on ", listen));
  }
  return cp;
}

ControlPlane::~ControlPlane() { Kill(); }

void ControlPlane::SetConfig(Config config) {
  // Both protocols take configs in the same order.
  internal::MutexLock setting(&set_config_mu_);
  ads_->Publish(config);
  internal::MutexLock lock(&mu_);
  config_ = std::move(config);
  ++version_;
}

int64_t ControlPlane::calls(const std::string& method,
                            const std::string& target) const {
  internal::MutexLock lock(&mu_);
  auto it = calls_.find({method, target});
  return it == calls_.end() ? 0 : it->second;
}

int64_t ControlPlane::rejected_files() const {
  internal::MutexLock lock(&mu_);
  return rejected_files_;
}

std::string ControlPlane::last_file_error() const {
  internal::MutexLock lock(&mu_);
  return last_file_error_;
}

int ControlPlane::open_streams() const {
  internal::MutexLock lock(&mu_);
  return open_streams_;
}

void ControlPlane::Kill() {
  {
    internal::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (ads_ != nullptr) ads_->Stop();
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
  if (watcher_.joinable()) watcher_.join();
}

void ControlPlane::RejectFile(const std::string& error) {
  std::string line = internal::PrintableText(error);
  std::fprintf(stderr, "mesh-control-plane: %s; keeping the last good config\n",
               line.c_str());
  internal::MutexLock lock(&mu_);
  ++rejected_files_;
  last_file_error_ = std::move(line);
}

absl::Status ControlPlane::WatchFile(const std::string& path,
                                     absl::Duration interval,
                                     int64_t max_bytes) {
  if (watcher_.joinable()) {
    return absl::FailedPreconditionError("WatchFile was already called");
  }
  absl::StatusOr<FileStamp> stamp = StampFile(path);
  if (!stamp.ok()) return stamp.status();
  absl::StatusOr<std::string> text = ReadConfigFile(path, max_bytes);
  if (!text.ok()) return text.status();
  absl::StatusOr<Config> config = ParseConfig(*text);
  if (!config.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", config.status().message()));
  }
  SetConfig(*std::move(config));
  {
    internal::MutexLock lock(&mu_);
    ++file_reads_;
  }
  // Only the stamp and a hash of the text are kept between polls: an
  // unchanged file costs one stat(), whatever its size or validity.
  watcher_ = std::thread([this, path, interval, max_bytes, last = *stamp,
                          last_hash = absl::HashOf(*text)]() mutable {
    internal::MutexLock lock(&mu_);
    while (!mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval)) {
      ++file_polls_;
      mu_.Unlock();
      PollFile(path, max_bytes, &last, &last_hash);
      mu_.Lock();
    }
  });
  return absl::OkStatus();
}

void ControlPlane::PollFile(const std::string& path, int64_t max_bytes,
                            FileStamp* last, size_t* last_hash) {
  absl::StatusOr<FileStamp> now = StampFile(path);
  // A file missing for a moment (an editor's rename) is looked at again
  // next time; its absence changes nothing.
  if (!now.ok() || *now == *last) return;
  *last = *now;
  absl::StatusOr<std::string> text = ReadConfigFile(path, max_bytes);
  {
    internal::MutexLock lock(&mu_);
    ++file_reads_;
  }
  if (!text.ok()) {
    if (!absl::IsNotFound(text.status())) {
      RejectFile(std::string(text.status().message()));
    }
    return;
  }
  size_t hash = absl::HashOf(*text);
  if (hash == *last_hash) return;  // touched, not changed
  *last_hash = hash;
  absl::StatusOr<Config> next = ParseConfig(*text);
  if (!next.ok()) {
    RejectFile(absl::StrCat(path, ":", next.status().message()));
    return;
  }
  std::fprintf(stderr, "mesh-control-plane: %s changed; applied\n",
               internal::PrintableText(path).c_str());
  SetConfig(*std::move(next));
}

int64_t ControlPlane::file_reads() const {
  internal::MutexLock lock(&mu_);
  return file_reads_;
}

int64_t ControlPlane::file_polls() const {
  internal::MutexLock lock(&mu_);
  return file_polls_;
}

}  // namespace mesh::controlplane

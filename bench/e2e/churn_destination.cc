#include "bench/e2e/churn_destination.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "linkerd/destination.grpc.pb.h"
#include "tools/mesh-control-plane/linkerd_resources.h"

namespace mesh::bench {

namespace dst = ::io::linkerd::proxy::destination;

class DeltaDestination::Service final : public dst::Destination::Service {
 public:
  explicit Service(DeltaDestination* owner) : owner_(owner) {}

  grpc::Status Get(grpc::ServerContext* context,
                   const dst::GetDestination* request,
                   grpc::ServerWriter<dst::Update>* writer) override {
    if (request->path() != owner_->target_) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat(request->path(), " is not a mesh service"));
    }
    Stream stream;
    dst::Update initial;
    {
      absl::MutexLock lock(&owner_->mu_);
      if (owner_->stopping_) {
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "stopping");
      }
      if (owner_->current_.empty()) {
        initial.mutable_no_endpoints()->set_exists(true);
      } else {
        auto* add = initial.mutable_add();
        for (const auto& [address, wire] : owner_->current_) {
          *add->add_addrs() = wire;
        }
      }
      owner_->streams_.insert(&stream);
      ++owner_->open_streams_;
    }
    grpc::Status result = grpc::Status::OK;
    bool ok = writer->Write(initial);
    if (ok) {
      absl::MutexLock lock(&owner_->mu_);
      ++owner_->written_;
    }
    std::deque<std::shared_ptr<const dst::Update>> batch;
    while (ok) {
      {
        absl::MutexLock lock(&owner_->mu_);
        // Wake for an update or stopping; look at cancellation every 100 ms
        // (the sync API has no cancellation callback).
        struct Wake {
          DeltaDestination* d;
          Stream* s;
        } wake{owner_, &stream};
        owner_->mu_.AwaitWithTimeout(
            absl::Condition(
                +[](Wake* w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                  return w->d->stopping_ || !w->s->queue.empty();
                },
                &wake),
            absl::Milliseconds(100));
        if (owner_->stopping_) {
          result = grpc::Status(grpc::StatusCode::UNAVAILABLE, "stopping");
          break;
        }
        batch.swap(stream.queue);
      }
      if (context->IsCancelled()) break;
      for (const auto& update : batch) {
        ok = writer->Write(*update);
        if (!ok) break;
        absl::MutexLock lock(&owner_->mu_);
        ++owner_->written_;
      }
      batch.clear();
    }
    absl::MutexLock lock(&owner_->mu_);
    owner_->streams_.erase(&stream);
    --owner_->open_streams_;
    return result;
  }

  grpc::Status GetProfile(
      grpc::ServerContext* context, const dst::GetDestination* request,
      grpc::ServerWriter<dst::DestinationProfile>* writer) override {
    if (request->path() != owner_->target_) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat(request->path(), " is not a mesh service"));
    }
    if (!writer->Write(owner_->profile_)) return grpc::Status::OK;
    absl::MutexLock lock(&owner_->mu_);
    while (!owner_->stopping_ && !context->IsCancelled()) {
      owner_->mu_.AwaitWithTimeout(absl::Condition(&owner_->stopping_),
                                   absl::Milliseconds(100));
    }
    return owner_->stopping_
               ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "stopping")
               : grpc::Status::OK;
  }

 private:
  DeltaDestination* const owner_;
};

absl::StatusOr<std::unique_ptr<DeltaDestination>> DeltaDestination::Start(
    const std::string& target,
    const std::vector<controlplane::EndpointSpec>& endpoints,
    const controlplane::ProfileSpec& profile) {
  std::unique_ptr<DeltaDestination> d(new DeltaDestination());
  d->target_ = target;
  controlplane::Config config;
  config.targets[target].profile = profile;
  d->profile_ = controlplane::ProfileFor(config, target);
  {
    absl::MutexLock lock(&d->mu_);
    for (const controlplane::EndpointSpec& e : endpoints) {
      d->current_[e.address] = controlplane::ToWire(e);
    }
  }
  d->service_ = std::make_unique<Service>(d.get());
  grpc::ServerBuilder builder;
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &d->port_);
  builder.RegisterService(d->service_.get());
  d->server_ = builder.BuildAndStart();
  if (d->server_ == nullptr || d->port_ == 0) {
    return absl::UnavailableError(
        "destination server cannot listen on 127.0.0.1");
  }
  return d;
}

DeltaDestination::~DeltaDestination() { Kill(); }

void DeltaDestination::Push(
    const std::vector<std::string>& remove,
    const std::vector<controlplane::EndpointSpec>& add) {
  auto removes = std::make_shared<dst::Update>();
  auto adds = std::make_shared<dst::Update>();
  std::vector<dst::WeightedAddr> wires;
  wires.reserve(add.size());
  for (const controlplane::EndpointSpec& e : add) {
    wires.push_back(controlplane::ToWire(e));
    *adds->mutable_add()->add_addrs() = wires.back();
  }
  absl::MutexLock lock(&mu_);
  for (const std::string& address : remove) {
    auto it = current_.find(address);
    if (it == current_.end()) continue;
    *removes->mutable_remove()->add_addrs() = it->second.addr();
    current_.erase(it);
  }
  for (size_t i = 0; i < add.size(); ++i) {
    current_[add[i].address] = std::move(wires[i]);
  }
  for (Stream* s : streams_) {
    if (removes->has_remove()) s->queue.push_back(removes);
    if (adds->has_add()) s->queue.push_back(adds);
  }
}

int DeltaDestination::open_streams() const {
  absl::MutexLock lock(&mu_);
  return open_streams_;
}

int64_t DeltaDestination::messages_written() const {
  absl::MutexLock lock(&mu_);
  return written_;
}

void DeltaDestination::Kill() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
}

}  // namespace mesh::bench

#include "tests/support/scripted_ads_server.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "envoy/service/discovery/v3/discovery.grpc.pb.h"

namespace mesh::testing {

using envoy::service::discovery::v3::AggregatedDiscoveryService;

// One ADS stream, on the callback API: a read is always pending (each
// request goes to the owner's queue); responses are written one at a time
// from a queue; the stream ends once it is asked to and its writes are
// done. Every member is guarded by the owner's mutex; gRPC never runs a
// reaction inline from a Start* or Finish call, so those are made with it
// held.
class ScriptedAdsServer::Stream final
    : public grpc::ServerBidiReactor<DiscoveryRequest, DiscoveryResponse> {
 public:
  Stream(ScriptedAdsServer* owner, int number)
      : owner_(owner), number_(number) {
    StartRead(&request_);
  }

  // Not asked to end, and not cancelled.
  // REQUIRES: the owner's mutex is held.
  bool open() const { return !end_.has_value(); }

  void SendLocked(DiscoveryResponse response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(owner_->mu_) {
    queue_.push_back(std::move(response));
    if (!writing_) WriteNextLocked();
  }

  void EndLocked(grpc::Status status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(owner_->mu_) {
    if (end_.has_value()) return;
    end_ = std::move(status);
    FinishIfDoneLocked();
  }

  void OnReadDone(bool ok) override {
    internal::MutexLock lock(&owner_->mu_);
    // A failed read: the client half-closed or went away. An ADS client
    // never half-closes; a cancel comes to OnCancel.
    if (!ok) return;
    owner_->received_.push_back({request_, number_});
    owner_->received_cv_.SignalAll();
    StartRead(&request_);
  }

  void OnWriteDone(bool ok) override {
    internal::MutexLock lock(&owner_->mu_);
    writing_ = false;
    if (!ok) {  // the stream is broken: nothing more goes out
      queue_.clear();
      if (!end_.has_value()) end_ = grpc::Status::CANCELLED;
    }
    WriteNextLocked();
    FinishIfDoneLocked();
  }

  void OnCancel() override {
    internal::MutexLock lock(&owner_->mu_);
    queue_.clear();
    if (!end_.has_value()) end_ = grpc::Status::CANCELLED;
    FinishIfDoneLocked();
  }

  void OnDone() override {
    {
      internal::MutexLock lock(&owner_->mu_);
      auto& streams = owner_->streams_;
      streams.erase(std::remove(streams.begin(), streams.end(), this),
                    streams.end());
    }
    delete this;
  }

 private:
  void WriteNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(owner_->mu_) {
    if (writing_ || queue_.empty()) return;
    out_ = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    StartWrite(&out_);
  }

  void FinishIfDoneLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(owner_->mu_) {
    if (!end_.has_value() || writing_ || finished_) return;
    finished_ = true;
    Finish(*end_);
  }

  ScriptedAdsServer* const owner_;
  const int number_;
  DiscoveryRequest request_;
  DiscoveryResponse out_;
  std::deque<DiscoveryResponse> queue_;
  bool writing_ = false;
  std::optional<grpc::Status> end_;  // asked to end with this
  bool finished_ = false;            // Finish called
};

class ScriptedAdsServer::Service final
    : public AggregatedDiscoveryService::CallbackService {
 public:
  explicit Service(ScriptedAdsServer* owner) : owner_(owner) {}

  grpc::ServerBidiReactor<DiscoveryRequest, DiscoveryResponse>*
  StreamAggregatedResources(grpc::CallbackServerContext* /*context*/) override {
    internal::MutexLock lock(&owner_->mu_);
    auto* stream = new Stream(owner_, ++owner_->streams_started_);
    owner_->streams_.push_back(stream);
    return stream;
  }

 private:
  ScriptedAdsServer* const owner_;
};

std::unique_ptr<ScriptedAdsServer> ScriptedAdsServer::Start(int port) {
  std::unique_ptr<ScriptedAdsServer> server(new ScriptedAdsServer());
  server->service_ = std::make_unique<Service>(server.get());
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("127.0.0.1:", port),
                           grpc::InsecureServerCredentials(), &server->port_);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    std::fprintf(stderr, "ScriptedAdsServer: cannot listen on 127.0.0.1:%d\n",
                 port);
    std::abort();
  }
  return server;
}

ScriptedAdsServer::~ScriptedAdsServer() {
  {
    internal::MutexLock lock(&mu_);
    for (Stream* stream : streams_) {
      stream->EndLocked(
          grpc::Status(grpc::StatusCode::UNAVAILABLE, "ADS server stopping"));
    }
  }
  // Streams whose last write the client does not take are cancelled at the
  // deadline; Wait returns once gRPC is done with every stream.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server_->Wait();
}

std::string ScriptedAdsServer::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

std::optional<ScriptedAdsServer::DiscoveryRequest>
ScriptedAdsServer::NextRequest(absl::Duration timeout, int* stream) {
  const auto deadline =
      std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  internal::MutexLock lock(&mu_);
  while (received_.empty()) {
    if (received_cv_.WaitUntil(&mu_, deadline) && received_.empty()) {
      return std::nullopt;
    }
  }
  Received next = std::move(received_.front());
  received_.pop_front();
  if (stream != nullptr) *stream = next.stream;
  return std::move(next.request);
}

std::optional<ScriptedAdsServer::DiscoveryRequest>
ScriptedAdsServer::WaitForRequest(
    const std::string& type_url,
    std::function<bool(const DiscoveryRequest&)> pred, absl::Duration timeout,
    int* stream) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    std::optional<DiscoveryRequest> request = NextRequest(
        std::max(deadline - absl::Now(), absl::ZeroDuration()), stream);
    if (!request.has_value()) return std::nullopt;
    if (request->type_url() == type_url &&
        (pred == nullptr || pred(*request))) {
      return request;
    }
  }
}

bool ScriptedAdsServer::Send(DiscoveryResponse response, std::string* nonce) {
  internal::MutexLock lock(&mu_);
  auto newest = std::find_if(streams_.rbegin(), streams_.rend(),
                             [](Stream* s) { return s->open(); });
  if (newest == streams_.rend()) return false;
  if (response.nonce().empty()) {
    response.set_nonce(absl::StrCat("n", ++next_nonce_));
  }
  if (nonce != nullptr) *nonce = response.nonce();
  (*newest)->SendLocked(std::move(response));
  return true;
}

void ScriptedAdsServer::EndStream(grpc::Status status) {
  internal::MutexLock lock(&mu_);
  auto newest = std::find_if(streams_.rbegin(), streams_.rend(),
                             [](Stream* s) { return s->open(); });
  if (newest != streams_.rend()) (*newest)->EndLocked(std::move(status));
}

int ScriptedAdsServer::streams_started() const {
  internal::MutexLock lock(&mu_);
  return streams_started_;
}

int ScriptedAdsServer::open_streams() const {
  internal::MutexLock lock(&mu_);
  return static_cast<int>(
      std::count_if(streams_.begin(), streams_.end(),
                    [](const Stream* s) { return s->open(); }));
}

envoy::service::discovery::v3::DiscoveryResponse MakeResponse(
    const std::string& type_url, const std::string& version,
    const std::vector<const google::protobuf::Message*>& resources) {
  envoy::service::discovery::v3::DiscoveryResponse response;
  response.set_type_url(type_url);
  response.set_version_info(version);
  for (const google::protobuf::Message* resource : resources) {
    response.add_resources()->PackFrom(*resource);
  }
  return response;
}

}  // namespace mesh::testing

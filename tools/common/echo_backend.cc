#include "tools/common/echo_backend.h"

#include <grpcpp/alarm.h>
#include <grpcpp/generic/async_generic_service.h>

#include "absl/random/distributions.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"

namespace mesh::tools {

// One unary exchange over the generic bidi reactor: read one message, wait
// the configured delay on a grpc::Alarm (no thread blocks), then answer.
class EchoBackend::Reactor final : public grpc::ServerGenericBidiReactor {
 public:
  Reactor(EchoBackend* owner, grpc::GenericCallbackServerContext* context)
      : owner_(owner) {
    owner_->received_.fetch_add(1);
    // Request metadata named "echo-*" comes back as response metadata, so
    // tests can see what reached the server.
    for (const auto& [key, value] : context->client_metadata()) {
      if (key.starts_with("echo-")) {
        context->AddInitialMetadata(std::string(key.data(), key.size()),
                                    std::string(value.data(), value.size()));
      }
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok)
      return Answer(grpc::Status(grpc::StatusCode::INTERNAL, "no request"));
    absl::Duration delay;
    grpc::StatusCode code;
    {
      absl::MutexLock lock(&owner_->mu_);
      delay = owner_->delay_;
      if (owner_->jitter_ > absl::ZeroDuration()) {
        thread_local absl::InsecureBitGen gen;
        delay += owner_->jitter_ * absl::Uniform(gen, 0.0, 1.0);
      }
      code = owner_->status_;
      if (owner_->stall_probability_ > 0) {
        thread_local absl::InsecureBitGen gen;
        if (absl::Bernoulli(gen, owner_->stall_probability_)) {
          delay += owner_->stall_;
        }
      }
    }
    if (code != grpc::StatusCode::OK) {
      return Answer(grpc::Status(code, "backend configured to fail"));
    }
    if (delay <= absl::ZeroDuration()) return Answer(grpc::Status::OK);
    // OnCancel may run on another thread at any time: the alarm is set and
    // cancelled under one lock, and never cancelled before it is set.
    {
      absl::MutexLock lock(&alarm_mu_);
      if (!cancelled_) {
        alarm_set_ = true;
        alarm_.Set(absl::ToChronoTime(absl::Now() + delay), [this](bool fired) {
          Answer(fired
                     ? grpc::Status::OK
                     : grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
        });
        return;
      }
    }
    Answer(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
  }

  void OnCancel() override {
    if (!answered_.load()) owner_->cancelled_.fetch_add(1);
    absl::MutexLock lock(&alarm_mu_);
    cancelled_ = true;
    if (alarm_set_) alarm_.Cancel();
  }
  void OnDone() override {
    owner_->answered_.fetch_add(1);
    delete this;
  }

 private:
  void Answer(const grpc::Status& status) {
    if (answered_.exchange(true)) return;
    if (status.ok()) {
      StartWriteAndFinish(&request_, grpc::WriteOptions(), status);
    } else {
      Finish(status);
    }
  }

  EchoBackend* const owner_;
  grpc::ByteBuffer request_;
  absl::Mutex alarm_mu_;
  bool alarm_set_ ABSL_GUARDED_BY(alarm_mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(alarm_mu_) = false;
  grpc::Alarm alarm_;
  std::atomic<bool> answered_{false};
};

class EchoBackend::Service final : public grpc::CallbackGenericService {
 public:
  explicit Service(EchoBackend* owner) : owner_(owner) {}
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    return new Reactor(owner_, context);
  }

 private:
  EchoBackend* const owner_;
};

absl::StatusOr<std::unique_ptr<EchoBackend>> EchoBackend::Start(
    int port, std::shared_ptr<grpc::ServerCredentials> credentials,
    const std::string& host) {
  std::unique_ptr<EchoBackend> backend(new EchoBackend());
  // "::1" and "[::1]" alike.
  absl::string_view bare = host;
  if (absl::ConsumePrefix(&bare, "[")) absl::ConsumeSuffix(&bare, "]");
  backend->host_ = absl::StrContains(bare, ':') ? absl::StrCat("[", bare, "]")
                                                : std::string(bare);
  backend->service_ = std::make_unique<Service>(backend.get());
  grpc::ServerBuilder builder;
  // Without this gRPC sets SO_REUSEPORT, and a second server on a port in
  // use would start and silently share it.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(
      absl::StrCat(backend->host_, ":", port),
      credentials != nullptr ? credentials : grpc::InsecureServerCredentials(),
      &backend->port_);
  builder.RegisterCallbackGenericService(backend->service_.get());
  backend->server_ = builder.BuildAndStart();
  if (backend->server_ == nullptr || backend->port_ == 0) {
    return absl::UnavailableError(absl::StrCat(
        "echo backend could not listen on ", backend->host_, ":", port));
  }
  return backend;
}

EchoBackend::~EchoBackend() { Kill(); }

std::string EchoBackend::address() const {
  return absl::StrCat(host_, ":", port_);
}

void EchoBackend::set_delay(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  delay_ = delay;
}

void EchoBackend::set_stall(double probability, absl::Duration stall) {
  absl::MutexLock lock(&mu_);
  stall_probability_ = probability;
  stall_ = stall;
}

absl::Duration EchoBackend::delay() const {
  absl::MutexLock lock(&mu_);
  return delay_;
}

void EchoBackend::set_status(grpc::StatusCode code) {
  absl::MutexLock lock(&mu_);
  status_ = code;
}

void EchoBackend::set_jitter(absl::Duration jitter) {
  absl::MutexLock lock(&mu_);
  jitter_ = jitter;
}

void EchoBackend::Kill() {
  if (killed_.exchange(true) || server_ == nullptr) return;
  // A deadline in the past cancels calls in flight at once.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
}

}  // namespace mesh::tools

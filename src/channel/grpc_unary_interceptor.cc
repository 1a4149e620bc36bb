// The hijacking channel's unary interceptor (grpc_interceptors.h).
#include <google/protobuf/message_lite.h>
#include <grpcpp/support/client_interceptor.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/mutex.h"
#include "src/channel/grpc_interceptors.h"
#include "src/transport/byte_buffer_bytes.h"

namespace mesh::internal {

absl::Time DeadlineOf(const grpc::ClientContext* context) {
  if (context == nullptr) return absl::InfiniteFuture();
  std::chrono::system_clock::time_point deadline = context->deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  absl::optional<absl::Cord> details = status.GetPayload(kGrpcStatusDetailsUrl);
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()),
                      details ? std::string(*details) : std::string());
}

namespace {

using grpc::experimental::ClientRpcInfo;
using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::InterceptorBatchMethods;

// One hijacked call: a unary call sent through the ChannelCore once its
// request is complete.
class MeshCallInterceptor final : public grpc::experimental::Interceptor {
 public:
  MeshCallInterceptor(std::shared_ptr<ChannelCore> core, ClientRpcInfo* info,
                      absl::Status refused)
      : core_(std::move(core)), info_(info) {
    if (!refused.ok()) result_.emplace().status = std::move(refused);
  }

  // Dies with its ClientContext. A context destroyed while its call is in
  // mesh (a CompletionQueue call never finished) cancels the call and waits
  // for its answer, which refers to this.
  ~MeshCallInterceptor() override {
    std::shared_ptr<Cancellation> cancel;
    {
      MutexLock lock(&mu_);
      if (!started_ || result_.has_value()) return;
      cancel = cancel_;
    }
    if (cancel != nullptr) cancel->Cancel();
    MutexLock lock(&mu_);
    auto answered = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return result_.has_value();
    };
    mu_.Await(absl::Condition(&answered));
  }

  void Intercept(InterceptorBatchMethods* methods) override {
    if (Has(methods, InterceptionHookPoints::PRE_SEND_CANCEL)) {
      return OnCancel();  // no Proceed for a cancel
    }
    if (Has(methods, InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      for (const auto& [key, value] : *methods->GetSendInitialMetadata()) {
        options_.metadata.emplace_back(key, value);
      }
    }
    if (Has(methods, InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      grpc::ByteBuffer* sent = methods->GetSerializedSendMessage();
      if (sent != nullptr) request_ = BytesOf(*sent);
    }
    if (Has(methods, InterceptionHookPoints::PRE_SEND_CLOSE)) {
      half_closed_ = true;
    }
    if (!hijacked_ &&
        Has(methods, InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      // Runs this interceptor again at once, with the batch's receive hooks
      // (if it has any), and later batches stop here too.
      hijacked_ = true;
      methods->Hijack();
      return;
    }
    if (Has(methods, InterceptionHookPoints::PRE_RECV_INITIAL_METADATA) ||
        Has(methods, InterceptionHookPoints::PRE_RECV_MESSAGE) ||
        Has(methods, InterceptionHookPoints::PRE_RECV_STATUS)) {
      bool ready;
      {
        MutexLock lock(&mu_);
        ready = result_.has_value();
        if (!ready) waiting_ = methods;
      }
      if (ready) return Deliver(methods);
      MaybeStart();
      return;
    }
    // A batch with nothing to receive: what it sent is taken.
    MaybeStart();
    methods->Proceed();
  }

 private:
  // Sends the call once its request is complete (a unary call: after the
  // client's half-close, which comes with its one message).
  void MaybeStart() {
    if (started_ || !half_closed_) return;
    started_ = true;
    {
      MutexLock lock(&mu_);
      if (result_.has_value()) return;  // refused up front
      cancel_ = std::make_shared<Cancellation>();
      options_.cancel = cancel_;
      if (cancelled_) cancel_->Cancel();
    }
    options_.deadline = DeadlineOf(info_->client_context());
    core_->CallRawAsync(
        info_->method(), std::move(request_), options_,
        [this](CallResult result) { OnResult(std::move(result)); });
  }

  void OnResult(CallResult result) {
    InterceptorBatchMethods* waiting;
    {
      MutexLock lock(&mu_);
      result_ = std::move(result);
      waiting = std::exchange(waiting_, nullptr);
    }
    if (waiting != nullptr) Deliver(waiting);
  }

  // TryCancel holds the ClientContext's lock while interceptors see the
  // cancel, and the call may complete inline when cancelled (its callback
  // may destroy that context): the cancel runs on the mesh's timer thread.
  void OnCancel() {
    std::shared_ptr<Cancellation> cancel;
    {
      MutexLock lock(&mu_);
      cancelled_ = true;
      cancel = cancel_;
    }
    if (cancel == nullptr) return;  // not sent yet: it starts cancelled
    absl::AnyInvocable<void()> run = [cancel] { cancel->Cancel(); };
    core_->RunLater(absl::ZeroDuration(), run);
  }

  // Fills the batch's receive hooks from the result and lets it go on.
  void Deliver(InterceptorBatchMethods* methods) {
    // The result no longer changes once set; these run on one batch at a
    // time (gRPC does not start a receive before the previous one ends).
    CallResult& r = result_unlocked();
    if (Has(methods, InterceptionHookPoints::PRE_RECV_INITIAL_METADATA)) {
      auto* map = methods->GetRecvInitialMetadata();
      for (const auto& [key, value] : r.headers) map->emplace(key, value);
    }
    if (Has(methods, InterceptionHookPoints::PRE_RECV_MESSAGE)) {
      auto* message = static_cast<google::protobuf::MessageLite*>(
          methods->GetRecvMessage());
      if (!r.status.ok() || message_delivered_) {
        methods->FailHijackedRecvMessage();
      } else if (!message->ParseFromString(r.body)) {
        methods->FailHijackedRecvMessage();
        r.status = absl::InternalError(
            absl::StrCat("response of ", info_->method(), " does not parse as ",
                         message->GetTypeName()));
      }
      message_delivered_ = true;
    }
    if (Has(methods, InterceptionHookPoints::PRE_RECV_STATUS)) {
      *methods->GetRecvStatus() = ToGrpcStatus(r.status);
      auto* map = methods->GetRecvTrailingMetadata();
      for (const auto& [key, value] : r.trailers) map->emplace(key, value);
    }
    methods->Proceed();
  }

  CallResult& result_unlocked() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return *result_;
  }

  const std::shared_ptr<ChannelCore> core_;
  ClientRpcInfo* const info_;
  // Touched only by Intercept, which gRPC runs for one batch of a call at a
  // time.
  CallOptions options_;
  std::string request_;
  bool half_closed_ = false;
  bool hijacked_ = false;
  bool started_ = false;
  bool message_delivered_ = false;

  Mutex mu_;
  // The answer (it also owns the metadata strings gRPC's maps refer to, for
  // as long as the ClientContext, which owns this interceptor).
  std::optional<CallResult> result_ ABSL_GUARDED_BY(mu_);
  // A receive batch waiting for the answer.
  InterceptorBatchMethods* waiting_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::shared_ptr<Cancellation> cancel_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

grpc::experimental::Interceptor* NewUnaryInterceptor(
    std::shared_ptr<ChannelCore> core, ClientRpcInfo* info,
    absl::Status refused) {
  return new MeshCallInterceptor(std::move(core), info, std::move(refused));
}

}  // namespace mesh::internal

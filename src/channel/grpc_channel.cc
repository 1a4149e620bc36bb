#include "src/channel/grpc_channel.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message_lite.h>
#include <grpcpp/support/client_interceptor.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "src/base/mutex.h"

namespace mesh::internal {
namespace {

using grpc::experimental::ClientRpcInfo;
using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::InterceptorBatchMethods;

bool Has(InterceptorBatchMethods* methods, InterceptionHookPoints point) {
  return methods->QueryInterceptionHookPoint(point);
}

std::string Flatten(grpc::ByteBuffer* buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (buffer == nullptr || !buffer->Dump(&slices).ok()) return out;
  out.reserve(buffer->Length());
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

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

// Which methods' messages are protobuf messages: the generated stubs' are
// in the generated descriptor pool, a grpc::GenericStub's ByteBuffer calls
// usually are not (their receive buffer is no message to parse into).
class KnownMethods {
 public:
  bool Known(const char* method) {
    {
      MutexLock lock(&mu_);
      auto it = known_.find(method);
      if (it != known_.end()) return it->second;
    }
    // "/pkg.Service/Method" is "pkg.Service.Method" in the pool.
    std::string name = absl::StrReplaceAll(
        absl::string_view(method).substr(method[0] == '/' ? 1 : 0),
        {{"/", "."}});
    bool known =
        google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(
            name) != nullptr;
    MutexLock lock(&mu_);
    // Bounded: a process calls a fixed set of generated methods; a method
    // outside it is looked up again each time rather than remembered.
    if (known || known_.size() < 4096) known_.emplace(method, known);
    return known;
  }

 private:
  Mutex mu_;
  absl::flat_hash_map<std::string, bool> known_ ABSL_GUARDED_BY(mu_);
};

// One hijacked call: a unary call sent through the ChannelCore once its
// request is complete.
class MeshCallInterceptor final : public grpc::experimental::Interceptor {
 public:
  MeshCallInterceptor(std::shared_ptr<ChannelCore> core, ClientRpcInfo* info,
                      absl::Status refused)
      : core_(std::move(core)), info_(info) {
    if (!refused.ok()) result_.emplace().status = std::move(refused);
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
      request_ = Flatten(methods->GetSerializedSendMessage());
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

class MeshInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit MeshInterceptorFactory(std::shared_ptr<ChannelCore> core)
      : core_(std::move(core)) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      ClientRpcInfo* info) override {
    absl::Status refused;
    if (info->type() != ClientRpcInfo::Type::UNARY) {
      refused = absl::UnimplementedError(absl::StrCat(
          "mesh: ", info->method(),
          " streams; a grpc::Channel from Mesh::NewGrpcChannel carries unary "
          "calls only so far"));
    } else if (!known_.Known(info->method())) {
      refused = absl::UnimplementedError(absl::StrCat(
          "mesh: ", info->method(),
          " is no generated protobuf method linked into this program; a "
          "grpc::Channel from Mesh::NewGrpcChannel carries generated stubs' "
          "calls (use mesh::Channel::CallRaw for raw bytes)"));
    }
    return new MeshCallInterceptor(core_, info, std::move(refused));
  }

 private:
  const std::shared_ptr<ChannelCore> core_;
  KnownMethods known_;
};

}  // namespace

std::shared_ptr<grpc::Channel> NewHijackingChannel(
    std::shared_ptr<ChannelCore> core) {
  std::vector<
      std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
      factories;
  factories.push_back(std::make_unique<MeshInterceptorFactory>(core));
  grpc::ChannelArguments args;
  // Every call is hijacked: the channel never resolves or connects. A
  // target of its own keeps gRPC from sharing anything with other channels.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      "passthrough:///mesh-hijacked." + core->target(),
      grpc::InsecureChannelCredentials(), args, std::move(factories));
}

}  // namespace mesh::internal

// The hijacking channel's stream interceptor (grpc_interceptors.h).
#include <google/protobuf/message_lite.h>
#include <grpcpp/support/client_interceptor.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/base/mutex.h"
#include "src/channel/grpc_interceptors.h"
#include "src/channel/stream_call.h"
#include "src/transport/byte_buffer_bytes.h"

namespace mesh::internal {
namespace {

using grpc::experimental::ClientRpcInfo;
using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::InterceptorBatchMethods;

// One hijacked stream (client-, server- or bidi-streaming): a StreamCall
// opened at the initial metadata, gRPC's batches mapped onto it. Each batch
// goes on (Proceed) once what it waits for has happened: its message
// written; the headers (or the end) for a receive of initial metadata; one
// message (or none: the end) for a receive of a message; the close for the
// status. Batches for reads and writes may be intercepted at once on
// different threads.
class MeshStreamInterceptor final : public grpc::experimental::Interceptor,
                                    public StreamObserver {
 public:
  MeshStreamInterceptor(std::shared_ptr<ChannelCore> core, ClientRpcInfo* info)
      : core_(std::move(core)), info_(info) {}

  // Dies with its ClientContext, possibly before the stream ended (a caller
  // that gave up on it): the stream stops calling this, and is cancelled,
  // as gRPC cancels a call whose context goes away.
  ~MeshStreamInterceptor() override {
    std::shared_ptr<StreamCall> stream;
    {
      MutexLock lock(&mu_);
      stream = std::move(stream_);
    }
    if (stream == nullptr) return;
    stream->Detach();
    stream->Cancel();
  }

  void Intercept(InterceptorBatchMethods* methods) override {
    if (Has(methods, InterceptionHookPoints::PRE_SEND_CANCEL)) {
      return OnCancel();  // no Proceed for a cancel
    }
    const bool sends =
        Has(methods, InterceptionHookPoints::PRE_SEND_INITIAL_METADATA) ||
        Has(methods, InterceptionHookPoints::PRE_SEND_MESSAGE) ||
        Has(methods, InterceptionHookPoints::PRE_SEND_CLOSE);
    const bool receives =
        Has(methods, InterceptionHookPoints::PRE_RECV_INITIAL_METADATA) ||
        Has(methods, InterceptionHookPoints::PRE_RECV_MESSAGE) ||
        Has(methods, InterceptionHookPoints::PRE_RECV_STATUS);
    if (sends) return OnSends(methods);
    if (receives || in_hijack_.load(std::memory_order_relaxed)) {
      return OnReceives(methods);
    }
    methods->Proceed();  // nothing to wait for
  }

  // StreamObserver: the StreamCall's events.
  void OnHeaders(const Metadata& headers) override {
    std::vector<Waiter> ready;
    {
      MutexLock lock(&mu_);
      headers_ = headers;
      have_headers_ = true;
      Collect(ready);
    }
    Finish(ready);
  }
  void OnReadDone(bool ok, std::string message) override {
    std::vector<Waiter> ready;
    {
      MutexLock lock(&mu_);
      for (Waiter& w : waiters_) {
        if (w.reading) {
          w.reading = false;
          w.need_message = false;
          w.message_ok = ok;
          w.message = std::move(message);
          break;
        }
      }
      Collect(ready);
    }
    Finish(ready);
  }
  void OnWriteDone(bool ok) override {
    std::vector<Waiter> ready;
    {
      MutexLock lock(&mu_);
      bool taken = false;
      for (Waiter& w : waiters_) {
        if (w.need_write) {
          w.need_write = false;
          w.write_ok = ok;
          taken = true;
          break;
        }
      }
      // The first batch's write, done before its waiter exists.
      if (!taken) early_writes_.push_back(ok);
      Collect(ready);
    }
    Finish(ready);
  }
  void OnClose(const CallResult& result) override {
    std::vector<Waiter> ready;
    {
      MutexLock lock(&mu_);
      result_ = result;
      Collect(ready);
    }
    Finish(ready);
  }

 private:
  // A batch waiting for its events.
  struct Waiter {
    InterceptorBatchMethods* methods;
    bool need_write = false;
    bool write_ok = true;
    bool need_headers = false;
    bool need_message = false;
    bool reading = false;  // its Read is the one outstanding
    bool message_ok = false;
    std::string message;
    bool need_status = false;
  };

  void OnSends(InterceptorBatchMethods* methods) {
    // Everything of the batch is read first: once its write is done,
    // another thread may let it go on, and the call (with this) may end.
    const bool first = !hijacked_.load(std::memory_order_relaxed);
    const bool write = Has(methods, InterceptionHookPoints::PRE_SEND_MESSAGE);
    const bool close = Has(methods, InterceptionHookPoints::PRE_SEND_CLOSE);
    std::string message;
    if (write && methods->GetSerializedSendMessage() != nullptr) {
      message = BytesOf(*methods->GetSerializedSendMessage());
    }
    std::shared_ptr<StreamCall> stream;
    if (Has(methods, InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      CallOptions options;
      for (const auto& [key, value] : *methods->GetSendInitialMetadata()) {
        options.metadata.emplace_back(key, value);
      }
      options.deadline = DeadlineOf(info_->client_context());
      options.cancel = std::make_shared<Cancellation>();
      // May close at once (OnClose here): a malformed call, no endpoints.
      stream = core_->StartStream(info_->method(), options, this);
      bool cancelled;
      {
        MutexLock lock(&mu_);
        stream_ = stream;
        cancelled = cancelled_;
      }
      // A TryCancel while the stream was starting found no stream.
      if (cancelled) stream->Cancel();
    } else {
      MutexLock lock(&mu_);
      stream = stream_;
    }
    if (write) {
      {
        MutexLock lock(&mu_);
        // Registered before the write: its OnWriteDone may come inline.
        if (first) {
          hijack_write_pending_ = true;
        } else {
          Waiter w;
          w.methods = methods;
          w.need_write = true;
          waiters_.push_back(std::move(w));
        }
      }
      if (!stream->Write(std::move(message))) {
        // The stream is over: no OnWriteDone comes. The batch fails its
        // write, here, unless the stream's end let it go already.
        std::vector<Waiter> ready;
        {
          MutexLock lock(&mu_);
          if (first) {
            early_writes_.push_back(false);
          } else {
            for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
              if (it->methods == methods) {
                it->need_write = false;
                it->write_ok = false;
                ready.push_back(std::move(*it));
                waiters_.erase(it);
                break;
              }
            }
          }
        }
        Finish(ready);
        if (!first) return;
      }
    }
    // (A client streams its half-close after its last write's batch.)
    if (close) stream->WritesDone();
    if (first) {
      // Runs this again at once with the batch's receive hooks, if any; the
      // batch goes on from there.
      hijacked_.store(true, std::memory_order_relaxed);
      in_hijack_.store(true, std::memory_order_relaxed);
      methods->Hijack();
      in_hijack_.store(false, std::memory_order_relaxed);
      return;
    }
    if (!write) methods->Proceed();
    // else: on its OnWriteDone (and nothing of this is touched after it).
  }

  void OnReceives(InterceptorBatchMethods* methods) {
    Waiter w;
    w.methods = methods;
    w.need_headers =
        Has(methods, InterceptionHookPoints::PRE_RECV_INITIAL_METADATA);
    w.need_message = Has(methods, InterceptionHookPoints::PRE_RECV_MESSAGE);
    w.need_status = Has(methods, InterceptionHookPoints::PRE_RECV_STATUS);
    std::shared_ptr<StreamCall> read_on;
    std::vector<Waiter> ready;
    {
      MutexLock lock(&mu_);
      if (in_hijack_.load(std::memory_order_relaxed) && hijack_write_pending_) {
        // The first batch wrote a message: it waits for that too.
        hijack_write_pending_ = false;
        w.need_write = true;
        if (!early_writes_.empty()) {
          w.need_write = false;
          w.write_ok = early_writes_.front();
          early_writes_.erase(early_writes_.begin());
        }
      }
      if (w.need_message && !result_) {
        w.reading = true;
        read_on = stream_;
      }
      waiters_.push_back(std::move(w));
      Collect(ready);
    }
    if (read_on != nullptr) read_on->Read();
    Finish(ready);
  }

  // Takes the waiters whose events have all happened (filling them comes
  // in Finish, outside the lock).
  void Collect(std::vector<Waiter>& ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      Waiter& w = *it;
      const bool closed = result_.has_value();
      if (w.need_write && !closed) {
        ++it;
        continue;
      }
      if (w.need_headers && !have_headers_ && !closed) {
        ++it;
        continue;
      }
      if (w.need_message && !closed) {
        ++it;
        continue;
      }
      if (w.need_status && !closed) {
        ++it;
        continue;
      }
      ready.push_back(std::move(w));
      it = waiters_.erase(it);
    }
  }

  // Fills and lets go the batches Collect found ready.
  void Finish(std::vector<Waiter>& ready) {
    for (Waiter& w : ready) {
      std::shared_ptr<StreamCall> cancel;
      {
        MutexLock lock(&mu_);
        if (Fill(w)) cancel = stream_;
      }
      if (cancel != nullptr) cancel->Cancel();
      // Nothing of this is touched after the last batch's Proceed: it may
      // end the call, and the ClientContext that owns this with it.
      w.methods->Proceed();
    }
  }

  // Fills the batch's hooks; true when the stream must be cancelled (a
  // message that does not parse).
  bool Fill(Waiter& w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    bool cancel = false;
    InterceptorBatchMethods* methods = w.methods;
    if (Has(methods, InterceptionHookPoints::PRE_SEND_MESSAGE) &&
        (!w.write_ok || (w.need_write && result_.has_value()))) {
      methods->FailHijackedSendMessage();
    }
    if (w.need_headers && !headers_filled_) {
      headers_filled_ = true;
      auto* map = methods->GetRecvInitialMetadata();
      for (const auto& [key, value] : headers_) map->emplace(key, value);
    }
    if (Has(methods, InterceptionHookPoints::PRE_RECV_MESSAGE)) {
      auto* message = static_cast<google::protobuf::MessageLite*>(
          methods->GetRecvMessage());
      if (w.need_message || !w.message_ok ||
          !message->ParseFromString(w.message)) {
        // None (the stream ended), or one that does not parse: the reader
        // sees the end; the status says why when it does not parse.
        if (!w.need_message && w.message_ok && !parse_error_) {
          parse_error_ = absl::InternalError(
              absl::StrCat("a message of ", info_->method(),
                           " does not parse as ", message->GetTypeName()));
          cancel = true;
        }
        methods->FailHijackedRecvMessage();
      }
    }
    if (w.need_status) {
      absl::Status status =
          parse_error_.has_value() ? *parse_error_ : result_->status;
      *methods->GetRecvStatus() = ToGrpcStatus(status);
      trailers_ = result_->trailers;
      auto* map = methods->GetRecvTrailingMetadata();
      for (const auto& [key, value] : trailers_) map->emplace(key, value);
    }
    return cancel;
  }

  void OnCancel() {
    std::shared_ptr<StreamCall> stream;
    {
      MutexLock lock(&mu_);
      cancelled_ = true;
      stream = stream_;
    }
    if (stream == nullptr) return;  // not started: it starts cancelled
    // As for unary calls: not under TryCancel's lock.
    absl::AnyInvocable<void()> run = [stream] { stream->Cancel(); };
    core_->RunLater(absl::ZeroDuration(), run);
  }

  const std::shared_ptr<ChannelCore> core_;
  ClientRpcInfo* const info_;
  // Set by the thread intercepting the first batch; read by any (gRPC runs
  // a batch's way back through this on its own threads).
  std::atomic<bool> hijacked_{false};
  std::atomic<bool> in_hijack_{false};

  Mutex mu_;
  std::shared_ptr<StreamCall> stream_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool hijack_write_pending_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<bool> early_writes_ ABSL_GUARDED_BY(mu_);
  std::vector<Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  // The strings gRPC's metadata maps refer to, for the context's life.
  Metadata headers_ ABSL_GUARDED_BY(mu_);
  bool have_headers_ ABSL_GUARDED_BY(mu_) = false;
  bool headers_filled_ ABSL_GUARDED_BY(mu_) = false;
  Metadata trailers_ ABSL_GUARDED_BY(mu_);
  std::optional<CallResult> result_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> parse_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

grpc::experimental::Interceptor* NewStreamInterceptor(
    std::shared_ptr<ChannelCore> core, ClientRpcInfo* info) {
  return new MeshStreamInterceptor(std::move(core), info);
}

}  // namespace mesh::internal

// StreamWatch keeps one server-streaming gRPC call open for as long as its
// owner wants it: it starts the call, hands each message to a callback, and
// when the stream ends — with OK or an error — starts a new one after a
// jittered exponential backoff (reset once a stream has delivered a message).
// Statuses listed as final (for Linkerd: InvalidArgument, FailedPrecondition)
// stop it.
//
//   StreamWatch<Update> watch(timers, backoff, hooks);
//   watch.Start();
//   ...
//   watch.Stop();  // no hook runs after this returns
//
// Thread-safe. Hooks are called one at a time, never after Stop() returns.
#ifndef MESH_SRC_DISCOVERY_LINKERD_STREAM_WATCH_H_
#define MESH_SRC_DISCOVERY_LINKERD_STREAM_WATCH_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "mesh/discovery.h"
#include "src/discovery/linkerd/backoff.h"
#include "src/discovery/timer_thread.h"

namespace mesh::internal {

using StreamState = DiscoverySubscription::State;

template <typename Response>
class StreamWatch {
 public:
  struct Hooks {
    // Starts one call: e.g. stub->async()->Get(context, &request, reactor).
    std::function<void(grpc::ClientContext*,
                       grpc::ClientReadReactor<Response>*)>
        start;
    // One message; `first` is true until a message of the stream has been
    // applied. Returns false if the message was rejected: the stream is then
    // cancelled and reopened (after backoff), so that the next stream's
    // first message resynchronizes the state.
    std::function<bool(const Response&, bool first)> on_message;
    // A stream ended; `final` when no other will be started.
    std::function<void(const grpc::Status&, bool final)> on_end;
    // Codes that end the watch instead of reconnecting.
    std::vector<grpc::StatusCode> final_codes;
  };

  StreamWatch(TimerThread* timers, ExponentialBackoff backoff, Hooks hooks)
      : timers_(timers), backoff_(backoff), hooks_(std::move(hooks)) {}
  ~StreamWatch() { Stop(); }

  void Start() { StartAttempt(); }

  // Cancels the open stream and any pending reconnect and waits until no
  // hook is running. Idempotent.
  void Stop() {
    TimerThread::Id timer;
    {
      absl::MutexLock lock(&mu_);
      stopped_ = true;
      if (current_ != nullptr) current_->context.TryCancel();
      timer = timer_;
    }
    if (timer != 0) timers_->Cancel(timer);
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](StreamWatch* w)
             ABSL_NO_THREAD_SAFETY_ANALYSIS { return w->current_ == nullptr; },
        this));
  }

  StreamState State() const {
    absl::MutexLock lock(&mu_);
    return state_;
  }

 private:
  // One call. Deletes itself when gRPC is done with it.
  class Attempt final : public grpc::ClientReadReactor<Response> {
   public:
    explicit Attempt(StreamWatch* watch) : watch_(watch) {}
    void Begin() {
      watch_->hooks_.start(&context, this);
      this->StartRead(&message_);
      this->StartCall();
    }
    void OnReadDone(bool ok) override {
      if (!ok) return;  // the stream ended; OnDone follows
      if (watch_->Deliver(message_, first_)) {
        first_ = false;
      } else {
        context.TryCancel();
      }
      message_.Clear();
      this->StartRead(&message_);
    }
    void OnDone(const grpc::Status& status) override {
      watch_->AttemptDone(status, !first_);
      delete this;
    }

    grpc::ClientContext context;

   private:
    StreamWatch* const watch_;
    Response message_;
    bool first_ = true;
  };

  void StartAttempt() {
    Attempt* attempt;
    {
      absl::MutexLock lock(&mu_);
      timer_ = 0;
      if (stopped_) return;
      attempt = current_ = new Attempt(this);
      ++state_.streams_started;
    }
    // Outside the lock: a Stop() in between only cancels the context, which
    // gRPC honours when the call starts.
    attempt->Begin();
  }

  // True if the message was applied.
  bool Deliver(const Response& message, bool first) {
    absl::MutexLock lock(&mu_);
    if (stopped_) return true;
    state_.connected = true;
    ++state_.messages;
    return hooks_.on_message(message, first);
  }

  void AttemptDone(const grpc::Status& status, bool got_messages) {
    absl::MutexLock lock(&mu_);
    current_ = nullptr;
    state_.connected = false;
    if (got_messages) backoff_.Reset();
    if (stopped_) return;
    bool final = false;
    for (grpc::StatusCode c : hooks_.final_codes)
      final |= status.error_code() == c;
    state_.last_error = status.ok()
                            ? std::string("stream ended by the server")
                            : absl::StrCat("status ", status.error_code(), ": ",
                                           status.error_message());
    hooks_.on_end(status, final);
    if (final) return;
    absl::Duration wait = backoff_.Next(gen_);
    timer_ = timers_->RunAfter(wait, [this] { StartAttempt(); });
  }

  TimerThread* const timers_;
  mutable absl::Mutex mu_;
  ExponentialBackoff backoff_ ABSL_GUARDED_BY(mu_);
  const Hooks hooks_;
  absl::InsecureBitGen gen_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  Attempt* current_ ABSL_GUARDED_BY(mu_) = nullptr;
  TimerThread::Id timer_ ABSL_GUARDED_BY(mu_) = 0;
  StreamState state_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_DISCOVERY_LINKERD_STREAM_WATCH_H_

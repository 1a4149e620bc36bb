#include "src/discovery/common/stream_watch.h"

#include <grpc/support/log.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <thread>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "src/base/destroy_later.h"
#include "src/base/mutex.h"

namespace mesh::internal {

absl::Status ToAbslStatus(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

absl::Status ParseReceived(const grpc::ByteBuffer& bytes,
                           google::protobuf::Message* message) {
  // ProtoBufferReader wants a mutable buffer; a copy shares the slices.
  grpc::ByteBuffer copy(bytes);
  grpc::ProtoBufferReader reader(&copy);
  if (message->ParseFromZeroCopyStream(&reader)) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(
      "could not parse a ", bytes.Length(), "-byte ",
      message->GetDescriptor()->full_name(),
      " (a string that is not valid UTF-8, nesting deeper than protobuf's "
      "limit of 100, or a malformed encoding)"));
}

// What the watch and its open stream share.
class StreamWatch::Core : public std::enable_shared_from_this<Core> {
 public:
  Core(std::shared_ptr<grpc::Channel> channel,
       std::shared_ptr<TimerThread> timers, ExponentialBackoff backoff,
       Hooks hooks)
      : stub(std::move(channel)),
        hooks(std::move(hooks)),
        timers_(std::move(timers)),
        backoff_(backoff) {}

  void StartAttempt();
  // A message of the current stream: on_message's verdict.
  absl::Status Deliver(const grpc::ByteBuffer& message, bool first);
  // `rejection`: why we cancelled the stream (OK if we did not).
  void AttemptDone(const grpc::Status& status, const absl::Status& rejection,
                   bool got_messages);
  void Stop();
  DiscoverySubscription::State State() const {
    MutexLock lock(&mu_);
    return state_;
  }

  grpc::GenericStub stub;
  const Hooks hooks;

 private:
  const std::shared_ptr<TimerThread> timers_;
  mutable Mutex mu_;
  ExponentialBackoff backoff_ ABSL_GUARDED_BY(mu_);
  absl::InsecureBitGen gen_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  Attempt* current_ ABSL_GUARDED_BY(mu_) = nullptr;
  // The thread running a hook now, if any (hooks run outside mu_).
  std::thread::id hook_thread_ ABSL_GUARDED_BY(mu_);
  TimerThread::Id timer_ ABSL_GUARDED_BY(mu_) = 0;
  DiscoverySubscription::State state_ ABSL_GUARDED_BY(mu_);
};

// One call. Deletes itself when gRPC is done with it.
class StreamWatch::Attempt final
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit Attempt(std::shared_ptr<Core> core) : core_(std::move(core)) {}

  void Begin() {
    grpc::Slice slice(core_->hooks.request);
    request_ = grpc::ByteBuffer(&slice, 1);
    core_->stub.PrepareBidiStreamingCall(&context, core_->hooks.method,
                                         grpc::StubOptions(), this);
    // The request is the stream's only message, and closes our side.
    StartWriteLast(&request_, grpc::WriteOptions());
    StartRead(&message_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    // With raw bytes a read fails only when the stream ends: OnDone follows.
    if (!ok) return;
    absl::Status verdict = core_->Deliver(message_, first_);
    message_.Clear();
    if (!verdict.ok()) {
      rejection_ = std::move(verdict);
      context.TryCancel();  // no further read: OnDone follows
      return;
    }
    first_ = false;
    StartRead(&message_);
  }

  void OnDone(const grpc::Status& status) override {
    std::shared_ptr<Core> core = std::move(core_);
    core->AttemptDone(status, rejection_, !first_);
    delete this;
    // Possibly the last owner (a watch stopped from inside a hook): its
    // channel is not released on gRPC's callback thread.
    DestroyLater([core = std::move(core)] {});
  }

  grpc::ClientContext context;

 private:
  std::shared_ptr<Core> core_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer message_;
  absl::Status rejection_;  // set (on gRPC's reading thread) before cancel
  bool first_ = true;
};

StreamWatch::StreamWatch(std::shared_ptr<grpc::Channel> channel,
                         std::shared_ptr<TimerThread> timers,
                         ExponentialBackoff backoff, Hooks hooks)
    : core_(std::make_shared<Core>(std::move(channel), std::move(timers),
                                   backoff, std::move(hooks))) {}

StreamWatch::~StreamWatch() { Stop(); }

void StreamWatch::Start() { core_->StartAttempt(); }

void StreamWatch::Stop() { core_->Stop(); }

DiscoverySubscription::State StreamWatch::State() const {
  return core_->State();
}

void StreamWatch::Core::Stop() {
  TimerThread::Id timer;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    if (current_ != nullptr) current_->context.TryCancel();
    timer = std::exchange(timer_, 0);
    // From inside a hook: the stream is ours to end, and no hook runs
    // after this one (stopped_); it ends on its own, holding the core.
    if (hook_thread_ == std::this_thread::get_id()) return;
  }
  if (timer != 0) timers_->Cancel(timer);
  MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](Core* c)
           ABSL_NO_THREAD_SAFETY_ANALYSIS { return c->current_ == nullptr; },
      this));
}

void StreamWatch::Core::StartAttempt() {
  Attempt* attempt;
  {
    MutexLock lock(&mu_);
    timer_ = 0;
    if (stopped_) return;
    attempt = current_ = new Attempt(shared_from_this());
    ++state_.streams_started;
  }
  // Outside the lock: a Stop() in between only cancels the context, which
  // gRPC honours when the call starts.
  attempt->Begin();
}

absl::Status StreamWatch::Core::Deliver(const grpc::ByteBuffer& message,
                                        bool first) {
  {
    MutexLock lock(&mu_);
    if (stopped_) return absl::OkStatus();
    state_.connected = true;
    ++state_.messages;
    hook_thread_ = std::this_thread::get_id();
  }
  absl::Status verdict = hooks.on_message(message, first);
  MutexLock lock(&mu_);
  hook_thread_ = std::thread::id();
  return verdict;
}

void StreamWatch::Core::AttemptDone(const grpc::Status& status,
                                    const absl::Status& rejection,
                                    bool got_messages) {
  absl::Status why;
  bool final = false;
  absl::Duration wait;
  {
    MutexLock lock(&mu_);
    state_.connected = false;
    // A stream that delivered was healthy, unless it ended on a message we
    // rejected: a server that sends one good message and then a bad one
    // would otherwise be asked again every backoff_min, for ever.
    if (got_messages && rejection.ok()) backoff_.Reset();
    if (stopped_) {
      current_ = nullptr;
      return;
    }
    why = !rejection.ok() ? rejection : ToAbslStatus(status);
    if (rejection.ok()) {
      for (absl::StatusCode c : hooks.final_codes) final |= why.code() == c;
    }
    if (why.ok()) {
      state_.last_error = "stream ended by the server";
    } else {
      state_.last_error = absl::StrCat(absl::StatusCodeToString(why.code()),
                                       ": ", why.message());
    }
    // The one log line of a stream's end; the hooks do not log it again.
    wait = final ? absl::ZeroDuration() : backoff_.Next(gen_);
    std::string next = final ? std::string("not restarting (a final status)")
                             : absl::StrCat("restarting in ",
                                            absl::FormatDuration(absl::Trunc(
                                                wait, absl::Milliseconds(1))));
    if (!rejection.ok()) {
      gpr_log(GPR_ERROR, "mesh: %s: %s; cancelled the stream, %s",
              hooks.name.c_str(), std::string(rejection.message()).c_str(),
              next.c_str());
    } else if (absl::IsResourceExhausted(why)) {
      // gRPC's receive limit: say so, its own message is terse.
      gpr_log(
          GPR_ERROR, "mesh: %s: a message exceeded the receive limit (%s); %s",
          hooks.name.c_str(), std::string(why.message()).c_str(), next.c_str());
    } else if (!why.ok()) {
      gpr_log(GPR_ERROR, "mesh: %s: stream failed: %s; %s", hooks.name.c_str(),
              state_.last_error.c_str(), next.c_str());
    } else {
      gpr_log(GPR_INFO, "mesh: %s: stream ended by the server; %s",
              hooks.name.c_str(), next.c_str());
    }
    hook_thread_ = std::this_thread::get_id();
  }
  hooks.on_end(why, final);
  MutexLock lock(&mu_);
  hook_thread_ = std::thread::id();
  // Until here Stop() waits: no hook runs once it has returned.
  current_ = nullptr;
  if (stopped_ || final) return;
  // Weak: the watch holds the core until Stop has cancelled this task or
  // waited for it, so the core never ends on the timer thread.
  // Past the thread owner's Close: a Mesh that lent its thread hands back
  // only its own tasks when it shuts down, and the source may outlive it.
  timer_ = timers_->RunAfterPastClose(wait, [weak = weak_from_this()] {
    if (std::shared_ptr<Core> core = weak.lock()) core->StartAttempt();
  });
}

}  // namespace mesh::internal

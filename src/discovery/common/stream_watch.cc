#include "src/discovery/common/stream_watch.h"

#include <grpc/support/log.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <utility>

#include "absl/strings/str_cat.h"
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

// One call. Deletes itself when gRPC is done with it.
class StreamWatch::Attempt final
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit Attempt(StreamWatch* watch) : watch_(watch) {}

  void Begin() {
    grpc::Slice slice(watch_->hooks_.request);
    request_ = grpc::ByteBuffer(&slice, 1);
    watch_->stub_.PrepareBidiStreamingCall(&context, watch_->hooks_.method,
                                           grpc::StubOptions(), this);
    // The request is the stream's only message, and closes our side.
    StartWriteLast(&request_, grpc::WriteOptions());
    StartRead(&message_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    // With raw bytes a read fails only when the stream ends: OnDone follows.
    if (!ok) return;
    absl::Status verdict = watch_->Deliver(message_, first_);
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
    watch_->AttemptDone(status, rejection_, !first_);
    delete this;
  }

  grpc::ClientContext context;

 private:
  StreamWatch* const watch_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer message_;
  absl::Status rejection_;  // set (on gRPC's reading thread) before cancel
  bool first_ = true;
};

StreamWatch::StreamWatch(std::shared_ptr<grpc::Channel> channel,
                         std::shared_ptr<TimerThread> timers,
                         ExponentialBackoff backoff, Hooks hooks)
    : stub_(std::move(channel)),
      timers_(std::move(timers)),
      hooks_(std::move(hooks)),
      backoff_(backoff) {}

StreamWatch::~StreamWatch() { Stop(); }

void StreamWatch::Start() { StartAttempt(); }

void StreamWatch::Stop() {
  TimerThread::Id timer;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    if (current_ != nullptr) current_->context.TryCancel();
    timer = timer_;
  }
  if (timer != 0) timers_->Cancel(timer);
  MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](StreamWatch* w)
           ABSL_NO_THREAD_SAFETY_ANALYSIS { return w->current_ == nullptr; },
      this));
}

DiscoverySubscription::State StreamWatch::State() const {
  MutexLock lock(&mu_);
  return state_;
}

void StreamWatch::StartAttempt() {
  Attempt* attempt;
  {
    MutexLock lock(&mu_);
    timer_ = 0;
    if (stopped_) return;
    attempt = current_ = new Attempt(this);
    ++state_.streams_started;
  }
  // Outside the lock: a Stop() in between only cancels the context, which
  // gRPC honours when the call starts.
  attempt->Begin();
}

absl::Status StreamWatch::Deliver(const grpc::ByteBuffer& message, bool first) {
  MutexLock lock(&mu_);
  if (stopped_) return absl::OkStatus();
  state_.connected = true;
  ++state_.messages;
  return hooks_.on_message(message, first);
}

void StreamWatch::AttemptDone(const grpc::Status& status,
                              const absl::Status& rejection,
                              bool got_messages) {
  MutexLock lock(&mu_);
  current_ = nullptr;
  state_.connected = false;
  // A stream that delivered was healthy, unless it ended on a message we
  // rejected: a server that sends one good message and then a bad one
  // would otherwise be asked again every backoff_min, for ever.
  if (got_messages && rejection.ok()) backoff_.Reset();
  if (stopped_) return;
  absl::Status why = !rejection.ok() ? rejection : ToAbslStatus(status);
  bool final = false;
  if (rejection.ok()) {
    for (absl::StatusCode c : hooks_.final_codes) final |= why.code() == c;
  }
  if (why.ok()) {
    state_.last_error = "stream ended by the server";
  } else {
    state_.last_error =
        absl::StrCat(absl::StatusCodeToString(why.code()), ": ", why.message());
  }
  // The one log line of a stream's end; the hooks do not log it again.
  absl::Duration wait = final ? absl::ZeroDuration() : backoff_.Next(gen_);
  std::string next =
      final ? std::string("not restarting (a final status)")
            : absl::StrCat("restarting in ", absl::FormatDuration(absl::Trunc(
                                                 wait, absl::Milliseconds(1))));
  if (!rejection.ok()) {
    gpr_log(GPR_ERROR, "mesh: %s: %s; cancelled the stream, %s",
            hooks_.name.c_str(), std::string(rejection.message()).c_str(),
            next.c_str());
  } else if (absl::IsResourceExhausted(why)) {
    // gRPC's receive limit: say so, its own message is terse.
    gpr_log(
        GPR_ERROR, "mesh: %s: a message exceeded the receive limit (%s); %s",
        hooks_.name.c_str(), std::string(why.message()).c_str(), next.c_str());
  } else if (!why.ok()) {
    gpr_log(GPR_ERROR, "mesh: %s: stream failed: %s; %s", hooks_.name.c_str(),
            state_.last_error.c_str(), next.c_str());
  } else {
    gpr_log(GPR_INFO, "mesh: %s: stream ended by the server; %s",
            hooks_.name.c_str(), next.c_str());
  }
  hooks_.on_end(why, final);
  if (final) return;
  timer_ = timers_->RunAfter(wait, [this] { StartAttempt(); });
}

}  // namespace mesh::internal

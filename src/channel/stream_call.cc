#include "src/channel/stream_call.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/destroy_later.h"

namespace mesh::internal {

StreamCall::StreamCall(StreamObserver* observer,
                       std::shared_ptr<Cancellation> cancel)
    : cancel_(std::move(cancel)), observer_(observer) {}

StreamCall::~StreamCall() = default;

bool StreamCall::closed() const {
  MutexLock lock(&mu_);
  return closed_;
}

bool StreamCall::committed() const {
  MutexLock lock(&mu_);
  return committed_;
}

bool StreamCall::Write(std::string message) {
  Actions a;
  {
    MutexLock lock(&mu_);
    if (end_ || closed_ || writes_done_) {
      return false;
    } else {
      ++total_;
      Touch();
      unsent_bytes_ += message.size();
      if (keep_log_) log_bytes_ += message.size();
      log_.push_back(std::move(message));
      if (keep_log_ && log_bytes_ > ChannelCore::kMaxReplayBytes) {
        StopKeepingLog();
      }
      Pump(a);
      MaybeAck(a);
    }
  }
  Run(a);
  return true;
}

void StreamCall::WritesDone() {
  Actions a;
  {
    MutexLock lock(&mu_);
    writes_done_ = true;
    Pump(a);
  }
  Run(a);
}

void StreamCall::Read() {
  Actions a;
  {
    MutexLock lock(&mu_);
    if (closed_ || read_wanted_) return;  // after OnClose, or a misuse
    read_wanted_ = true;
    if (!ahead_.empty()) {
      Deliver(a);
      Pump(a);
    }
    MaybeEnd(a);
  }
  Run(a);
}

void StreamCall::Cancel() {
  cancel_->Cancel();
  // An ended stream whose messages read ahead wait for the user: the user
  // gave up on them.
  DiscardUnread();
}

void StreamCall::Detach() {
  MutexLock lock(&mu_);
  observer_ = nullptr;
  const std::thread::id self = std::this_thread::get_id();
  auto others_done = [this, self]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (const std::thread::id& id : in_events_) {
      if (id != self) return false;
    }
    return true;
  };
  mu_.Await(absl::Condition(&others_done));
}

void StreamCall::DiscardUnread() {
  Actions a;
  {
    MutexLock lock(&mu_);
    ahead_.clear();
    ahead_bytes_ = 0;
    MaybeEnd(a);
  }
  Run(a);
}

void StreamCall::Open(std::shared_ptr<ChannelCore> core,
                      std::unique_ptr<ChannelCore::Call> call,
                      ChannelCore::Attempt attempt, Transport& transport,
                      const Endpoint& endpoint, TransportRequest request) {
  uint64_t number;
  {
    MutexLock lock(&mu_);
    number = ++attempt_number_;
    if (current_ != nullptr) retired_.push_back(std::move(current_));
    open_ = true;
    if (!keep_log_) call->replayable = false;
    deadline_ = call->deadline;
    timers_ = core->timers();
    idle_timeout_ = call->route->idle_timeout;
    last_activity_ = absl::Now();
    ArmIdleTimer(idle_timeout_);
    call_ = std::move(call);
    attempt_.emplace(std::move(attempt));
    core_ = std::move(core);
    self_ = shared_from_this();
    written_ = 0;
    unsent_bytes_ = 0;
    for (const std::string& m : log_) unsent_bytes_ += m.size();
    write_in_flight_ = false;
    writes_done_sent_ = false;
    read_in_flight_ = false;
    read_end_ = false;
    committed_ = false;
  }
  // The transport may call back (even OnClose, and then a retry may open
  // the next attempt) before this returns: the stream is kept below only
  // if it is still the open attempt's.
  std::unique_ptr<TransportStream> stream =
      transport.StartStream(endpoint, std::move(request), this);
  Actions a;
  TransportStream* idle = nullptr;
  {
    MutexLock lock(&mu_);
    if (number != attempt_number_ || !open_) {
      retired_.push_back(std::move(stream));
    } else {
      current_ = std::move(stream);
      if (attempt_ && attempt_->idle_expired) {
        idle = current_.get();  // idle before it was even started
      } else {
        Pump(a);  // reads ahead from the start
      }
    }
  }
  // (Streams stay in current_ or retired_ until this is destroyed.)
  if (idle != nullptr) return idle->Cancel();
  Run(a);
}

void StreamCall::Pump(Actions& a) {
  if (!open_ || current_ == nullptr) return;
  a.stream = current_.get();
  if (!write_in_flight_ && written_ < total_ && written_ >= log_base_) {
    write_in_flight_ = true;
    std::string& next = log_[written_ - log_base_];
    in_flight_bytes_ = next.size();
    // A message kept for replay is copied; otherwise it is sent as it is.
    a.write = keep_log_ ? next : std::move(next);
  }
  if (writes_done_ && !writes_done_sent_ && !write_in_flight_ &&
      written_ == total_) {
    writes_done_sent_ = true;
    a.writes_done = true;
  }
  if (!read_in_flight_ && !read_end_ && ahead_bytes_ < kWindowBytes) {
    read_in_flight_ = true;
    a.read = true;
  }
}

void StreamCall::MaybeAck(Actions& a) {
  if (acked_ < total_ &&
      (unsent_bytes_ <= kWindowBytes || written_ == total_)) {
    acked_ = total_;
    AddUserEvent(a);
    a.user_write_done = true;
  }
}

void StreamCall::MaybeEnd(Actions& a) {
  if (!end_ || closed_) return;
  if (!ahead_.empty()) {  // the user reads them first
    ArmDrainDeadline();
    return;
  }
  closed_ = true;
  // What the user waits for ends too.
  if (acked_ < total_) {
    acked_ = total_;
    AddUserEvent(a);
    a.user_write_done = false;
  }
  if (read_wanted_) {
    read_wanted_ = false;
    AddUserEvent(a);
    a.user_read_end = true;
  }
  CallResult result = std::move(*end_);
  end_.reset();
  if (callbacks_ - a.user_events > 0) {
    pending_close_ = std::move(result);  // the last event running ends it
  } else {
    Register(a);
    a.close = std::move(result);
  }
}

void StreamCall::Register(Actions& a) {
  if (a.registered) return;
  a.registered = true;
  a.observer = observer_;
  in_events_.push_back(std::this_thread::get_id());
}

void StreamCall::AddUserEvent(Actions& a) {
  Register(a);
  ++callbacks_;
  ++a.user_events;
}

void StreamCall::ArmDrainDeadline() {
  if (drain_timer_ || timers_ == nullptr ||
      deadline_ == absl::InfiniteFuture()) {
    return;
  }
  drain_timer_ = true;
  absl::AnyInvocable<void()> expire =
      [weak = std::weak_ptr<StreamCall>(shared_from_this())] {
        if (auto self = weak.lock()) self->DrainDeadlinePassed();
      };
  // (A closed timer thread means the Mesh is going: the stream is
  // cancelled by its shutdown.)
  timers_->TryRunAfter(std::max(deadline_ - absl::Now(), absl::ZeroDuration()),
                       expire);
}

void StreamCall::DrainDeadlinePassed() {
  Actions a;
  {
    MutexLock lock(&mu_);
    if (!end_ || closed_ || ahead_.empty()) return;
    end_->status = absl::DeadlineExceededError(
        absl::StrCat("deadline passed with ", ahead_.size(),
                     " message(s) of the stream unread"));
    ahead_.clear();
    ahead_bytes_ = 0;
    MaybeEnd(a);
  }
  Run(a);
}

void StreamCall::ArmIdleTimer(absl::Duration after) {
  if (idle_timeout_ == absl::InfiniteDuration() || timers_ == nullptr) return;
  absl::AnyInvocable<void()> check =
      [weak = std::weak_ptr<StreamCall>(shared_from_this()),
       number = attempt_number_] {
        if (auto self = weak.lock()) self->IdleTimerFired(number);
      };
  // (A closed timer thread means the Mesh is going: the stream is
  // cancelled by its shutdown.)
  timers_->TryRunAfter(after, check);
}

void StreamCall::IdleTimerFired(uint64_t attempt_number) {
  TransportStream* stream = nullptr;
  {
    MutexLock lock(&mu_);
    if (attempt_number != attempt_number_ || !open_ || !attempt_) return;
    const absl::Duration idle = absl::Now() - last_activity_;
    if (idle < idle_timeout_) {  // something happened since: look again then
      ArmIdleTimer(idle_timeout_ - idle);
      return;
    }
    attempt_->idle_expired = true;
    stream = current_.get();
    if (stream == nullptr) return;  // Open cancels it once it has it
  }
  // (Streams stay in current_ or retired_ until this is destroyed.)
  stream->Cancel();
}

void StreamCall::Deliver(Actions& a) {
  AddUserEvent(a);
  ahead_bytes_ -= ahead_.front().size();
  a.user_message = std::move(ahead_.front());
  ahead_.pop_front();
  read_wanted_ = false;
}

void StreamCall::StopKeepingLog() {
  if (!keep_log_) return;
  keep_log_ = false;
  if (call_ != nullptr) call_->replayable = false;
  // Between attempts the call (and its retry) is elsewhere: a retry may
  // still come, and replays the whole log once (Open makes it the last).
  if (!open_) return;
  // Sent messages are not needed any more.
  while (!log_.empty() && log_base_ < written_) {
    log_.pop_front();
    ++log_base_;
  }
}

void StreamCall::OnHeaders(Metadata headers) {
  Actions a;
  {
    MutexLock lock(&mu_);
    Touch();
    if (!committed_) {
      committed_ = true;
      if (attempt_) attempt_->handle.SampleLatency();
      StopKeepingLog();
    }
    if (!headers_given_ && !closed_ && !end_) {
      headers_given_ = true;
      AddUserEvent(a);
      a.user_headers = std::move(headers);
    }
  }
  Run(a);
}

void StreamCall::OnReadDone(bool ok, std::string message) {
  Actions a;
  {
    MutexLock lock(&mu_);
    read_in_flight_ = false;
    if (!ok) {
      read_end_ = true;  // OnClose follows
    } else {
      Touch();
      if (!committed_) {
        committed_ = true;
        if (attempt_) attempt_->handle.SampleLatency();
        StopKeepingLog();
      }
      ahead_bytes_ += message.size();
      ahead_.push_back(std::move(message));
      if (read_wanted_) Deliver(a);
      Pump(a);
    }
  }
  Run(a);
}

void StreamCall::OnWriteDone(bool ok) {
  Actions a;
  {
    MutexLock lock(&mu_);
    write_in_flight_ = false;
    if (ok) {
      ++written_;
      unsent_bytes_ -= in_flight_bytes_;
      in_flight_bytes_ = 0;
      if (!keep_log_) {
        while (!log_.empty() && log_base_ < written_) {
          log_.pop_front();
          ++log_base_;
        }
      }
      Pump(a);
      MaybeAck(a);
    }
    // A failed write: OnClose follows, and decides.
  }
  Run(a);
}

void StreamCall::OnClose(TransportResponse response) {
  std::unique_ptr<ChannelCore::Call> call;
  std::optional<ChannelCore::Attempt> attempt;
  std::shared_ptr<ChannelCore> core;
  std::shared_ptr<StreamCall> self;
  {
    MutexLock lock(&mu_);
    open_ = false;
    call = std::move(call_);
    attempt = std::move(attempt_);
    attempt_.reset();
    core = std::move(core_);
    self = std::move(self_);
  }
  // Retries (opening another attempt here) or ends the call (Close).
  core->OnAttemptDone(call, *attempt, std::move(response));
  // A finished call, and this, may hold the last references to a channel:
  // not released on a transport's thread.
  DestroyLater([call = std::move(call), attempt = std::move(attempt),
                core = std::move(core), self = std::move(self)] {});
}

void StreamCall::Close(CallResult result) {
  Actions a;
  {
    MutexLock lock(&mu_);
    if (end_ || closed_) return;
    result.body.clear();
    end_ = std::move(result);
    // A stream the user cancelled ends at once.
    if (cancel_->cancelled()) {
      ahead_.clear();
      ahead_bytes_ = 0;
    }
    MaybeEnd(a);
  }
  Run(a);
}

void StreamCall::Run(Actions& a) {
  if (a.stream != nullptr) {
    if (a.write) a.stream->Write(std::move(*a.write));
    if (a.writes_done) a.stream->WritesDone();
    if (a.read) a.stream->Read();
  }
  if (!a.registered) return;
  StreamObserver* observer = a.observer;
  if (observer != nullptr) {
    if (a.user_headers) observer->OnHeaders(*a.user_headers);
    if (a.user_message) observer->OnReadDone(true, std::move(*a.user_message));
    if (a.user_write_done) observer->OnWriteDone(*a.user_write_done);
    if (a.user_read_end) observer->OnReadDone(false, std::string());
  }
  std::optional<CallResult> close = std::move(a.close);
  if (a.user_events > 0) {
    MutexLock lock(&mu_);
    callbacks_ -= a.user_events;
    if (callbacks_ == 0 && pending_close_) {
      close = std::move(pending_close_);
      pending_close_.reset();
    }
  }
  // (This thread stays in in_events_ until the close has run: Detach waits
  // for it.)
  if (close && observer != nullptr) observer->OnClose(*close);
  {
    MutexLock lock(&mu_);
    auto it = std::find(in_events_.begin(), in_events_.end(),
                        std::this_thread::get_id());
    if (it != in_events_.end()) in_events_.erase(it);
  }
}

}  // namespace mesh::internal

// StreamCall: the state of one stream (Channel::StartStream, and a stream
// of a grpc::Channel from Mesh::NewGrpcChannel) between its user and the
// transport streams of its attempts.
//
// ChannelCore routes, picks, waits and retries the stream as a call; each
// attempt opens a transport stream here (Open), and its close goes back to
// ChannelCore, which retries it — only if nothing was received, replaying
// the messages written so far — or ends it (Close). Writes are kept in a
// log for replay until the stream commits (first headers or message) or
// the log passes ChannelCore::kMaxReplayBytes. As gRPC's own streams do, a
// write is done for its user once it is buffered (while at most
// kWindowBytes wait for the transport), and messages are read ahead of the
// user up to kWindowBytes: a stream keeps its pipeline full without a
// thread switch per message. Its end reaches the user after the messages
// read ahead, unless it was cancelled.
//
// Thread-safe.
#ifndef MESH_SRC_CHANNEL_STREAM_CALL_H_
#define MESH_SRC_CHANNEL_STREAM_CALL_H_

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mesh/cancellation.h"
#include "mesh/channel.h"
#include "mesh/stream.h"
#include "mesh/transport.h"
#include "src/base/mutex.h"
#include "src/base/timer_thread.h"
#include "src/channel/call_state.h"
#include "src/channel/channel_core.h"

namespace mesh::internal {

class StreamCall final : public TransportStreamObserver,
                         public std::enable_shared_from_this<StreamCall> {
 public:
  StreamCall(StreamObserver* observer, std::shared_ptr<Cancellation> cancel);
  ~StreamCall() override;

  const std::shared_ptr<Cancellation>& cancellation() const { return cancel_; }

  // What may wait for the transport to take it, and be read ahead of the
  // user (a larger message still goes, alone).
  static constexpr size_t kWindowBytes = 64 * 1024;

  // The user's side (ClientStream). Write returns false, and no event
  // follows, once the stream is over.
  bool Write(std::string message);
  void WritesDone();
  void Read();
  void Cancel();
  bool closed() const;
  // Drops the messages read ahead that the user has not read, so that an
  // ended stream's end reaches the user now.
  void DiscardUnread();
  // Forgets the observer: no event reaches it after this returns (it waits
  // for those running on other threads). For an observer that may go away
  // before OnClose (the interceptor dies with its ClientContext).
  void Detach();

  // ChannelCore's side. Opens an attempt on `transport`; `call` and
  // `attempt` come back to `core` (OnAttemptDone) when it closes.
  void Open(std::shared_ptr<ChannelCore> core,
            std::unique_ptr<ChannelCore::Call> call,
            ChannelCore::Attempt attempt, Transport& transport,
            const Endpoint& endpoint, TransportRequest request);
  // Whether the last attempt received anything (it may not be retried).
  bool committed() const;
  // The stream's end (its call's `done`).
  void Close(CallResult result);

  // TransportStreamObserver, for the open attempt.
  void OnHeaders(Metadata headers) override;
  void OnReadDone(bool ok, std::string message) override;
  void OnWriteDone(bool ok) override;
  void OnClose(TransportResponse response) override;

 private:
  // What to do once the lock is released: transport operations, then the
  // user's events, then (when due) the user's OnClose.
  struct Actions {
    TransportStream* stream = nullptr;
    std::optional<std::string> write;
    bool writes_done = false;
    bool read = false;
    std::optional<Metadata> user_headers;
    std::optional<std::string> user_message;  // OnReadDone(true, ...)
    bool user_read_end = false;               // OnReadDone(false)
    std::optional<bool> user_write_done;
    int user_events = 0;  // counted in callbacks_
    std::optional<CallResult> close;
    // The observer, and whether this thread is in in_events_: set with the
    // first user event or the close.
    StreamObserver* observer = nullptr;
    bool registered = false;
  };

  // Adds the transport operations now due.
  void Pump(Actions& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a user event about to run.
  void AddUserEvent(Actions& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the observer for `a` and marks this thread as running its events.
  void Register(Actions& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Delivers a message read ahead to a waiting Read.
  void Deliver(Actions& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Acknowledges the user's write once it fits in the window.
  void MaybeAck(Actions& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The stream's end to the user, once nothing read ahead is left for it
  // (or it cancelled): pending writes and reads fail, then OnClose.
  void MaybeEnd(Actions& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Once the stream has committed or the log grew too big: no replay.
  void StopKeepingLog() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Run(Actions& a) ABSL_LOCKS_EXCLUDED(mu_);
  // With unread messages at the end: when the deadline passes, they are
  // dropped and the stream ends DEADLINE_EXCEEDED, as gRPC's own stream
  // does (its status waits for the messages to be read).
  void ArmDrainDeadline() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DrainDeadlinePassed();
  // The route's idle timeout, while an attempt is open: when nothing was
  // sent or received for that long, the attempt is cancelled and the call
  // ends DEADLINE_EXCEEDED naming it (ChannelCore, never retried).
  void ArmIdleTimer(absl::Duration after) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Something was sent or received: the idle clock starts over (read only
  // when there is an idle timeout: a message costs no clock read otherwise).
  void Touch() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (idle_timeout_ != absl::InfiniteDuration()) last_activity_ = absl::Now();
  }
  void IdleTimerFired(uint64_t attempt_number);
  const std::shared_ptr<Cancellation> cancel_;

  mutable Mutex mu_;
  StreamObserver* observer_ ABSL_GUARDED_BY(mu_);  // null once detached
  // The threads running user events (one entry per Actions), for Detach.
  std::vector<std::thread::id> in_events_ ABSL_GUARDED_BY(mu_);
  // The stream's deadline and the Mesh's timers (set by Open).
  absl::Time deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  std::shared_ptr<TimerThread> timers_ ABSL_GUARDED_BY(mu_);
  bool drain_timer_ ABSL_GUARDED_BY(mu_) = false;
  // The route's idle timeout (infinite: none) and the last message sent or
  // received (or headers).
  absl::Duration idle_timeout_ ABSL_GUARDED_BY(mu_) = absl::InfiniteDuration();
  absl::Time last_activity_ ABSL_GUARDED_BY(mu_);
  // The open attempt: its number, its transport stream (earlier attempts'
  // are kept in retired_ until this is destroyed: an operation may still be
  // running on one), its call and attempt, the core, and this (the
  // transport refers to us).
  uint64_t attempt_number_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<TransportStream> current_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<TransportStream>> retired_ ABSL_GUARDED_BY(mu_);
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<ChannelCore::Call> call_ ABSL_GUARDED_BY(mu_);
  std::optional<ChannelCore::Attempt> attempt_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<ChannelCore> core_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<StreamCall> self_ ABSL_GUARDED_BY(mu_);

  // The user's messages: log_ holds those from number log_base_ on.
  std::deque<std::string> log_ ABSL_GUARDED_BY(mu_);
  size_t log_base_ ABSL_GUARDED_BY(mu_) = 0;
  size_t total_ ABSL_GUARDED_BY(mu_) = 0;      // messages written by the user
  size_t acked_ ABSL_GUARDED_BY(mu_) = 0;      // OnWriteDone(true) given
  size_t log_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // while keeping the log
  bool keep_log_ ABSL_GUARDED_BY(mu_) = true;  // every message since the 1st
  bool writes_done_ ABSL_GUARDED_BY(mu_) = false;

  // The open attempt's progress.
  size_t written_ ABSL_GUARDED_BY(mu_) = 0;  // messages it has sent
  // Bytes of the messages from written_ on (the transport has not taken
  // them), and the size of the one it is taking.
  size_t unsent_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t in_flight_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool writes_done_sent_ ABSL_GUARDED_BY(mu_) = false;
  bool read_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool read_end_ ABSL_GUARDED_BY(mu_) = false;  // a Read found the end
  bool committed_ ABSL_GUARDED_BY(mu_) = false;

  // The user's side.
  bool read_wanted_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::string> ahead_ ABSL_GUARDED_BY(mu_);  // read ahead
  size_t ahead_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // The stream's end, kept while the user has messages read ahead to read.
  std::optional<CallResult> end_ ABSL_GUARDED_BY(mu_);
  bool headers_given_ ABSL_GUARDED_BY(mu_) = false;
  int callbacks_ ABSL_GUARDED_BY(mu_) = 0;    // user events running
  bool closed_ ABSL_GUARDED_BY(mu_) = false;  // end_ given to the user
  std::optional<CallResult> pending_close_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_STREAM_CALL_H_

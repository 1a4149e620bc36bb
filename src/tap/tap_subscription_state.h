// TapSubscriptionState: one tap subscription's bounded mailbox — its match,
// its limit, and the buffer of events that requests push and its reader
// takes — and the compact events it buffers (TapQueuedEvent, sharing the
// exchange's TapExchangeHead), turned into TapEvents by the reader.
//
// Thread-safe: requests push from any thread; one reader at a time.
#ifndef MESH_SRC_TAP_TAP_SUBSCRIPTION_STATE_H_
#define MESH_SRC_TAP_TAP_SUBSCRIPTION_STATE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "mesh/tap.h"
#include "mesh/transport.h"
#include "src/base/mutex.h"
#include "src/tap/tap_match.h"
#include "src/tap/tap_redactor.h"

namespace mesh::internal {

struct TapExchangeHead {
  std::string destination;
  std::map<std::string, std::string> destination_labels;
  std::map<std::string, std::string> route_labels;
  std::string method;
  std::string scheme;
  std::string authority;
  std::string path;
  uint32_t attempt = 1;
  bool hedge = false;
  // The request's headers, redacted; empty unless a claiming subscription
  // extracts headers. The pseudo-headers are added by the reader.
  Metadata headers;
};

// Extracted (redacted) response headers (without `:status`) and trailers.
struct TapResponseMetadata {
  Metadata headers;
  Metadata trailers;
};

// An event as buffered: the parts shared with the exchange's other events
// by pointer. Next() makes the TapEvent, on the reader's time.
struct TapQueuedEvent {
  TapEvent::Kind kind = TapEvent::Kind::kRequestInit;
  uint64_t stream = 0;
  std::shared_ptr<const TapExchangeHead> head;
  std::shared_ptr<const TapResponseMetadata> metadata;  // null: none
  absl::Duration since_request_init;
  uint32_t http_status = 0;
  absl::Duration since_response_init;
  uint64_t response_bytes = 0;
  uint64_t response_messages = 0;
  std::optional<uint32_t> grpc_status;
  std::optional<uint32_t> reset_error_code;
};

// One subscription's state, shared by its handle, the hub's list and the
// exchanges it claimed. The limit and the in-flight count live in one atomic
// word (claimed << 32 | in flight) so that "limit reached and nothing in
// flight" is never seen between a claim and its in-flight increment.
//
// Two queues: requests push into `events_` under `mu_`; the reader moves
// the whole of it into `local_` at once and pops from there under
// `reader_mu_` alone, so pushes and pops rarely meet on a lock. `held_`
// counts both, for the bound. Lock order: reader_mu_, then mu_.
class TapSubscriptionState {
 public:
  TapSubscriptionState(uint32_t base, CompiledTapMatch match,
                       const TapOptions& options,
                       std::shared_ptr<const TapHeaderRedactor> redactor,
                       std::function<void()> on_ready)
      : base_(base),
        match_(std::move(match)),
        limit_(options.limit),
        buffer_(options.buffer),
        extract_headers_(options.extract_headers),
        redactor_(std::move(redactor)),
        on_ready_(std::move(on_ready)) {}

  bool extract_headers() const { return extract_headers_; }
  const CompiledTapMatch& match() const { return match_; }
  const TapHeaderRedactor& redactor() const { return *redactor_; }

  bool HasLimitLeft() const {
    return (state_.load(std::memory_order_relaxed) >> 32) < limit_;
  }

  // Takes one unit of the limit; `*stream` is its index (0..limit-1).
  bool TryClaim(uint64_t* stream) {
    uint64_t s = state_.load(std::memory_order_relaxed);
    while ((s >> 32) < limit_) {
      if (state_.compare_exchange_weak(s, s + kOneClaim + 1,
                                       std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
        *stream = s >> 32;
        return true;
      }
    }
    return false;
  }

  // Linkerd's try-send into a full buffer, before any event is built: if
  // the buffer is full, counts one dropped event and returns true, having
  // taken no lock. A stale count can only drop early (pops only lower it).
  // A subscriber that never reads costs a request this and its claim.
  bool DropIfFull() {
    if (held_.load(std::memory_order_acquire) < buffer_) return false;
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  // PushLast for an event dropped by DropIfFull: one claimed exchange is
  // over. Lock-free unless this ends the subscription, whose waiting reader
  // (or on_ready) must then hear of it.
  void EndDropped() {
    const uint64_t after = state_.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if ((after >> 32) < limit_ || (after & 0xffffffffu) != 0) return;
    bool ready;
    {
      // Taken after the change, so a Next that saw the subscription still
      // running is waiting on cv_ by now.
      MutexLock lock(&mu_);
      ready = std::exchange(armed_, false);
      cv_.SignalAll();  // under the lock: see Push
    }
    if (ready) on_ready_();
  }

  // Buffers `event`, or drops and counts it if the buffer is full.
  void Push(TapQueuedEvent&& event) {
    bool pushed;
    bool ready = false;
    {
      MutexLock lock(&mu_);
      pushed = PushLocked(std::move(event));
      if (pushed) ready = std::exchange(armed_, false);
      // Signalled under the lock, which the handle's Close takes before
      // the state can go: the signal is ordered before the state's end
      // without relying on the claim's reference alone (whose last drop
      // ThreadSanitizer cannot pair across threads with libstdc++ 12; see
      // tests/tsan.supp).
      if (pushed) cv_.Signal();
    }
    if (ready) on_ready_();
  }

  // Push, and one claimed exchange is over (the subscription may be done).
  void PushLast(TapQueuedEvent&& event) {
    bool ready;
    {
      MutexLock lock(&mu_);
      bool pushed = PushLocked(std::move(event));
      // Under the lock, so a waiting Next cannot miss the change.
      state_.fetch_sub(1, std::memory_order_acq_rel);
      ready = (pushed || OverLocked()) && std::exchange(armed_, false);
      cv_.SignalAll();  // under the lock: see Push
    }
    if (ready) on_ready_();
  }

  std::optional<TapEvent> Next(absl::Duration timeout) {
    TapQueuedEvent queued;
    {
      MutexLock reader(&reader_mu_);
      if (local_.empty()) {
        MutexLock lock(&mu_);
        WaitForEventsLocked(timeout);
        local_.swap(events_);
        // Nothing to read: the next event (or the end) calls on_ready.
        if (local_.empty() && on_ready_ && !closed_) armed_ = true;
      }
      if (local_.empty()) return std::nullopt;
      queued = std::move(local_.front());
      local_.pop_front();
      held_.fetch_sub(1, std::memory_order_acq_rel);
    }
    return Materialize(queued);
  }

  bool done() const {
    MutexLock lock(&mu_);
    return held_.load(std::memory_order_acquire) == 0 && OverLocked();
  }

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

  // The handle is gone: later events are discarded uncounted.
  void Close() {
    std::deque<TapQueuedEvent> discard_local;
    std::deque<TapQueuedEvent> discard;
    MutexLock reader(&reader_mu_);
    MutexLock lock(&mu_);
    closed_ = true;
    armed_ = false;
    discard_local.swap(local_);
    discard.swap(events_);
  }

 private:
  static constexpr uint64_t kOneClaim = uint64_t{1} << 32;

  bool PushLocked(TapQueuedEvent&& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (closed_) return false;
    // Pops only lower held_: a stale value can only drop early, never
    // overfill.
    if (held_.load(std::memory_order_acquire) >= buffer_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    events_.push_back(std::move(event));
    held_.fetch_add(1, std::memory_order_acq_rel);
    return true;
  }

  // Waits until an event is buffered or the subscription is over, for at
  // most `timeout` (none when zero; no bound from a year on).
  void WaitForEventsLocked(absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (timeout <= absl::ZeroDuration()) return;
    const bool unbounded = timeout >= absl::Hours(24 * 365);
    const auto deadline =
        std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
    while (events_.empty() && !OverLocked()) {
      if (unbounded) {
        cv_.Wait(&mu_);
      } else if (cv_.WaitUntil(&mu_, deadline)) {
        return;
      }
    }
  }

  bool OverLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    uint64_t s = state_.load(std::memory_order_acquire);
    return (s >> 32) >= limit_ && (s & 0xffffffffu) == 0;
  }

  TapEvent Materialize(const TapQueuedEvent& q) const {
    TapEvent e;
    e.kind = q.kind;
    e.base = base_;
    e.stream = q.stream;
    const TapExchangeHead& head = *q.head;
    e.destination = head.destination;
    e.destination_labels = head.destination_labels;
    e.route_labels = head.route_labels;
    switch (q.kind) {
      case TapEvent::Kind::kRequestInit:
        e.method = head.method;
        e.scheme = head.scheme;
        e.authority = head.authority;
        e.path = head.path;
        e.attempt = head.attempt;
        e.hedge = head.hedge;
        if (extract_headers_) {
          e.headers.reserve(4 + head.headers.size());
          e.headers = {{":method", head.method},
                       {":scheme", head.scheme},
                       {":authority", head.authority},
                       {":path", head.path}};
          e.headers.insert(e.headers.end(), head.headers.begin(),
                           head.headers.end());
        }
        break;
      case TapEvent::Kind::kResponseInit:
        e.since_request_init = q.since_request_init;
        e.http_status = q.http_status;
        if (q.metadata != nullptr) {
          e.headers.reserve(1 + q.metadata->headers.size());
          if (q.http_status != 0) {
            e.headers.emplace_back(":status", std::to_string(q.http_status));
          }
          e.headers.insert(e.headers.end(), q.metadata->headers.begin(),
                           q.metadata->headers.end());
        }
        break;
      case TapEvent::Kind::kResponseEnd:
        e.since_request_init = q.since_request_init;
        e.since_response_init = q.since_response_init;
        e.response_bytes = q.response_bytes;
        e.response_messages = q.response_messages;
        e.grpc_status = q.grpc_status;
        e.reset_error_code = q.reset_error_code;
        if (q.metadata != nullptr) e.trailers = q.metadata->trailers;
        break;
    }
    return e;
  }

  const uint32_t base_;
  const CompiledTapMatch match_;
  const uint32_t limit_;
  const size_t buffer_;
  const bool extract_headers_;
  const std::shared_ptr<const TapHeaderRedactor> redactor_;
  const std::function<void()> on_ready_;  // may be empty

  std::atomic<uint64_t> state_{0};  // claimed << 32 | in flight
  std::atomic<uint64_t> dropped_{0};
  std::atomic<size_t> held_{0};  // in events_ and local_
  // Every tapped call pushes under mu_, so the reader waits on a CondVar,
  // woken by a push, not at every Unlock (mutex.h).
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<TapQueuedEvent> events_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // A reader found nothing: the next push (or the end) calls on_ready_.
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
  Mutex reader_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::deque<TapQueuedEvent> local_ ABSL_GUARDED_BY(reader_mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_TAP_TAP_SUBSCRIPTION_STATE_H_

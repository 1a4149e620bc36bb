#include "src/tap/tap_hub.h"

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/base/mutex.h"
#include "src/base/snapshot_cell.h"

namespace mesh::internal {

// Sensitive header names: kTapSensitiveHeaders plus the hub's extra list.
class TapHeaderRedactor {
 public:
  explicit TapHeaderRedactor(std::vector<std::string> extra) {
    for (const char* name : kTapSensitiveHeaders) names_.emplace_back(name);
    for (std::string& name : extra) {
      names_.push_back(absl::AsciiStrToLower(name));
    }
  }

  // Appends `in` to `out`, sensitive values replaced by kTapRedacted.
  void Append(const Metadata* in, Metadata* out) const {
    if (in == nullptr) return;
    for (const auto& [name, value] : *in) {
      out->emplace_back(name, Sensitive(name) ? kTapRedacted : value);
    }
  }

 private:
  bool Sensitive(absl::string_view name) const {
    for (const std::string& s : names_) {
      if (absl::EqualsIgnoreCase(s, name)) return true;
    }
    return false;
  }

  std::vector<std::string> names_;  // lower case
};

struct TapExchangeHead {
  std::string destination;
  std::map<std::string, std::string> destination_labels;
  std::map<std::string, std::string> route_labels;
  std::string method;
  std::string scheme;
  std::string authority;
  std::string path;
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
  uint64_t response_bytes = 0;
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

  // Buffers `event`, or drops and counts it if the buffer is full.
  void Push(TapQueuedEvent&& event) {
    bool pushed;
    bool ready = false;
    {
      MutexLock lock(&mu_);
      pushed = PushLocked(std::move(event));
      if (pushed) ready = std::exchange(armed_, false);
    }
    if (pushed) cv_.Signal();
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
    }
    cv_.SignalAll();
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
    const absl::Time deadline = absl::Now() + timeout;
    while (events_.empty() && !OverLocked()) {
      if (unbounded) {
        cv_.Wait(&mu_);
        continue;
      }
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return;
      cv_.WaitWithTimeout(&mu_, left);
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
        e.since_response_init = absl::ZeroDuration();
        e.response_bytes = q.response_bytes;
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

class TapHub::Core {
 public:
  struct List {
    std::vector<std::shared_ptr<TapSubscriptionState>> subs;
  };

  Core(std::vector<std::string> extra_redacted, Clock* clock,
       uint32_t max_subscriptions)
      : redactor(
            std::make_shared<TapHeaderRedactor>(std::move(extra_redacted))),
        clock(clock != nullptr ? clock : Clock::Real()),
        max_subscriptions(max_subscriptions) {}

  absl::StatusOr<std::shared_ptr<TapSubscriptionState>> Add(
      CompiledTapMatch match, const TapOptions& options,
      std::function<void()> on_ready) {
    MutexLock lock(&mu);
    if (subs.size() >= max_subscriptions) {
      return absl::ResourceExhaustedError(
          absl::StrCat("tap: ", subs.size(),
                       " subscriptions are live, the most allowed "
                       "(MeshOptions::tap_max_subscriptions is ",
                       max_subscriptions, ")"));
    }
    auto sub = std::make_shared<TapSubscriptionState>(
        next_base++, std::move(match), options, redactor, std::move(on_ready));
    subs.push_back(sub);
    PublishLocked();
    return sub;
  }

  void Remove(const TapSubscriptionState* sub) {
    MutexLock lock(&mu);
    subs.erase(std::remove_if(subs.begin(), subs.end(),
                              [&](const auto& s) { return s.get() == sub; }),
               subs.end());
    PublishLocked();
  }

  std::atomic<uint32_t> live{0};
  SnapshotCell<List> list{std::make_unique<List>()};
  const std::shared_ptr<const TapHeaderRedactor> redactor;
  Clock* const clock;
  const uint32_t max_subscriptions;

 private:
  void PublishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    list.Publish(std::make_unique<List>(List{subs}));
    live.store(static_cast<uint32_t>(subs.size()), std::memory_order_relaxed);
  }

  Mutex mu;  // serializes Add and Remove (and so Publish)
  uint32_t next_base ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::shared_ptr<TapSubscriptionState>> subs ABSL_GUARDED_BY(mu);
};

namespace {

class HubSubscription final : public TapSubscription {
 public:
  HubSubscription(std::shared_ptr<TapHub::Core> core,
                  std::shared_ptr<TapSubscriptionState> state)
      : core_(std::move(core)), state_(std::move(state)) {}
  ~HubSubscription() override {
    core_->Remove(state_.get());
    state_->Close();
  }

  std::optional<TapEvent> Next(absl::Duration timeout) override {
    return state_->Next(timeout);
  }
  bool done() const override { return state_->done(); }
  uint64_t dropped() const override { return state_->dropped(); }

 private:
  const std::shared_ptr<TapHub::Core> core_;
  const std::shared_ptr<TapSubscriptionState> state_;
};

}  // namespace

TapHub::TapHub(std::vector<std::string> extra_redacted_headers, Clock* clock,
               uint32_t max_subscriptions)
    : core_(std::make_shared<Core>(std::move(extra_redacted_headers), clock,
                                   max_subscriptions)),
      live_(&core_->live) {}

TapHub::~TapHub() = default;

absl::StatusOr<std::unique_ptr<TapSubscription>> TapHub::Subscribe(
    const TapOptions& options, std::function<void()> on_ready) {
  if (absl::Status s = ValidateTapOptions(options); !s.ok()) return s;
  absl::StatusOr<CompiledTapMatch> match =
      CompiledTapMatch::Compile(options.match);
  if (!match.ok()) return match.status();
  absl::StatusOr<std::shared_ptr<TapSubscriptionState>> state =
      core_->Add(*std::move(match), options, std::move(on_ready));
  if (!state.ok()) return state.status();
  return std::make_unique<HubSubscription>(core_, *std::move(state));
}

TapExchange TapHub::Start(const TapRequestHead& head, const Metadata& headers) {
  TapExchange ex;
  {
    // No Publish can happen in here: the list is only read.
    SnapshotCell<Core::List>::Reader list = core_->list.Read();
    if (list->subs.empty()) return ex;
    TapMatchInput input(head);
    for (const std::shared_ptr<TapSubscriptionState>& sub : list->subs) {
      uint64_t stream = 0;
      if (sub->HasLimitLeft() && sub->match().Matches(input) &&
          sub->TryClaim(&stream)) {
        ex.claims_.push_back({sub, stream});
      }
    }
  }
  if (ex.claims_.empty()) return ex;

  ex.clock_ = core_->clock;
  ex.start_nanos_ = ex.clock_->NowNanos();
  auto shared = std::make_shared<TapExchangeHead>();
  if (head.endpoint != nullptr) {
    shared->destination = head.endpoint->address;
    shared->destination_labels = head.endpoint->labels;
  }
  if (head.route_labels != nullptr) shared->route_labels = *head.route_labels;
  shared->method = std::string(head.method);
  shared->scheme = std::string(head.scheme);
  shared->authority = std::string(head.authority);
  shared->path = std::string(head.path);
  for (const TapExchange::Claim& claim : ex.claims_) {
    if (claim.sub->extract_headers()) {
      shared->headers.reserve(headers.size());
      claim.sub->redactor().Append(&headers, &shared->headers);
      break;
    }
  }
  ex.head_ = std::move(shared);
  for (const TapExchange::Claim& claim : ex.claims_) {
    TapQueuedEvent event;
    event.kind = TapEvent::Kind::kRequestInit;
    event.stream = claim.stream;
    event.head = ex.head_;
    claim.sub->Push(std::move(event));
  }
  return ex;
}

TapExchange::TapExchange(TapExchange&& other) noexcept
    : claims_(std::move(other.claims_)),
      clock_(other.clock_),
      start_nanos_(other.start_nanos_),
      head_(std::move(other.head_)) {
  other.claims_.clear();
}

TapExchange& TapExchange::operator=(TapExchange&& other) noexcept {
  if (this != &other) {
    TapExchange old(std::move(*this));  // ends what this held
    claims_ = std::move(other.claims_);
    other.claims_.clear();
    clock_ = other.clock_;
    start_nanos_ = other.start_nanos_;
    head_ = std::move(other.head_);
  }
  return *this;
}

TapExchange::~TapExchange() {
  if (tapped()) {
    TapResponse reset;
    reset.reset_error_code = 8;  // HTTP/2 CANCEL
    Finish(reset);
  }
}

void TapExchange::Finish(const TapResponse& response) {
  if (claims_.empty()) return;
  absl::Duration since = absl::Nanoseconds(clock_->NowNanos() - start_nanos_);
  std::shared_ptr<TapResponseMetadata> metadata;
  for (const Claim& claim : claims_) {
    if (claim.sub->extract_headers()) {
      metadata = std::make_shared<TapResponseMetadata>();
      claim.sub->redactor().Append(response.headers, &metadata->headers);
      claim.sub->redactor().Append(response.trailers, &metadata->trailers);
      break;
    }
  }
  for (const Claim& claim : claims_) {
    TapSubscriptionState& sub = *claim.sub;
    TapQueuedEvent init;
    init.kind = TapEvent::Kind::kResponseInit;
    init.stream = claim.stream;
    init.head = head_;
    if (sub.extract_headers()) init.metadata = metadata;
    init.since_request_init = since;
    init.http_status = response.http_status;

    TapQueuedEvent end;
    end.kind = TapEvent::Kind::kResponseEnd;
    end.stream = claim.stream;
    end.head = head_;
    if (sub.extract_headers()) end.metadata = metadata;
    end.since_request_init = since;
    end.response_bytes = response.response_bytes;
    end.grpc_status = response.grpc_status;
    end.reset_error_code = response.reset_error_code;

    sub.Push(std::move(init));
    sub.PushLast(std::move(end));
  }
  claims_.clear();
}

}  // namespace mesh::internal

#include "src/tap/tap_hub.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/base/mutex.h"
#include "src/base/snapshot_cell.h"
#include "src/model/endpoint_tls.h"
#include "src/tap/tap_redactor.h"
#include "src/tap/tap_subscription_state.h"

namespace mesh::internal {

class TapHub::Core {
 public:
  struct List {
    std::vector<std::shared_ptr<TapSubscriptionState>> subs;
  };

  Core(std::vector<std::string> extra_redacted, Clock* clock,
       uint32_t max_subscriptions, uint32_t max_match_nodes)
      : redactor(
            std::make_shared<TapHeaderRedactor>(std::move(extra_redacted))),
        clock(clock != nullptr ? clock : Clock::Real()),
        max_subscriptions(max_subscriptions),
        max_match_nodes(max_match_nodes) {}

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
    const uint32_t nodes = match.node_count();
    if (match_nodes + nodes > max_match_nodes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("tap: the live subscriptions' matches have ",
                       match_nodes, " nodes and this one ", nodes,
                       "; together they may have at most ", max_match_nodes,
                       " (kTapMaxTotalMatchNodes), so that matching "
                       "stays cheap for every request"));
    }
    match_nodes += nodes;
    auto sub = std::make_shared<TapSubscriptionState>(
        next_base++, std::move(match), options, redactor, std::move(on_ready));
    subs.push_back(sub);
    PublishLocked();
    return sub;
  }

  void Remove(const TapSubscriptionState* sub) {
    MutexLock lock(&mu);
    match_nodes -= sub->match().node_count();
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
  const uint32_t max_match_nodes;

 private:
  void PublishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    list.Publish(std::make_unique<List>(List{subs}));
    live.store(static_cast<uint32_t>(subs.size()), std::memory_order_relaxed);
  }

  Mutex mu;  // serializes Add and Remove (and so Publish)
  uint32_t next_base ABSL_GUARDED_BY(mu) = 0;
  uint32_t match_nodes ABSL_GUARDED_BY(mu) = 0;  // of the live `subs`
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
               uint32_t max_subscriptions, bool identity_in_use,
               bool default_transport, uint32_t max_match_nodes)
    : core_(std::make_shared<Core>(std::move(extra_redacted_headers), clock,
                                   max_subscriptions, max_match_nodes)),
      live_(&core_->live),
      identity_in_use_(identity_in_use),
      default_transport_(default_transport) {}

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
        if (ex.claims_.empty()) ex.claims_.reserve(list->subs.size());
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
    for (auto& [name, value] :
         TlsLabels(*head.endpoint, identity_in_use_, default_transport_)) {
      shared->destination_labels[name] = std::move(value);
    }
  }
  if (head.route_labels != nullptr) shared->route_labels = *head.route_labels;
  shared->method = std::string(head.method);
  shared->scheme = std::string(head.scheme);
  shared->authority = std::string(head.authority);
  shared->path = std::string(head.path);
  shared->attempt = head.attempt;
  shared->hedge = head.hedge;
  for (const TapExchange::Claim& claim : ex.claims_) {
    if (claim.sub->extract_headers()) {
      shared->headers.reserve(headers.size());
      claim.sub->redactor().Append(&headers, &shared->headers);
      break;
    }
  }
  ex.head_ = std::move(shared);
  for (const TapExchange::Claim& claim : ex.claims_) {
    if (claim.sub->DropIfFull()) continue;
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
      response_init_nanos_(other.response_init_nanos_),
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
    response_init_nanos_ = other.response_init_nanos_;
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
  // One clock reading for both: since_response_init is 0.
  const int64_t now = clock_->NowNanos();
  ResponseInitAt(now,
                 response.headers != nullptr ? *response.headers : Metadata(),
                 response.http_status);
  EndAt(now, response);
}

namespace {

// The response metadata shown to subscriptions that extract headers
// (redacted once for all of them); null when none does.
template <typename Claims>
std::shared_ptr<TapResponseMetadata> ResponseMetadataFor(
    const Claims& claims, const Metadata* headers, const Metadata* trailers) {
  for (const auto& claim : claims) {
    if (claim.sub->extract_headers()) {
      auto metadata = std::make_shared<TapResponseMetadata>();
      if (headers != nullptr) {
        claim.sub->redactor().Append(headers, &metadata->headers);
      }
      if (trailers != nullptr) {
        claim.sub->redactor().Append(trailers, &metadata->trailers);
      }
      return metadata;
    }
  }
  return nullptr;
}

}  // namespace

void TapExchange::ResponseInit(const Metadata& headers, uint32_t http_status) {
  if (claims_.empty()) return;
  ResponseInitAt(clock_->NowNanos(), headers, http_status);
}

void TapExchange::End(const TapResponse& response) {
  if (claims_.empty()) return;
  EndAt(clock_->NowNanos(), response);
}

void TapExchange::ResponseInitAt(int64_t now, const Metadata& headers,
                                 uint32_t http_status) {
  if (response_init_nanos_ >= 0) return;
  response_init_nanos_ = now;
  absl::Duration since = absl::Nanoseconds(response_init_nanos_ - start_nanos_);
  std::shared_ptr<TapResponseMetadata> metadata =
      ResponseMetadataFor(claims_, &headers, nullptr);
  for (const Claim& claim : claims_) {
    if (claim.sub->DropIfFull()) continue;
    TapQueuedEvent init;
    init.kind = TapEvent::Kind::kResponseInit;
    init.stream = claim.stream;
    init.head = head_;
    if (claim.sub->extract_headers()) init.metadata = metadata;
    init.since_request_init = since;
    init.http_status = http_status;
    claim.sub->Push(std::move(init));
  }
}

void TapExchange::EndAt(int64_t now, const TapResponse& response) {
  if (response_init_nanos_ < 0) {
    ResponseInitAt(now, Metadata(), response.http_status);
  }
  std::shared_ptr<TapResponseMetadata> metadata =
      ResponseMetadataFor(claims_, response.headers, response.trailers);
  for (const Claim& claim : claims_) {
    if (claim.sub->DropIfFull()) {
      claim.sub->EndDropped();
      continue;
    }
    TapQueuedEvent end;
    end.kind = TapEvent::Kind::kResponseEnd;
    end.stream = claim.stream;
    end.head = head_;
    if (claim.sub->extract_headers()) end.metadata = metadata;
    end.since_request_init = absl::Nanoseconds(now - start_nanos_);
    end.since_response_init = absl::Nanoseconds(now - response_init_nanos_);
    end.response_bytes = response.response_bytes;
    end.response_messages = response.response_messages;
    end.grpc_status = response.grpc_status;
    end.reset_error_code = response.reset_error_code;
    claim.sub->PushLast(std::move(end));
  }
  claims_.clear();
}

}  // namespace mesh::internal

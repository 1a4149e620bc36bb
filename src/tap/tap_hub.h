// TapHub: the live tap subscriptions of one Mesh, and the request-side
// entry point of the tap hook (src/tap/tap_transport.h).
//
// Subscribing validates the options, compiles the match and publishes a new
// immutable list of subscriptions (SnapshotCell); a request reads the list
// without a lock, claims one unit of the limit of each subscription whose
// match accepts it (a compare-and-swap, so concurrent requests never tap
// more than the limit), and gets a TapExchange that emits the response
// events later. Each subscription buffers at most `options.buffer` events;
// a full buffer drops the new event and counts it, so a request never waits
// for a reader. The fullness is checked first, without a lock and before
// the event is built: a subscriber that does not read costs a request its
// claim and a counted drop per event (Linkerd's try-send into a full
// buffer). A push into a buffer with room takes the subscription's mutex,
// which the reader holds for one swap per batch. Buffered events are
// compact and share the exchange's head; the TapEvent is built by the
// reader's Next. Matching is bounded by kTapMaxMatchNodes per subscription
// and max_match_nodes over all (include/mesh/tap.h).
//
//   auto hub = std::make_shared<TapHub>();
//   absl::StatusOr<std::unique_ptr<TapSubscription>> sub = hub->Subscribe(o);
//   if (hub->active()) {                          // the request path
//     TapExchange ex = hub->Start(head, request.headers);  // RequestInit
//     ... ex.Finish(response);                    // ResponseInit, ResponseEnd
//   }
//
// Thread-safe. Subscriptions and exchanges share ownership of what they use,
// so either may outlive the hub and each other.
#ifndef MESH_SRC_TAP_TAP_HUB_H_
#define MESH_SRC_TAP_TAP_HUB_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "mesh/tap.h"
#include "mesh/transport.h"
#include "src/base/clock.h"
#include "src/base/internal_export.h"
#include "src/tap/tap_match.h"

namespace mesh::internal {

class TapSubscriptionState;
struct TapExchangeHead;  // what the events of one exchange share

// One unary response as the tap events describe it (the decorator derives
// it from a TransportResponse). The pointers may be null (no headers).
struct TapResponse {
  uint32_t http_status = 0;  // 0: no response (an error before one)
  const Metadata* headers = nullptr;
  uint64_t response_bytes = 0;
  uint64_t response_messages = 0;
  std::optional<uint32_t> grpc_status;
  std::optional<uint32_t> reset_error_code;  // HTTP/2 error code
  const Metadata* trailers = nullptr;
};

// The tapped side of one request: which subscriptions claimed it, under
// which stream ids, and when it started. Empty (tapped() false) when no
// subscription claimed the request. Movable, not copyable. Finishing it (or
// destroying an unfinished one) ends the exchange for every subscription.
//
// Thread-compatible.
class MESH_INTERNAL_EXPORT TapExchange {
 public:
  TapExchange() = default;
  TapExchange(TapExchange&& other) noexcept;
  TapExchange& operator=(TapExchange&& other) noexcept;
  TapExchange(const TapExchange&) = delete;
  TapExchange& operator=(const TapExchange&) = delete;
  // An exchange destroyed unfinished (a transport that dropped its
  // callback) ends as a stream reset with CANCEL (8).
  ~TapExchange();

  bool tapped() const { return !claims_.empty(); }

  // Emits ResponseInit then ResponseEnd to every claiming subscription, for
  // a response that arrived whole: one clock reading for both, so
  // since_response_init is 0. Marks the exchange finished; later calls do
  // nothing.
  void Finish(const TapResponse& response);
  // For a stream: emits ResponseInit when its headers come (once; `End`
  // emits it first if it never came).
  void ResponseInit(const Metadata& headers, uint32_t http_status);
  // For a stream: emits ResponseEnd (its since_response_init counts from
  // ResponseInit) and marks the exchange finished.
  void End(const TapResponse& response);

 private:
  friend class TapHub;
  struct Claim {
    std::shared_ptr<TapSubscriptionState> sub;
    uint64_t stream = 0;
  };

  absl::InlinedVector<Claim, 1> claims_;
  Clock* clock_ = nullptr;
  int64_t start_nanos_ = 0;
  int64_t response_init_nanos_ = -1;  // -1: no ResponseInit yet
  void ResponseInitAt(int64_t now, const Metadata& headers,
                      uint32_t http_status);
  void EndAt(int64_t now, const TapResponse& response);
  std::shared_ptr<const TapExchangeHead> head_;
};

class MESH_INTERNAL_EXPORT TapHub {
 public:
  // `extra_redacted_headers`: header names (any case) whose values are
  // redacted besides kTapSensitiveHeaders. `clock` (null: Clock::Real())
  // times the events; it must outlive the hub's exchanges. At most
  // `max_subscriptions` are live at once. `identity_in_use`: endpoints
  // with an identity are reached over mutual TLS, and events say so in
  // their destination labels ("tls", "server_id"; endpoint_tls.h).
  // `default_transport`: mesh's own transport, which honours Endpoint::tls.
  // The live subscriptions' matches have at most `max_match_nodes` nodes
  // together (tests lower it).
  explicit TapHub(std::vector<std::string> extra_redacted_headers = {},
                  Clock* clock = nullptr, uint32_t max_subscriptions = 100,
                  bool identity_in_use = false, bool default_transport = true,
                  uint32_t max_match_nodes = kTapMaxTotalMatchNodes);
  ~TapHub();
  TapHub(const TapHub&) = delete;
  TapHub& operator=(const TapHub&) = delete;

  // A new live subscription, INVALID_ARGUMENT from ValidateTapOptions, or
  // RESOURCE_EXHAUSTED naming the bound when max_subscriptions are live or
  // its match would take the live matches past max_match_nodes. Its
  // `base` is this hub's count of subscriptions so far (from 0). Destroying
  // it unsubscribes.
  //
  // `on_ready` (may be empty) lets a reader wait without a thread: once
  // Next(0) has returned nullopt, on_ready runs as soon as an event is
  // buffered or the subscription is over — once, until Next(0) returns
  // nullopt again. It runs on the thread that made the change (a request's),
  // outside the subscription's locks; it must not block, and may call Next.
  absl::StatusOr<std::unique_ptr<TapSubscription>> Subscribe(
      const TapOptions& options, std::function<void()> on_ready = nullptr);

  // True while some subscription is live: one relaxed atomic load, for the
  // request path to skip everything else when nobody taps.
  bool active() const { return live_->load(std::memory_order_relaxed) != 0; }

  // For one request: claims it for every live subscription whose match
  // accepts `head` and whose limit is not used up (stream ids 0, 1, ... per
  // subscription), emits RequestInit to each, and returns the exchange that
  // emits the rest. `headers` are the request's own (the pseudo-headers are
  // made from `head`). Copies what it needs: `head` and `headers` may go
  // once it returns. No lock unless a subscription claims the request.
  TapExchange Start(const TapRequestHead& head, const Metadata& headers);

  class Core;

 private:
  std::shared_ptr<Core> core_;
  const std::atomic<uint32_t>* live_;  // inside *core_
  const bool identity_in_use_;
  const bool default_transport_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_TAP_TAP_HUB_H_

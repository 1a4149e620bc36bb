// The state of one call (or stream) of a ChannelCore across its attempts,
// shared by channel_core.cc and stream_call.cc.
//
// Thread-compatible: one stage of the data path owns a call at a time.
#ifndef MESH_SRC_CHANNEL_CALL_STATE_H_
#define MESH_SRC_CHANNEL_CALL_STATE_H_

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "mesh/cancellation.h"
#include "mesh/channel.h"
#include "src/balance/call_handle.h"
#include "src/channel/channel_core.h"
#include "src/channel/channel_picker.h"
#include "src/channel/destination.h"
#include "src/channel/external_call.h"
#include "src/route/fault.h"

namespace mesh::internal {

class StreamCall;

// One logical call across its attempts.
struct ChannelCore::Call {
  std::string method;  // the path: "/pkg.Service/Method" for gRPC
  // An external call's HTTP method (empty: gRPC's POST) and the client
  // that carries its attempts (null: the backend's transport).
  std::string http_method;
  ExternalAttempts* external = nullptr;
  bool external_replayable = false;  // its body can be sent again
  std::string body;  // kept for replay when the call may be retried
  Metadata metadata;
  absl::Time start;
  absl::Time deadline = absl::InfiniteFuture();
  absl::Duration caller_timeout = absl::InfiniteDuration();
  FaultDraw fault;  // drawn when routed
  // The route's retries and response timeout for this call: the route's
  // own, or (Route::allow_l5d_request_headers) as the call's l5d-* headers
  // set them. `retry` points at the route's policy or at retry_override.
  const RetryPolicy* retry = nullptr;
  std::optional<RetryPolicy> retry_override;
  bool retryable = false;
  absl::Duration response_timeout = absl::InfiniteDuration();
  // For ring-hash backends: the route's hash of the call (none: random).
  std::optional<uint64_t> hash;
  // The routes the call was matched with: they keep `route` and `metrics`
  // alive, and give the budget.
  std::shared_ptr<const Destination::Routes> routes;
  // The channel's picker as the call's routing read it, for the first
  // attempt; null once taken. Each later attempt reads the current one, so
  // a call holds no picker (and no backend's leg) between attempts or while
  // it waits, and a leg a newer picker dropped can end.
  std::shared_ptr<const ChannelPicker> picker;
  const CompiledRoute* route = nullptr;
  RouteMetrics* metrics = nullptr;
  // The route's hedging (null: the call is not hedged), and the endpoints
  // its attempts went to: a hedge goes to another.
  const HedgePolicy* hedge = nullptr;
  std::vector<std::string> hedge_tried;
  bool replayable = false;
  uint32_t attempts = 0;
  uint32_t connect_retries = 0;  // retries after attempts never sent
  std::string last_endpoint;     // the next attempt prefers another
  // Waiting for endpoints: until when at most (the deadline, or the start
  // plus the fail-fast timeout), whether the call has waited (it is then off
  // its caller's thread), and whether its wait timed out.
  absl::Time wait_until = absl::InfinitePast();
  // The fail-fast timeout in force (the channel's, or the backends' queue's
  // once it first waited: backend_wait, backend_fail_fast), and why its
  // last wait found no room: "the queue of '…' is full (capacity N)"
  // (empty: it did).
  absl::Duration fail_fast = absl::ZeroDuration();
  bool backend_wait = false;
  bool backend_fail_fast = false;
  std::string queue_full;
  bool waited = false;
  bool wait_expired = false;
  // Picks retried at once because endpoints came while queuing (bounded).
  int quick_repicks = 0;
  // A synchronous call's caller thread, which waits for the result: an
  // attempt started on it is sent and awaited there (SendAndWait), as a
  // synchronous gRPC call is. Default (no thread): every attempt is sent
  // asynchronously.
  std::thread::id blocking_thread;
  // The caller's cancellation (null: none).
  std::shared_ptr<Cancellation> cancel;
  // A stream's state; null for a unary call. Its attempts open streams,
  // and one that received anything is not retried.
  std::shared_ptr<StreamCall> stream;
  absl::AnyInvocable<void(CallResult)> done;

  bool cancelled() const { return cancel != nullptr && cancel->cancelled(); }
};

struct ChannelCore::Picked {
  std::shared_ptr<Leg> leg;
  CallHandle handle;
  // The split's backend it was drawn from (its filters), owned by the
  // call's routes; null: no split.
  const WeightedBackend* backend = nullptr;
};

// What an attempt's completion needs besides the call.
struct ChannelCore::Attempt {
  std::shared_ptr<Leg> leg;
  CallHandle handle;
  std::shared_ptr<EndpointMetrics> endpoint_metrics;  // null: none kept
  bool counted = false;  // by the backend's circuit breaker
  // The attempt's deadline: the call's, or sooner by one of the route's
  // attempt limits, and which one set it.
  enum class Limit { kCall, kPerTry, kResponse, kIdle };
  absl::Time deadline = absl::InfiniteFuture();
  Limit limit = Limit::kCall;
  // A stream's idle timeout passed (set by the stream before it closes).
  bool idle_expired = false;
  const WeightedBackend* backend = nullptr;  // as Picked::backend
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_CALL_STATE_H_

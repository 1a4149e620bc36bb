// Hedged calls (Route::hedge_policy, gRFC A6): the call's attempts run side
// by side. The first is sent as any call's; each hedge follows after the
// policy's delay, to an endpoint no attempt of the call has tried, as a
// withdrawal from the destination's retry budget. The first answer that is
// OK or fatal is the call's, and the other attempts are cancelled (their
// servers see it); a non-fatal answer sends the next hedge at once, or
// after the server's grpc-retry-pushback-ms (a negative one stops them).
//
// The call belongs to its Hedge while attempts run; the Hedge's lock orders
// the attempts' answers and the timers. Nothing is sent, cancelled or
// completed under the lock: a transport may answer inline.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/base/destroy_later.h"
#include "src/base/mutex.h"
#include "src/channel/call_state.h"
#include "src/channel/channel_core.h"
#include "src/route/classify.h"
#include "src/route/retry_policy.h"

namespace mesh::internal {
namespace {

// SendHedge's generation for "send now", whatever timer is armed.
constexpr uint64_t kHedgeNow = ~uint64_t{0};

}  // namespace

struct ChannelCore::Hedge {
  // The call's route, for the attempts that answer after the call ended.
  std::shared_ptr<const Destination::Routes> routes;
  const CompiledRoute* route = nullptr;
  // The route's policy (`routes` keeps it), and its delay for this call.
  const HedgePolicy* policy = nullptr;
  absl::Duration delay = absl::ZeroDuration();

  Mutex mu;
  std::unique_ptr<Call> call ABSL_GUARDED_BY(mu);  // null once answered
  uint32_t in_flight ABSL_GUARDED_BY(mu) = 0;
  // A server's pushback said to stop, or the budget was empty.
  bool stopped ABSL_GUARDED_BY(mu) = false;
  // The armed timer's generation; a timer of an older one does nothing.
  uint64_t generation ABSL_GUARDED_BY(mu) = 0;
  // Until when a server's pushback holds the next hedge back.
  absl::Time held_until ABSL_GUARDED_BY(mu) = absl::InfinitePast();
  // One per attempt sent: cancelling it cancels that attempt alone.
  std::vector<std::shared_ptr<Cancellation>> cancels ABSL_GUARDED_BY(mu);
  uint64_t caller_watch ABSL_GUARDED_BY(mu) = 0;
  // The last non-fatal answer: the call's if no other comes.
  struct Last {
    TransportResponse response;
    std::string address;
    bool failure = false;
    const WeightedBackend* backend = nullptr;
  };
  std::optional<Last> last ABSL_GUARDED_BY(mu);

  // Cancels every attempt (the caller cancelled the call).
  void CancelAll() {
    std::vector<std::shared_ptr<Cancellation>> all;
    {
      MutexLock lock(&mu);
      all = cancels;
    }
    for (const auto& c : all) c->Cancel();
  }
};

void ChannelCore::StartHedging(std::unique_ptr<Call> call, Attempt attempt,
                               TransportRequest req) {
  auto hedge = std::make_shared<Hedge>();
  hedge->routes = call->routes;
  hedge->route = call->route;
  hedge->policy = call->hedge;
  // A per-try timeout on a hedged route is a hedging delay: when it passes
  // the next attempt goes, and the first is kept (Envoy's
  // hedge_on_per_try_timeout).
  hedge->delay = std::min(call->hedge->delay, call->retry->per_try_timeout);
  call->hedge_tried.push_back(attempt.handle.endpoint().address);
  auto cancel = std::make_shared<Cancellation>();
  req.cancel = cancel;
  std::shared_ptr<Cancellation> caller = call->cancel;
  {
    MutexLock lock(&hedge->mu);
    hedge->cancels.push_back(std::move(cancel));
    hedge->in_flight = 1;
    hedge->call = std::move(call);
  }
  if (caller != nullptr) {
    // Watched before anything can end the call (no attempt is sent and no
    // timer armed yet), so that the end always finds the watch to drop.
    // Cancelling ends every attempt in flight, and a call waiting out a
    // pushback with none in flight ends at once. Already cancelled: runs
    // now, and the first attempt ends as soon as it is sent.
    const uint64_t id = caller->Watch(
        [self = shared_from_this(), weak = std::weak_ptr<Hedge>(hedge)] {
          std::shared_ptr<Hedge> h = weak.lock();
          if (h == nullptr) return;
          h->CancelAll();
          self->SendHedge(h, kHedgeNow);
        });
    MutexLock lock(&hedge->mu);
    hedge->caller_watch = id;
  }
  {
    MutexLock lock(&hedge->mu);
    if (hedge->delay > absl::ZeroDuration()) {
      ArmHedgeTimer(hedge, ++hedge->generation, hedge->delay);
    }
  }
  SendHedgeAttempt(hedge, std::move(attempt), std::move(req));
  if (hedge->delay == absl::ZeroDuration()) {
    // All at once.
    for (uint32_t i = 1; i < hedge->policy->max_attempts; ++i) {
      SendHedge(hedge, kHedgeNow);
    }
  }
}

bool ChannelCore::ArmHedgeTimer(const std::shared_ptr<Hedge>& hedge,
                                uint64_t generation, absl::Duration wait) {
  absl::AnyInvocable<void()> task = [self = shared_from_this(), hedge,
                                     generation] {
    self->SendHedge(hedge, generation);
  };
  // Refused once the Mesh is shut down (the task is left here, not run).
  return mesh_->RunLater(wait, task);
}

void ChannelCore::SendHedge(const std::shared_ptr<Hedge>& hedge,
                            uint64_t generation) {
  std::optional<Attempt> attempt;
  TransportRequest req;
  bool send = false;
  std::unique_ptr<Call> ended;
  std::optional<Hedge::Last> last;
  {
    MutexLock lock(&hedge->mu);
    Call* call = hedge->call.get();
    if (call == nullptr) return;
    if (generation != kHedgeNow && generation != hedge->generation) return;
    const absl::Time now = absl::Now();
    if (!hedge->stopped && call->attempts < hedge->policy->max_attempts &&
        !call->cancelled() && !mesh_->shut_down() && now < call->deadline) {
      std::vector<std::shared_ptr<Destination>> wait_on;
      std::shared_ptr<const ChannelPicker> picker = PickerForCall();
      absl::StatusOr<Picked> picked = Pick(*call, *picker, &wait_on);
      if (picked.ok() && !call->routes->budget->TryWithdraw()) {
        picked->handle.Complete(CallOutcome::kCancelled);
        call->metrics->RecordHedgeSkipped();
        hedge->stopped = true;
      } else if (picked.ok() &&
                 MakeAttempt(*call, *picked, now, &attempt, &req).ok()) {
        call->metrics->RecordHedge();
        call->hedge_tried.push_back(attempt->handle.endpoint().address);
        auto cancel = std::make_shared<Cancellation>();
        req.cancel = cancel;
        hedge->cancels.push_back(std::move(cancel));
        ++hedge->in_flight;
        send = true;
        if (call->attempts < hedge->policy->max_attempts &&
            hedge->delay > absl::ZeroDuration()) {
          ArmHedgeTimer(hedge, ++hedge->generation, hedge->delay);
        }
      }
    }
    if (!send && hedge->in_flight == 0) {
      // Nothing in flight and nothing more to send: the last answer is
      // the call's.
      ended = std::move(hedge->call);
      last = std::move(hedge->last);
    }
  }
  if (send) {
    SendHedgeAttempt(hedge, *std::move(attempt), std::move(req));
  } else if (ended != nullptr) {
    // An attempt has answered (the first is always sent), so there is one.
    FinishHedge(hedge, std::move(ended), std::move(last->response),
                last->address, last->failure, last->backend);
  }
}

void ChannelCore::SendHedgeAttempt(const std::shared_ptr<Hedge>& hedge,
                                   Attempt attempt, TransportRequest req) {
  Transport& transport = attempt.leg->destination->transport();
  // The endpoint lives in the load record the handle shares.
  const Endpoint& endpoint = attempt.handle.endpoint();
  transport.Send(
      endpoint, std::move(req),
      [self = shared_from_this(), hedge,
       attempt = std::move(attempt)](TransportResponse response) mutable {
        self->OnHedgeDone(hedge, attempt, std::move(response));
      });
}

void ChannelCore::OnHedgeDone(const std::shared_ptr<Hedge>& hedge,
                              Attempt& attempt, TransportResponse response) {
  if (attempt.counted) {
    attempt.leg->destination->backend_policy().EndRequest();
  }
  if (response.never_sent) attempt.leg->destination->OnConnectFailure();
  const bool failure = IsFailure(hedge->route->response_classes,
                                 response.status, response.http_status);
  const absl::StatusCode code = response.status.code();
  std::string address = attempt.handle.endpoint().address;
  std::unique_ptr<Call> won;
  bool send_now = false;
  bool lost = false;
  {
    MutexLock lock(&hedge->mu);
    --hedge->in_flight;
    Call* call = hedge->call.get();
    lost = call == nullptr;  // the call has its answer already
    const std::vector<absl::StatusCode>& non_fatal =
        hedge->policy->non_fatal_codes;
    // A connection that was never made is tried elsewhere, as any call's.
    const bool is_non_fatal =
        response.never_sent || (code != absl::StatusCode::kOk &&
                                std::find(non_fatal.begin(), non_fatal.end(),
                                          code) != non_fatal.end());
    if (lost) {
      // Below, outside the lock.
    } else if (!is_non_fatal || call->cancelled() || mesh_->shut_down()) {
      won = std::move(hedge->call);
    } else {
      Pushback pushback = ReadPushback(response.trailers);
      if (!pushback.present) pushback = ReadPushback(response.headers);
      hedge->last =
          Hedge::Last{std::move(response), address, failure, attempt.backend};
      if (pushback.present && !pushback.wait.has_value()) {
        hedge->stopped = true;  // A6: the server says no more
        send_now = true;        // to end the call if nothing is in flight
      } else if (pushback.present) {
        // The next hedge waits as long as the server asks; the policy's
        // own timer is replaced. No later than the deadline, so that a call
        // with nothing in flight ends then. (Refused at shutdown: at once,
        // to end the call.)
        const absl::Time now = absl::Now();
        const absl::Duration wait =
            std::min(*pushback.wait,
                     std::max(absl::ZeroDuration(), call->deadline - now));
        hedge->held_until = now + wait;
        send_now = !ArmHedgeTimer(hedge, ++hedge->generation, wait);
      } else {
        // At once, unless a server's pushback holds the next hedge back.
        send_now = absl::Now() >= hedge->held_until;
      }
    }
  }
  if (lost) {
    // An attempt cancelled for the winner gives its endpoint no verdict
    // and no latency sample; one that answered before the cancellation
    // reached it counts as it went.
    attempt.handle.Complete(code == absl::StatusCode::kCancelled
                                ? CallOutcome::kCancelled
                                : OutcomeOf(response.status, failure));
    if (attempt.endpoint_metrics) {
      attempt.endpoint_metrics->RecordResponse(failure, static_cast<int>(code));
    }
    return;
  }
  if (won != nullptr) {
    attempt.handle.Complete(OutcomeOf(response.status, failure));
    if (attempt.endpoint_metrics) {
      attempt.endpoint_metrics->RecordResponse(failure, static_cast<int>(code));
    }
    FinishHedge(hedge, std::move(won), std::move(response), address, failure,
                attempt.backend);
    return;
  }
  attempt.handle.Complete(OutcomeOf(
      absl::Status(code, ""), failure));  // the response moved into `last`
  if (attempt.endpoint_metrics) {
    attempt.endpoint_metrics->RecordResponse(failure, static_cast<int>(code));
  }
  if (send_now) SendHedge(hedge, kHedgeNow);
}

void ChannelCore::FinishHedge(const std::shared_ptr<Hedge>& hedge,
                              std::unique_ptr<Call> call,
                              TransportResponse response,
                              const std::string& address, bool failure,
                              const WeightedBackend* backend) {
  std::vector<std::shared_ptr<Cancellation>> others;
  uint64_t watch = 0;
  {
    MutexLock lock(&hedge->mu);
    others = std::move(hedge->cancels);
    watch = hedge->caller_watch;
    hedge->caller_watch = 0;
  }
  if (call->cancel != nullptr) call->cancel->Unwatch(watch);
  // The losers end CANCELLED, their servers told; the winner's own
  // cancellation no longer watches anything.
  for (const auto& c : others) c->Cancel();
  CallResult result;
  result.endpoint = address;
  result.status =
      call->cancelled() ? CancelledStatus() : std::move(response.status);
  result.body = std::move(response.body);
  result.headers = std::move(response.headers);
  result.trailers = std::move(response.trailers);
  if (backend != nullptr && !backend->response_headers.empty()) {
    ApplyHeaderModifier(backend->response_headers, &result.headers);
  }
  if (!call->route->response_headers.empty()) {
    ApplyHeaderModifier(call->route->response_headers, &result.headers);
  }
  Finish(*call, std::move(result), failure);
  // Not on the transport's thread: the caller's callback goes with it.
  DestroyLater([c = std::move(call)] {});
}

}  // namespace mesh::internal

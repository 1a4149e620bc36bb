#include "src/channel/channel_core.h"

#include <grpc/support/log.h>

#include <algorithm>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/base/destroy_later.h"
#include "src/base/mutex.h"
#include "src/channel/call_state.h"
#include "src/channel/pick_waiter.h"
#include "src/channel/stream_call.h"
#include "src/model/http_syntax.h"
#include "src/route/classify.h"
#include "src/route/fault.h"
#include "src/route/l5d_overrides.h"
#include "src/route/request_hash.h"
#include "src/route/retry_decision.h"
#include "src/route/retry_policy.h"

namespace mesh::internal {
namespace {

void Fail(absl::AnyInvocable<void(CallResult)>& done, absl::Status status) {
  CallResult result;
  result.status = std::move(status);
  done(std::move(result));
}

}  // namespace

CallOutcome OutcomeOf(const absl::Status& status, bool classified_failure) {
  switch (status.code()) {
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
      return CallOutcome::kCancelled;  // the caller gave up: no verdict
    case absl::StatusCode::kUnavailable:
      if (classified_failure) return CallOutcome::kEndpointFailure;
      break;
    default:
      break;
  }
  return classified_failure ? CallOutcome::kFailure : CallOutcome::kSuccess;
}

ChannelCore::ChannelCore(std::string target, std::string authority,
                         const ChannelOptions& options,
                         std::shared_ptr<MeshCore> mesh,
                         std::shared_ptr<Destination> destination,
                         std::unique_ptr<Balancer> balancer)
    : target_(std::move(target)),
      authority_(std::move(authority)),
      channel_id_(absl::Uniform<uint64_t>(absl::BitGen())),
      options_(options),
      mesh_(std::move(mesh)),
      pickers_(std::make_shared<PickerPublisher>(
          target_, options.balancer, mesh_,
          std::make_shared<Leg>(std::move(destination), std::move(balancer)))),
      apex_(*pickers_->apex()->destination) {
  pickers_->Listen(pickers_);
}

ChannelCore::~ChannelCore() { pickers_->Close(); }

std::shared_ptr<const ChannelPicker> ChannelCore::PickerForCall() {
  std::shared_ptr<const ChannelPicker> picker = pickers_->Current();
  // The first config came after this picker was built and before the
  // apex counted the change: build now, so the call sees its routes.
  if (picker->awaits_routes && !apex_.AwaitsRoutes()) {
    picker = pickers_->Rebuild();
  }
  return picker;
}

void ChannelCore::CallRawAsync(absl::string_view method, std::string request,
                               const CallOptions& options,
                               absl::AnyInvocable<void(CallResult)> done) {
  Start(method, std::move(request), options, std::move(done), nullptr);
}

CallResult ChannelCore::CallRaw(absl::string_view method, std::string request,
                                const CallOptions& options) {
  CallResult result;
  Notification finished;
  Start(
      method, std::move(request), options,
      [&](CallResult r) {
        result = std::move(r);
        finished.Notify();
      },
      nullptr, std::this_thread::get_id());
  finished.WaitForNotification();
  return result;
}

std::shared_ptr<StreamCall> ChannelCore::StartStream(absl::string_view method,
                                                     const CallOptions& options,
                                                     StreamObserver* observer) {
  // Every stream has a cancellation: ClientStream::Cancel raises it.
  CallOptions with_cancel = options;
  if (with_cancel.cancel == nullptr) {
    with_cancel.cancel = std::make_shared<Cancellation>();
  }
  auto stream = std::make_shared<StreamCall>(observer, with_cancel.cancel);
  Start(
      method, std::string(), with_cancel,
      [stream](CallResult result) { stream->Close(std::move(result)); },
      stream);
  return stream;
}

void ChannelCore::Start(absl::string_view method, std::string request,
                        const CallOptions& options,
                        absl::AnyInvocable<void(CallResult)> done,
                        std::shared_ptr<StreamCall> stream,
                        std::thread::id blocking) {
  if (absl::Status s = ValidateMethod(method); !s.ok()) {
    return Fail(done, std::move(s));
  }
  if (absl::Status s = ValidateMetadata(options.metadata); !s.ok()) {
    return Fail(done, std::move(s));
  }
  auto call = std::make_unique<Call>();
  call->blocking_thread = blocking;
  call->stream = std::move(stream);
  call->method = std::string(method);
  call->metadata = options.metadata;
  call->body = std::move(request);
  call->done = std::move(done);
  Launch(std::move(call), options);
}

void ChannelCore::StartExternal(ExternalCall external,
                                absl::AnyInvocable<void(CallResult)> done) {
  if (absl::Status s =
          ValidateHttpRequest(external.method, external.path, external.headers);
      !s.ok()) {
    return Fail(done, std::move(s));
  }
  auto call = std::make_unique<Call>();
  call->method = std::move(external.path);
  call->http_method = std::move(external.method);
  call->external = external.attempts;
  call->external_replayable = external.replayable;
  call->metadata = std::move(external.headers);
  call->done = std::move(done);
  Launch(std::move(call), external.options);
}

void ChannelCore::Launch(std::unique_ptr<Call> call,
                         const CallOptions& options) {
  if (mesh_->shut_down()) {
    return Fail(call->done, absl::UnavailableError(absl::StrCat(
                                "mesh is shut down; call to '", target_, "'")));
  }
  if (options.cancel != nullptr && options.cancel->cancelled()) {
    return Fail(call->done, CancelledStatus());
  }
  call->start = absl::Now();
  call->caller_timeout = options.timeout != absl::InfiniteDuration()
                             ? options.timeout
                             : options_.default_timeout;
  if (options.deadline != absl::InfiniteFuture()) {
    call->caller_timeout = std::min(
        call->caller_timeout,
        std::max(options.deadline - call->start, absl::ZeroDuration()));
  }
  call->cancel = options.cancel;
  call->picker = PickerForCall();
  if (call->picker->awaits_routes) return WaitForRoutes(std::move(call));
  RouteCall(std::move(call));
}

void ChannelCore::RouteCall(std::unique_ptr<Call> call) {
  call->routes = call->picker->routes;
  const Destination::Routes& routes = *call->routes;
  call->route = &routes.table->Match(
      {call->http_method.empty() ? absl::string_view("POST")
                                 : absl::string_view(call->http_method),
       call->method, &call->metadata});
  call->metrics = routes.route_metrics[call->route->index].get();
  call->metrics->RecordRequest();
  if (call->route->unmatched_fails) {
    // gRPC's words for it: nothing to wait for, nowhere to send it.
    CallResult result;
    result.status =
        absl::Status(call->route->unmatched_code,
                     absl::StrCat("no matching route for '", call->method,
                                  "' in the routes of '", target_, "'"));
    Finish(*call, std::move(result));
    if (call->waited) DestroyLater([c = std::move(call)] {});
    return;
  }
  const CompiledRoute& route = *call->route;
  call->retry = &route.retry_policy;
  call->retryable = route.is_retryable;
  call->response_timeout = route.response_timeout;
  absl::Duration route_timeout = route.timeout;
  if (route.allow_l5d_request_headers) {
    L5dOverrides o = TakeL5dOverrides(&call->metadata);
    for (const std::string& line : o.ignored) {
      gpr_log(GPR_ERROR, "mesh: call to '%s': %s", target_.c_str(),
              line.c_str());
    }
    if (o.timeout) route_timeout = *o.timeout;
    if (o.response_timeout) call->response_timeout = *o.response_timeout;
    if (o.retries()) {
      call->retry_override = ApplyL5dRetries(o, route.retry_policy);
      call->retry = &*call->retry_override;
      call->retryable = true;
    }
  }
  // The route's timeout bounds the call with all its attempts; the caller's,
  // if shorter, wins. Both count from the call's start.
  absl::Duration timeout = std::min(call->caller_timeout, route_timeout);
  call->deadline = timeout != absl::InfiniteDuration() ? call->start + timeout
                                                       : absl::InfiniteFuture();
  call->wait_until =
      std::min(call->deadline, call->start + options_.fail_fast_timeout);
  call->fail_fast = options_.fail_fast_timeout;
  const uint32_t max_replay = call->retry->max_request_bytes;
  const bool fits =
      call->body.size() <= (max_replay != 0 ? max_replay : kMaxReplayBytes);
  call->replayable = (call->external == nullptr || call->external_replayable) &&
                     (call->retryable || options_.retry_connect_failures) &&
                     call->retry->max_attempts != 1 && fits;
  // Hedged: a unary gRPC call on a hedged route whose request can be kept
  // (and that its l5d-* headers did not make retryable).
  if (route.hedge && !call->retryable && call->stream == nullptr &&
      call->external == nullptr && fits) {
    call->hedge = &*route.hedge;
    call->replayable = true;
  }
  routes.budget->Deposit();
  if (!call->route->hash_policies.empty()) {
    call->hash = RequestHash(*call->route, &call->metadata, channel_id_);
  }
  if (call->route->has_fault) {
    thread_local absl::InsecureBitGen gen;
    call->fault = DrawFault(call->route->fault, &call->metadata, gen);
    if (call->fault.any()) return ApplyFault(std::move(call));
  }
  StartAttempt(std::move(call));
}

void ChannelCore::ApplyFault(std::unique_ptr<Call> call) {
  Destination& apex = apex_;
  const uint32_t limit = call->route->fault.max_active_faults;
  if (!apex.backend_policy().TryStartFault(limit))
    return StartAttempt(std::move(call));
  if (call->fault.delay > absl::ZeroDuration()) {
    absl::Duration delay = call->fault.delay;
    call->fault.delay = absl::ZeroDuration();
    // A delay past the deadline ends the call at its deadline, as a slow
    // server would.
    bool past_deadline = absl::Now() + delay >= call->deadline;
    if (past_deadline) delay = call->deadline - absl::Now();
    absl::AnyInvocable<void()> resume = [self = shared_from_this(),
                                         call = std::move(call),
                                         past_deadline]() mutable {
      self->apex_.backend_policy().EndFault();
      call->waited = true;  // off the caller's thread from here
      if (past_deadline) {
        CallResult result;
        result.status = absl::DeadlineExceededError(absl::StrCat(
            "deadline passed during a delay injected by the route's fault "
            "config; call to '",
            self->target_, "'"));
        self->Finish(*call, std::move(result));
        DestroyLater([c = std::move(call)] {});
        return;
      }
      if (!call->fault.abort.ok()) {
        // The abort counts as a second fault only if it still fits.
        return self->ApplyFault(std::move(call));
      }
      self->StartAttempt(std::move(call));
    };
    // After Mesh shutdown the timer refuses it: run it now (the attempt
    // then fails at once).
    if (!mesh_->RunLater(std::max(delay, absl::ZeroDuration()), resume)) {
      resume();
    }
    return;
  }
  apex.backend_policy().EndFault();
  CallResult result;
  result.status = call->fault.abort;
  Finish(*call, std::move(result));
  if (call->waited) DestroyLater([c = std::move(call)] {});
}

void ChannelCore::WaitForRoutes(std::unique_ptr<Call> call) {
  absl::Time until = std::min(call->start + call->caller_timeout,
                              call->start + options_.fail_fast_timeout);
  std::shared_ptr<Cancellation> cancel = call->cancel;
  auto waiter = std::make_shared<PickWaiter>(
      mesh_->timers(),
      [self = shared_from_this(),
       call = std::move(call)](PickWaiter::Why why) mutable {
        Destination& apex = self->apex_;
        bool inline_fire =
            why == PickWaiter::Why::kReady || why == PickWaiter::Why::kNever;
        if (!inline_fire) call->waited = true;
        call->picker = self->PickerForCall();
        if (!call->picker->awaits_routes && !self->mesh_->shut_down() &&
            !call->cancelled()) {
          return self->RouteCall(std::move(call));
        }
        // No routes: the call fails like one that found no endpoints, with
        // the route metrics of the default route.
        call->routes = call->picker->routes;
        const Destination::Routes& routes = *call->routes;
        call->route = &routes.table->At(routes.table->size());
        call->metrics = routes.route_metrics[call->route->index].get();
        call->metrics->RecordRequest();
        absl::Status why_not = apex.NoRoutesStatus();
        CallResult result;
        if (call->cancelled()) {
          result.status = self->CancelledStatus();
        } else if (why == PickWaiter::Why::kTimedOut &&
                   absl::Now() >= call->start + call->caller_timeout) {
          result.status = absl::DeadlineExceededError(absl::StrCat(
              "deadline passed while waiting for routes: ", why_not.message()));
        } else if (why == PickWaiter::Why::kTimedOut) {
          result.status = absl::Status(
              why_not.code(),
              absl::StrCat(
                  why_not.message(), "; waited ",
                  absl::FormatDuration(self->options_.fail_fast_timeout),
                  " (ChannelOptions::fail_fast_timeout)"));
        } else {
          result.status = std::move(why_not);
        }
        self->Finish(*call, std::move(result));
        if (call->waited) DestroyLater([c = std::move(call)] {});
      },
      cancel);
  switch (apex_.AddRoutesWaiter(waiter)) {
    case Destination::WaitResult::kReady:
      waiter->Fire(PickWaiter::Why::kReady);
      return;
    case Destination::WaitResult::kNever:
    case Destination::WaitResult::kFull:  // (not for routes)
      waiter->Fire(PickWaiter::Why::kNever);
      return;
    case Destination::WaitResult::kQueued:
      waiter->Arm(std::max(until - absl::Now(), absl::ZeroDuration()));
      waiter->FireOnCancel();
      return;
  }
}

absl::Status ChannelCore::WaitForEndpoints(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  if (apex_.AwaitsRoutes() && !apex_.WaitForRoutes(timeout)) {
    return apex_.NoRoutesStatus();
  }
  std::shared_ptr<const ChannelPicker> picker = PickerForCall();
  const auto backends = SplitBackendsOf(*picker->routes);
  if (backends.empty()) {
    return apex_.WaitForEndpoints(
        std::max(deadline - absl::Now(), absl::ZeroDuration()));
  }
  // Each backend in turn, until one has endpoints (each returns early once
  // discovery has answered).
  absl::Status first;
  for (const auto& [backend, key] : backends) {
    const std::shared_ptr<Leg>* leg = picker->LegFor(*key);
    if (leg == nullptr) continue;
    absl::Status s = (*leg)->destination->WaitForEndpoints(
        std::max(deadline - absl::Now(), absl::ZeroDuration()));
    if (s.ok()) return s;
    if (first.ok()) first = std::move(s);
  }
  return first.ok() ? apex_.NoEndpointsStatus() : first;
}

absl::StatusOr<ChannelCore::Picked> ChannelCore::Pick(
    const Call& call, const ChannelPicker& picker,
    std::vector<std::shared_ptr<Destination>>* wait_on) {
  auto pick_in =
      [&call](const std::shared_ptr<Leg>& leg) -> absl::StatusOr<CallHandle> {
    // A hedge goes to an endpoint no attempt of its call has tried (the
    // balancer is told which), whatever the call's hash.
    if (!call.hedge_tried.empty()) {
      return leg->balancer->PickExcept(call.hedge_tried);
    }
    if (call.hash) {
      // Consistent hashing decides (a ring walks past ejected endpoints
      // itself); other balancers ignore the hash.
      return leg->balancer->PickHashed(*call.hash);
    }
    absl::StatusOr<CallHandle> picked = leg->balancer->Pick();
    // A retry prefers an endpoint other than the one that just failed.
    for (int i = 0; i < 2 && picked.ok() && !call.last_endpoint.empty() &&
                    picked->endpoint().address == call.last_endpoint;
         ++i) {
      absl::StatusOr<CallHandle> other = leg->balancer->Pick();
      if (!other.ok()) continue;
      // The pick given up was never sent: no verdict on its endpoint (a
      // handle replaced by assignment would count as a success).
      picked->Complete(CallOutcome::kCancelled);
      picked = std::move(other);
    }
    return picked;
  };
  // The split and direct endpoint of the routes the call was matched with;
  // a call back from waiting, the current ones.
  const Destination::Routes& routes =
      call.waited ? *picker.routes : *call.routes;
  if (routes.direct != nullptr) {
    // A retry under older routes whose direct endpoint has changed since
    // goes there once.
    std::shared_ptr<Leg> leg =
        picker.direct != nullptr && *picker.routes->direct == *routes.direct
            ? picker.direct
            : pickers_->DirectLeg(routes.direct);
    // A hedge does not go back to the one endpoint once it was tried.
    absl::StatusOr<CallHandle> picked =
        leg == nullptr ? absl::UnavailableError("")
        : call.hedge_tried.empty()
            ? leg->balancer->Pick()
            : leg->balancer->PickExcept(call.hedge_tried);
    if (!picked.ok()) return apex_.NoEndpointsStatus();
    return Picked{std::move(leg), *std::move(picked)};
  }
  const std::shared_ptr<const TrafficSplit>& split =
      call.route->split != nullptr ? call.route->split : routes.split;
  if (split == nullptr) {
    absl::StatusOr<CallHandle> picked = pick_in(picker.apex);
    if (!picked.ok()) {
      wait_on->push_back(picker.apex->destination);
      return apex_.NoEndpointsStatus();
    }
    return Picked{picker.apex, *std::move(picked)};
  }
  // The leg of a backend: the picker's; for a split of routes older than
  // the picker's (a retry, or a route matched before a wait), a backend the
  // picker no longer has gets a one-off leg (`*one_off`).
  auto leg_for = [this, &picker](const WeightedBackend& backend,
                                 const std::string& key, bool* one_off) {
    const std::shared_ptr<Leg>* leg = picker.LegFor(key);
    *one_off = leg == nullptr;
    return leg != nullptr ? *leg : pickers_->OneOffLeg(backend);
  };
  // A weighted draw among the backends; one with no endpoints is skipped
  // for this attempt while another has some.
  thread_local absl::InsecureBitGen gen;
  uint64_t excluded = 0;
  std::string why;
  for (size_t i = split->Draw(gen, excluded); i < split->size();
       i = split->Draw(gen, excluded)) {
    excluded |= uint64_t{1} << i;
    bool one_off = false;
    std::shared_ptr<Leg> leg =
        leg_for(split->backends()[i], split->key(i), &one_off);
    if (leg == nullptr) continue;  // the Mesh is shut down
    absl::StatusOr<CallHandle> picked = pick_in(leg);
    if (picked.ok() && picker.Outdated(*leg)) {
      // The backend's policy came after the picker was built and before
      // its listener rebuilt it (a new backend's discovery answers on its
      // own thread, the policy before the endpoints): a balancer made
      // before it must not pick. A picker built now refits or remakes the
      // leg; a policy coming after this pick is a later event.
      picked->Complete(CallOutcome::kCancelled);
      std::shared_ptr<const ChannelPicker> fresh = pickers_->Rebuild();
      if (const std::shared_ptr<Leg>* again = fresh->LegFor(split->key(i))) {
        leg = *again;
      }
      picked = pick_in(leg);
    }
    if (picked.ok()) {
      return Picked{std::move(leg), *std::move(picked), &split->backends()[i]};
    }
    absl::StrAppend(&why, why.empty() ? "" : "; ",
                    leg->destination->NoEndpointsStatus().message());
    if (one_off) {
      // Not waited on: nothing else keeps its destination, so its
      // discovery would start over each time the call came back to it.
      // It may be that destination's last owner: not on this thread.
      DestroyLater([l = std::move(leg)] {});
      continue;
    }
    wait_on->push_back(leg->destination);
  }
  if (mesh_->shut_down()) {
    return absl::UnavailableError(
        absl::StrCat("mesh is shut down; call to '", target_, "'"));
  }
  return absl::UnavailableError(
      absl::StrCat("no backend of the traffic split of '", target_,
                   "' has endpoints (", why, ")"));
}

void ChannelCore::StartAttempt(std::unique_ptr<Call> call) {
  absl::Status early;
  // Replaced by the pick, or left unused when the call ends early. (An
  // empty message: a status with one allocates, on every call.)
  absl::StatusOr<Picked> picked = absl::UnknownError("");
  // One clock read serves the attempt's checks and its limits below (the
  // pick between takes well under a microsecond).
  const absl::Time now = absl::Now();
  if (mesh_->shut_down()) {
    early = absl::CancelledError(
        absl::StrCat("mesh shut down; call to '", target_, "'"));
  } else if (call->cancelled()) {
    early = CancelledStatus();
  } else if (now >= call->deadline && !call->waited) {
    // Spent before an attempt could start (a tiny timeout, a long backoff):
    // nothing is sent.
    early = absl::DeadlineExceededError(
        absl::StrCat("deadline passed before sending to '", target_, "'"));
  } else {
    // A call back from waiting picks under the current split and direct
    // endpoint: the config may have changed while it waited. (One whose
    // wait ran into its deadline picks once more, for the reason it found
    // no endpoint.)
    std::shared_ptr<const ChannelPicker> picker = std::move(call->picker);
    if (picker == nullptr || call->waited) picker = PickerForCall();
    std::vector<std::shared_ptr<Destination>> wait_on;
    picked = Pick(*call, *picker, &wait_on);
    if (picked.ok() && now >= call->deadline) {
      picked->handle.Complete(CallOutcome::kCancelled);
      early = absl::DeadlineExceededError(
          absl::StrCat("deadline passed before sending to '", target_, "'"));
    } else if (!picked.ok()) {
      if (!wait_on.empty() && Wait(call, wait_on)) return;
      early = std::move(picked).status();
      if (!call->queue_full.empty()) {
        early = absl::UnavailableError(
            absl::StrCat(early.message(), "; ", call->queue_full));
      }
      // Its wait ran out: say which limit ended it.
      if (call->waited && call->wait_expired && !mesh_->shut_down()) {
        early =
            call->deadline <= absl::Now()
                ? absl::DeadlineExceededError(absl::StrCat(
                      "deadline passed while waiting for endpoints: ",
                      early.message()))
                : absl::Status(
                      early.code(),
                      absl::StrCat(early.message(), "; waited ",
                                   absl::FormatDuration(call->fail_fast),
                                   " for endpoints (",
                                   call->backend_fail_fast
                                       ? "the backend's queue fail-fast timeout"
                                       : "ChannelOptions::fail_fast_timeout",
                                   ")"));
      }
    }
  }
  if (!early.ok()) {
    CallResult result;
    result.status = std::move(early);
    Finish(*call, std::move(result));
    // A retry, or a call that waited for endpoints, runs on a gRPC or timer
    // thread, where the call (and the caller's callback in it) must not be
    // destroyed; a first attempt is on the caller's own thread.
    if (call->attempts > 0 || call->waited) {
      DestroyLater([c = std::move(call)] {});
    }
    return;
  }
  std::optional<Attempt> made;
  TransportRequest req;
  if (absl::Status refused = MakeAttempt(*call, *picked, now, &made, &req);
      !refused.ok()) {
    CallResult result;
    result.status = std::move(refused);
    Finish(*call, std::move(result));
    if (call->attempts > 0 || call->waited) {
      DestroyLater([c = std::move(call)] {});
    }
    return;
  }
  call->metrics->RecordAttempt(/*is_retry=*/call->attempts > 1);
  Attempt& attempt = *made;
  // The endpoint lives in the load record the handle shares, so moving the
  // handle into the callback leaves the reference valid.
  const Endpoint& endpoint = attempt.handle.endpoint();
  if (call->external != nullptr) {
    AttemptRetryHint hint;
    hint.may_retry = call->retryable && call->replayable;
    hint.response_classes = &call->route->response_classes;
    hint.retry_on = &call->retry->retry_on;
    hint.retry_on_http_status = &call->retry->retry_on_http_status;
    call->external->BeginAttempt(hint);
    ExternalAttempts& external = *call->external;
    external.Send(endpoint, std::move(req),
                  [self = shared_from_this(), attempt = std::move(attempt),
                   call = std::move(call)](TransportResponse r) mutable {
                    self->OnAttemptDone(call, attempt, std::move(r));
                  });
    return;
  }
  Transport& transport = attempt.leg->destination->transport();
  if (call->stream != nullptr) {
    std::shared_ptr<StreamCall> stream = call->stream;
    stream->Open(shared_from_this(), std::move(call), std::move(attempt),
                 transport, endpoint, std::move(req));
    return;
  }
  if (call->hedge != nullptr) {
    // Its attempts run side by side (hedged_call.cc), never on the
    // caller's thread.
    StartHedging(std::move(call), std::move(attempt), std::move(req));
    return;
  }
  if (call->blocking_thread == std::this_thread::get_id()) {
    // A synchronous call on its caller's thread: sent and awaited here.
    TransportResponse response =
        transport.SendAndWait(endpoint, std::move(req));
    OnAttemptDone(call, attempt, std::move(response));
    return;
  }
  transport.Send(endpoint, std::move(req),
                 [self = shared_from_this(), attempt = std::move(attempt),
                  call = std::move(call)](TransportResponse response) mutable {
                   // The callback keeps owning what it holds: the transport
                   // releases it off gRPC's threads.
                   self->OnAttemptDone(call, attempt, std::move(response));
                 });
}

absl::Status ChannelCore::MakeAttempt(Call& call, Picked& picked,
                                      absl::Time now,
                                      std::optional<Attempt>* out,
                                      TransportRequest* out_req) {
  // The backend's filters' failure injector, then its policy: drops, then
  // its circuit breaker. Such a call never reaches an endpoint, so it is
  // not retried.
  Destination& backend = *picked.leg->destination;
  BackendPolicyState& policy = backend.backend_policy();
  absl::Status refused;
  bool counted = false;
  const WeightedBackend* filters = picked.backend;
  thread_local absl::InsecureBitGen abort_gen;
  if (filters != nullptr && filters->abort_per_million > 0 &&
      filters->abort_code != absl::StatusCode::kOk &&
      (filters->abort_per_million >= 1'000'000 ||
       absl::Uniform<uint32_t>(abort_gen, 0, 1'000'000) <
           filters->abort_per_million)) {
    refused = absl::Status(filters->abort_code, filters->abort_message);
  } else if (std::optional<std::string> category = policy.DrawDrop()) {
    refused = absl::UnavailableError(
        absl::StrCat("dropped by '", backend.target(),
                     "' (drop_overloads category '", *category, "')"));
  } else if (!policy.TryStartRequest(&counted)) {
    refused = policy.CircuitBreakerStatus();
  }
  if (!refused.ok()) {
    picked.handle.Complete(CallOutcome::kCancelled);
    return refused;
  }
  ++call.attempts;
  out->emplace(Attempt{std::move(picked.leg), std::move(picked.handle), nullptr,
                       counted, call.deadline});
  Attempt& attempt = **out;
  {
    // The attempt's own limits, the soonest deciding. A unary call is idle
    // from its request to its response; a stream watches its idleness
    // itself (StreamCall). A hedged call's attempts have no per-try
    // timeout: its hedges answer slowness.
    const CompiledRoute& route = *call.route;
    const bool unary = call.stream == nullptr;
    auto limit = [&](absl::Duration d, Attempt::Limit which) {
      if (d == absl::InfiniteDuration() || now + d >= attempt.deadline) return;
      attempt.deadline = now + d;
      attempt.limit = which;
    };
    if (unary && call.hedge == nullptr) {
      limit(call.retry->per_try_timeout, Attempt::Limit::kPerTry);
    }
    limit(call.response_timeout, Attempt::Limit::kResponse);
    if (unary) limit(route.idle_timeout, Attempt::Limit::kIdle);
  }
  attempt.backend = picked.backend;
  attempt.endpoint_metrics = attempt.leg->destination->EndpointMetricsFor(
      attempt.handle.endpoint().address);
  if (attempt.endpoint_metrics) attempt.endpoint_metrics->RecordAttempt();
  TransportRequest& req = *out_req;
  // An external call's client sends its own URL and body: its attempts
  // carry the method, headers, deadline and cancellation alone.
  if (call.external != nullptr) {
    req.method = call.http_method;
  } else {
    req.authority = attempt.leg->destination->authority().empty()
                        ? authority_
                        : attempt.leg->destination->authority();
    req.path = call.method;
  }
  // Only a call that may be retried or hedged keeps copies for the next
  // attempt.
  req.headers = call.replayable ? call.metadata : std::move(call.metadata);
  if (call.attempts > 1 && call.external == nullptr) {
    // gRFC A6: a retry or hedge says how many attempts came before it.
    req.headers.emplace_back("grpc-previous-rpc-attempts",
                             absl::StrCat(call.attempts - 1));
  }
  if (!call.route->request_headers.empty()) {
    ApplyHeaderModifier(call.route->request_headers, &req.headers);
  }
  if (attempt.backend != nullptr && !attempt.backend->request_headers.empty()) {
    ApplyHeaderModifier(attempt.backend->request_headers, &req.headers);
  }
  req.body = call.replayable ? call.body : std::move(call.body);
  req.deadline = attempt.deadline;
  req.cancel = call.cancel;
  req.route_labels = &call.route->labels;
  req.attempt = call.attempts;
  req.hedge = call.hedge != nullptr && call.attempts > 1;
  return absl::OkStatus();
}

bool ChannelCore::Wait(
    std::unique_ptr<Call>& call,
    const std::vector<std::shared_ptr<Destination>>& wait_on) {
  absl::Time now = absl::Now();
  // Backends with a queue fail-fast timeout of their own bound the wait
  // by the longest of theirs (one without: the channel's), from the first
  // wait on.
  if (!call->backend_wait) {
    call->backend_wait = true;
    absl::Duration longest = absl::ZeroDuration();
    bool all_own = true;
    for (const std::shared_ptr<Destination>& d : wait_on) {
      const absl::Duration own = d->backend_policy().fail_fast_timeout();
      all_own &= own != absl::InfiniteDuration();
      longest = std::max(longest, own);
    }
    if (all_own && !wait_on.empty()) {
      call->backend_fail_fast = true;
      call->fail_fast = longest;
      call->wait_until = std::min(call->deadline, now + longest);
    }
  }
  if (call->wait_expired || now >= call->wait_until ||
      call->quick_repicks >= 2) {
    return false;
  }
  const absl::Duration wait = call->wait_until - now;
  std::shared_ptr<Cancellation> cancel = call->cancel;
  // Set before the waiter fires kNever when every backend's queue is full.
  auto full = std::make_shared<std::string>();
  // The waiter takes the call; until it fires nothing else touches it.
  auto waiter = std::make_shared<PickWaiter>(
      mesh_->timers(),
      [self = shared_from_this(), call = std::move(call),
       full](PickWaiter::Why why) mutable {
        switch (why) {
          case PickWaiter::Why::kReleased:
            call->waited = true;
            break;
          case PickWaiter::Why::kTimedOut:
            call->waited = true;
            call->wait_expired = true;
            break;
          case PickWaiter::Why::kCancelled:  // StartAttempt says so
            call->waited = true;
            break;
          case PickWaiter::Why::kReady:
            ++call->quick_repicks;
            break;
          case PickWaiter::Why::kNever:
            call->wait_expired = true;  // pick once more, then fail
            call->queue_full = std::move(*full);
            break;
        }
        self->StartAttempt(std::move(call));
      },
      std::move(cancel));
  bool ready = false;
  bool queued = false;
  for (const std::shared_ptr<Destination>& d : wait_on) {
    switch (d->AddWaiter(waiter)) {
      case Destination::WaitResult::kReady:
        ready = true;
        break;
      case Destination::WaitResult::kQueued:
        queued = true;
        break;
      case Destination::WaitResult::kFull:
        *full =
            absl::StrCat("the queue of '", d->target(), "' is full (capacity ",
                         d->backend_policy().queue_capacity(), ")");
        break;
      case Destination::WaitResult::kNever:
        break;
    }
  }
  if (ready) {
    // Endpoints came between the pick and the queuing: pick again, here.
    // (Queued on another backend too, the waiter is dropped there.)
    waiter->Fire(PickWaiter::Why::kReady);
  } else if (!queued) {
    waiter->Fire(PickWaiter::Why::kNever);
  } else {
    waiter->Arm(wait);
    waiter->FireOnCancel();
  }
  return true;
}

void ChannelCore::OnAttemptDone(std::unique_ptr<Call>& call, Attempt& attempt,
                                TransportResponse response) {
  if (attempt.counted) {
    attempt.leg->destination->backend_policy().EndRequest();
  }
  // A record may have moved (DNS): the source may look again early.
  if (response.never_sent) attempt.leg->destination->OnConnectFailure();
  const CompiledRoute& route = *call->route;
  bool failure =
      IsFailure(route.response_classes, response.status, response.http_status);
  std::string address = attempt.handle.endpoint().address;
  attempt.handle.Complete(OutcomeOf(response.status, failure));
  if (attempt.endpoint_metrics) {
    attempt.endpoint_metrics->RecordResponse(
        failure, static_cast<int>(response.status.code()));
  }

  AttemptEnd end;
  end.code = response.status.code();
  end.classified_failure = failure;
  end.never_sent = response.never_sent;
  end.route_retryable = call->retryable;
  end.replayable = call->replayable;
  end.retry_connect_failures = options_.retry_connect_failures;
  end.connect_retries = call->connect_retries;
  end.retry_on = &call->retry->retry_on;
  end.retry_on_http_status = &call->retry->retry_on_http_status;
  end.http_status = response.http_status;
  const bool timed_out =
      response.status.code() == absl::StatusCode::kDeadlineExceeded &&
      attempt.deadline < call->deadline;
  end.per_try_timed_out = timed_out && attempt.limit == Attempt::Limit::kPerTry;
  // The response and idle timeouts end the call (Linkerd does not retry
  // them).
  const bool final_timeout =
      attempt.idle_expired ||
      (timed_out && attempt.limit != Attempt::Limit::kPerTry);
  // A stream that received anything, or an external call whose answer
  // reached the application, is the caller's now: not retried.
  const bool committed =
      (call->stream != nullptr && call->stream->committed()) ||
      (call->external != nullptr && call->external->Committed());
  if (RetryWanted(end) && !final_timeout && !mesh_->shut_down() &&
      !call->cancelled() && !committed) {
    const RetryPolicy& policy = *call->retry;
    thread_local absl::InsecureBitGen gen;
    absl::Duration wait =
        RetryBackoff(policy, static_cast<int>(call->attempts), gen);
    RetryVerdict verdict = DecideRetry(
        call->attempts, policy.max_attempts, absl::Now() + wait, call->deadline,
        [&call] { return call->routes->budget->TryWithdraw(); });
    if (verdict == RetryVerdict::kMaxAttempts) {
      call->metrics->RecordRetrySkipped(RetrySkipReason::kMaxAttempts);
    } else if (verdict == RetryVerdict::kBudget) {
      call->metrics->RecordRetrySkipped(RetrySkipReason::kBudget);
    } else if (verdict == RetryVerdict::kRetry) {
      if (response.never_sent) ++call->connect_retries;
      call->last_endpoint = std::move(address);
      if (wait <= absl::ZeroDuration()) return StartAttempt(std::move(call));
      absl::AnyInvocable<void()> retry = [self = shared_from_this(),
                                          call = std::move(call)]() mutable {
        self->StartAttempt(std::move(call));
      };
      // After Mesh shutdown the timer refuses it: run it now, to fail fast.
      if (!mesh_->RunLater(wait, retry)) retry();
      return;
    }
    // kNoTime: a retry the deadline does not leave room for; the call ends.
  }
  CallResult result;
  result.endpoint = std::move(address);
  result.status = std::move(response.status);
  if (end.per_try_timed_out) {
    result.status = absl::DeadlineExceededError(absl::StrCat(
        "attempt ", call->attempts, " to '", target_, "' (", result.endpoint,
        ") passed the route's per-try timeout of ",
        absl::FormatDuration(call->retry->per_try_timeout),
        call->retryable ? " and was not retried" : "", ": ",
        result.status.message()));
  } else if (final_timeout) {
    const bool idle =
        attempt.idle_expired || attempt.limit == Attempt::Limit::kIdle;
    result.status = absl::DeadlineExceededError(absl::StrCat(
        "call to '", target_, "' (", result.endpoint, ") passed the route's ",
        idle ? "idle" : "response", " timeout of ",
        absl::FormatDuration(idle ? route.idle_timeout
                                  : call->response_timeout),
        call->stream != nullptr && idle ? " (nothing sent or received)" : "",
        ": ", result.status.message()));
  }
  if (call->external != nullptr && response.http_status > 0) {
    call->metrics->http_responses.Record(failure, response.http_status);
  }
  result.body = std::move(response.body);
  result.headers = std::move(response.headers);
  result.trailers = std::move(response.trailers);
  if (call->stream == nullptr) {
    if (attempt.backend != nullptr &&
        !attempt.backend->response_headers.empty()) {
      ApplyHeaderModifier(attempt.backend->response_headers, &result.headers);
    }
    if (!route.response_headers.empty()) {
      ApplyHeaderModifier(route.response_headers, &result.headers);
    }
  }
  Finish(*call, std::move(result), failure);
}

absl::Status ChannelCore::CancelledStatus() const {
  return absl::CancelledError(
      absl::StrCat("call to '", target_, "' cancelled by the caller"));
}

void ChannelCore::Finish(Call& call, CallResult result) {
  bool failure =
      IsFailure(call.route->response_classes, result.status, /*http=*/0);
  Finish(call, std::move(result), failure);
}

void ChannelCore::Finish(Call& call, CallResult result, bool failure) {
  call.metrics->RecordResponse(failure, static_cast<int>(result.status.code()),
                               absl::Now() - call.start);
  call.done(std::move(result));
}

}  // namespace mesh::internal

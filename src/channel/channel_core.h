// ChannelCore is the data path behind mesh::Channel: validate the call, match
// its route, pick a backend of the traffic split and an endpoint of that
// backend, send through the backend's transport, classify the response,
// settle the pick, retry when the route and budget allow, and hand the caller
// a CallResult.
//
// Thread-safe. In-flight calls keep it alive (their callbacks hold a
// shared_ptr), so a Channel may be destroyed with calls in flight.
#ifndef MESH_SRC_CHANNEL_CHANNEL_CORE_H_
#define MESH_SRC_CHANNEL_CHANNEL_CORE_H_

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mesh/channel.h"
#include "mesh/mesh.h"
#include "src/balance/balancer.h"
#include "src/base/mutex.h"
#include "src/channel/channel_picker.h"
#include "src/channel/destination.h"
#include "src/channel/external_call.h"
#include "src/channel/mesh_core.h"

namespace mesh::internal {

class StreamCall;

class ChannelCore : public std::enable_shared_from_this<ChannelCore> {
 public:
  // `authority` is what calls to clusters carry (the target's name:port).
  ChannelCore(std::string target, std::string authority,
              const ChannelOptions& options, std::shared_ptr<MeshCore> mesh,
              std::shared_ptr<Destination> destination,
              std::unique_ptr<Balancer> balancer);
  ~ChannelCore();

  const std::string& target() const { return target_; }
  void CallRawAsync(absl::string_view method, std::string request,
                    const CallOptions& options,
                    absl::AnyInvocable<void(CallResult)> done);
  // The same, waiting on the caller's thread, which sends and awaits the
  // attempts itself unless the call has to wait for endpoints, routes, a
  // fault's delay or a retry's backoff (then another thread carries it on,
  // as CallRawAsync does).
  CallResult CallRaw(absl::string_view method, std::string request,
                     const CallOptions& options);
  // Starts an HTTP request whose attempts the application's client carries
  // (external_call.h).
  void StartExternal(ExternalCall call,
                     absl::AnyInvocable<void(CallResult)> done);
  TapHub& tap_hub() const { return mesh_->tap_hub(); }
  const std::shared_ptr<IdentityStore>& identity() const {
    return mesh_->identity();
  }
  // Opens a stream (Channel::StartStream): routed, picked, waited for and
  // retried as a call, its attempts opening transport streams.
  std::shared_ptr<StreamCall> StartStream(absl::string_view method,
                                          const CallOptions& options,
                                          StreamObserver* observer);
  // The target's balancer statistics, and those of its backends' legs.
  std::vector<EndpointStats> Stats() { return pickers_->Stats(); }
  // Channel::WaitForEndpoints: the routes first when the source requires
  // them, then the backends they send to (or the target itself).
  absl::Status WaitForEndpoints(absl::Duration timeout);

  // Runs `task` on the mesh's timer thread after `delay`; false, leaving
  // `task` with the caller, after the Mesh's shutdown.
  bool RunLater(absl::Duration delay, absl::AnyInvocable<void()>& task) {
    return mesh_->RunLater(delay, task);
  }

  const std::shared_ptr<TimerThread>& timers() const { return mesh_->timers(); }

  // Requests larger than this are not kept for replay, so never retried.
  static constexpr size_t kMaxReplayBytes = 64 * 1024;
  Destination& destination() const { return apex_; }

 private:
  friend class StreamCall;
  struct Call;
  struct Picked;
  struct Attempt;

  // Validates a call or stream (`stream` not null) and starts routing it.
  // `blocking`: the caller's thread, for a synchronous call.
  void Start(absl::string_view method, std::string request,
             const CallOptions& options,
             absl::AnyInvocable<void(CallResult)> done,
             std::shared_ptr<StreamCall> stream, std::thread::id blocking = {});
  // Start's common part once the call is valid: its deadline inputs, then
  // routing (or waiting for routes).
  void Launch(std::unique_ptr<Call> call, const CallOptions& options);
  // Matches the call's route and applies it (deadline, metrics, budget,
  // fault), then starts the first attempt.
  void RouteCall(std::unique_ptr<Call> call);
  // For a call to a destination that awaits its first config: queues it
  // until the config comes, within its deadline and the fail-fast timeout,
  // then routes it (or fails it saying why there are no routes).
  void WaitForRoutes(std::unique_ptr<Call> call);
  // Sends the first attempt after a fault's delay, or fails the call with
  // the fault's abort.
  void ApplyFault(std::unique_ptr<Call> call);
  // Picks a backend (when the config splits traffic) and an endpoint of it,
  // and sends one attempt; or, when discovery may still bring endpoints,
  // queues the call until it does (see Wait).
  void StartAttempt(std::unique_ptr<Call> call);
  // For a call whose pick failed while some of `wait_on` may still get
  // endpoints: queues it on them, no longer than its deadline and the
  // channel's fail-fast timeout allow, and returns true (the call is taken;
  // StartAttempt runs again when it is released, on the timer thread). False
  // (the call left with the caller) when it must fail now.
  bool Wait(std::unique_ptr<Call>& call,
            const std::vector<std::shared_ptr<Destination>>& wait_on);
  // Classifies one attempt's response; retries, or completes the call.
  // `call` and `attempt` stay owned by the transport's callback (released
  // off gRPC's threads); a retry moves `call` on.
  void OnAttemptDone(std::unique_ptr<Call>& call, Attempt& attempt,
                     TransportResponse response);
  // The backend and endpoint for the call's next attempt, from `picker`'s
  // legs, or the status to fail it with; then `wait_on` lists the destinations
  // tried that may still get endpoints (not answered yet, or existing with
  // none).
  absl::StatusOr<Picked> Pick(
      const Call& call, const ChannelPicker& picker,
      std::vector<std::shared_ptr<Destination>>* wait_on);
  // Admits an attempt of `call` to `picked` (the backend's failure
  // injector, drops and circuit breaker) and builds it: `attempt` and
  // `req`, the call's attempts counted. Not OK: refused, the pick given
  // back and nothing to send.
  absl::Status MakeAttempt(Call& call, Picked& picked, absl::Time now,
                           std::optional<Attempt>* attempt,
                           TransportRequest* req);
  // Hedging (hedged_call.cc): sends the call's first attempt, and its
  // hedges after the policy's delay, each to an endpoint not yet tried;
  // the first OK or fatal answer completes the call, the others are
  // cancelled.
  struct Hedge;
  void StartHedging(std::unique_ptr<Call> call, Attempt attempt,
                    TransportRequest req);
  // Sends the next hedge if the call is still open and `generation` is
  // the hedge's current timer (an older timer does nothing), or is
  // kHedgeNow. When none can be sent (attempts, budget, deadline, no
  // endpoint left untried) and none is in flight, ends the call with the
  // last answer.
  void SendHedge(const std::shared_ptr<Hedge>& hedge, uint64_t generation);
  // Arms the next hedge's timer `wait` from now, as a new generation.
  // Under the hedge's lock (`generation` is the new one).
  // False when the timer refuses it (the Mesh is shut down).
  bool ArmHedgeTimer(const std::shared_ptr<Hedge>& hedge, uint64_t generation,
                     absl::Duration wait);
  void SendHedgeAttempt(const std::shared_ptr<Hedge>& hedge, Attempt attempt,
                        TransportRequest req);
  // One attempt's answer: the call's (cancelling the others) if OK or
  // fatal; else the next hedge at once (or after the server's pushback).
  void OnHedgeDone(const std::shared_ptr<Hedge>& hedge, Attempt& attempt,
                   TransportResponse response);
  // Completes a hedged call with `response` (`attempt`'s, `failure` as
  // classified) and cancels its other attempts.
  void FinishHedge(const std::shared_ptr<Hedge>& hedge,
                   std::unique_ptr<Call> call, TransportResponse response,
                   const std::string& address, bool failure,
                   const WeightedBackend* backend);
  // The current picker; one built before the first config is built anew
  // once the config has come.
  std::shared_ptr<const ChannelPicker> PickerForCall();
  // The status of a call its caller cancelled.
  absl::Status CancelledStatus() const;
  // Completes the call: route metrics, then the caller's callback. Without
  // `failure`, the result is classified with no HTTP status (no response).
  void Finish(Call& call, CallResult result);
  void Finish(Call& call, CallResult result, bool failure);

  const std::string target_;
  const std::string authority_;
  // What RequestHashPolicy::kChannel hashes by: one value per channel.
  const uint64_t channel_id_;
  const ChannelOptions options_;
  const std::shared_ptr<MeshCore> mesh_;
  // Builds the pickers calls read; shared with its change listeners.
  const std::shared_ptr<PickerPublisher> pickers_;
  Destination& apex_;  // the target's destination (pickers_ keeps it)
};

// How an attempt counts for the endpoint's statistics, given whether its
// route classified it as a failure.
CallOutcome OutcomeOf(const absl::Status& status, bool classified_failure);

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_CHANNEL_CORE_H_

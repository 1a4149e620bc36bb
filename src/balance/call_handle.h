// CallHandle: one picked endpoint, in flight, and CallOutcome: how its call
// ended, for the endpoint's statistics (pending count, RTT sample, failures
// and ejection).
//
//   absl::StatusOr<CallHandle> h = balancer->Pick();
//   if (h.ok()) { send to h->endpoint().address; h->Complete(outcome); }
#ifndef MESH_SRC_BALANCE_CALL_HANDLE_H_
#define MESH_SRC_BALANCE_CALL_HANDLE_H_

#include <cstdint>
#include <memory>

#include "mesh/endpoint.h"
#include "src/base/clock.h"

namespace mesh::internal {

struct EndpointLoad;

// How a call ended, for the endpoint's statistics.
enum class CallOutcome {
  kSuccess,          // an answer from the server (resets the failure count)
  kFailure,          // an answer that is a failure (INTERNAL, UNKNOWN, ...):
                     // its RTT may raise the estimate (a new peak) but is
                     // not blended in, so fast failures do not pull it
                     // down; ejection_consecutive_failures in a row eject
  kEndpointFailure,  // UNAVAILABLE: refused, reset, unreachable, or the
                     // server saying it cannot serve (ejects the endpoint
                     // at once; its RTT counts as for kFailure)
  kCancelled,        // the caller gave up (deadline, cancel): no verdict
};

// One picked endpoint, in flight. Move-only. While it lives, the endpoint's
// pending count includes it; Complete() (or destruction) settles the pending
// count and records the round-trip time as an RTT sample, whatever the
// outcome. Thread-compatible.
class CallHandle {
 public:
  // Made by a balancer's pick, at `start_nanos` on `clock`.
  CallHandle(std::shared_ptr<EndpointLoad> load, const Clock* clock,
             int64_t start_nanos);
  CallHandle(CallHandle&& other) noexcept;
  CallHandle& operator=(CallHandle&& other) noexcept;
  CallHandle(const CallHandle&) = delete;
  CallHandle& operator=(const CallHandle&) = delete;
  ~CallHandle();  // Complete(kSuccess) if not yet completed

  const Endpoint& endpoint() const;
  // Settles this call; later calls do nothing.
  void Complete(CallOutcome outcome);
  // For a stream: takes the time to its first response as the RTT sample
  // now (once); Complete then settles the pending count and the outcome
  // without another sample, so a long stream's life is no latency.
  void SampleLatency();

 private:
  std::shared_ptr<EndpointLoad> load_;
  const Clock* clock_ = nullptr;
  int64_t start_nanos_ = 0;
  bool rtt_sampled_ = false;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_CALL_HANDLE_H_

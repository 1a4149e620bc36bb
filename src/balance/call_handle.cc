#include "src/balance/call_handle.h"

#include <utility>

#include "src/balance/endpoint_load.h"

namespace mesh::internal {

CallHandle::CallHandle(std::shared_ptr<EndpointLoad> load, const Clock* clock,
                       int64_t start_nanos)
    : load_(std::move(load)), clock_(clock), start_nanos_(start_nanos) {}

CallHandle::CallHandle(CallHandle&& other) noexcept
    : load_(std::move(other.load_)),
      clock_(other.clock_),
      start_nanos_(other.start_nanos_),
      rtt_sampled_(other.rtt_sampled_) {}

CallHandle& CallHandle::operator=(CallHandle&& other) noexcept {
  if (this != &other) {
    Complete(CallOutcome::kSuccess);
    load_ = std::move(other.load_);
    clock_ = other.clock_;
    start_nanos_ = other.start_nanos_;
    rtt_sampled_ = other.rtt_sampled_;
  }
  return *this;
}

CallHandle::~CallHandle() { Complete(CallOutcome::kSuccess); }

const Endpoint& CallHandle::endpoint() const { return *load_->endpoint; }

void CallHandle::Complete(CallOutcome outcome) {
  if (load_ == nullptr) return;
  load_->Settle(outcome, start_nanos_, *clock_, rtt_sampled_);
  load_.reset();
}

void CallHandle::SampleLatency() {
  if (load_ == nullptr || rtt_sampled_) return;
  rtt_sampled_ = true;
  load_->SampleRtt(start_nanos_, *clock_);
}

}  // namespace mesh::internal

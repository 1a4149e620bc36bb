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
      start_nanos_(other.start_nanos_) {}

CallHandle& CallHandle::operator=(CallHandle&& other) noexcept {
  if (this != &other) {
    Complete(CallOutcome::kSuccess);
    load_ = std::move(other.load_);
    clock_ = other.clock_;
    start_nanos_ = other.start_nanos_;
  }
  return *this;
}

CallHandle::~CallHandle() { Complete(CallOutcome::kSuccess); }

const Endpoint& CallHandle::endpoint() const { return *load_->endpoint; }

void CallHandle::Complete(CallOutcome outcome) {
  if (load_ == nullptr) return;
  load_->Settle(outcome, start_nanos_, *clock_);
  load_.reset();
}

}  // namespace mesh::internal

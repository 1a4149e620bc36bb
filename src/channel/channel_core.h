// ChannelCore is the data path behind mesh::Channel: validate the call, pick
// an endpoint, send it through the destination's transport, settle the pick
// with the outcome, and hand the caller a CallResult.
//
// Thread-safe. In-flight calls keep it alive (their callbacks hold a
// shared_ptr), so a Channel may be destroyed with calls in flight.
#ifndef MESH_SRC_CHANNEL_CHANNEL_CORE_H_
#define MESH_SRC_CHANNEL_CHANNEL_CORE_H_

#include <memory>
#include <string>

#include "mesh/channel.h"
#include "mesh/mesh.h"
#include "src/channel/destination.h"
#include "src/channel/mesh_core.h"

namespace mesh::internal {

class ChannelCore : public std::enable_shared_from_this<ChannelCore> {
 public:
  ChannelCore(std::string target, const ChannelOptions& options,
              std::shared_ptr<MeshCore> mesh,
              std::shared_ptr<Destination> destination,
              std::unique_ptr<Balancer> balancer);
  ~ChannelCore();

  const std::string& target() const { return target_; }
  void CallRawAsync(absl::string_view method, std::string request,
                    const CallOptions& options,
                    absl::AnyInvocable<void(CallResult)> done);
  std::vector<EndpointStats> Stats() const { return balancer_->Stats(); }

  // Requests larger than this are not kept for replay, so never retried.
  static constexpr size_t kMaxReplayBytes = 64 * 1024;
  Destination& destination() const { return *destination_; }

 private:
  struct Call;
  // Picks an endpoint and sends one attempt; on a retryable failure of a
  // retryable route, with deadline and budget left, sends another.
  void StartAttempt(std::unique_ptr<Call> call);

  const std::string target_;
  const ChannelOptions options_;
  const std::shared_ptr<MeshCore> mesh_;
  const std::shared_ptr<Destination> destination_;
  const std::unique_ptr<Balancer> balancer_;
};

// OK, or INVALID_ARGUMENT naming what is wrong with a gRPC method path
// ("/pkg.Service/Method") or a metadata name.
absl::Status ValidateMethod(absl::string_view method);
absl::Status ValidateMetadata(const Metadata& metadata);

// How a transport status counts for the endpoint's statistics.
CallOutcome OutcomeOf(const absl::Status& status);

// Whether a call that ended with `status` may be retried (on a retryable
// route): the default failure classes less DEADLINE_EXCEEDED.
bool IsRetryable(const absl::Status& status);

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_CHANNEL_CORE_H_

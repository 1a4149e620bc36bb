#include "src/channel/external_call.h"

#include <utility>

#include "src/channel/channel_core.h"
#include "src/channel/describe.h"
#include "src/route/classify.h"
#include "src/route/retry_decision.h"

namespace mesh::internal {

// Reaches a Channel's core (Channel befriends it).
struct ChannelAccess {
  static ChannelCore& Core(Channel& channel) { return *channel.core_; }
};

bool AttemptRetryHint::MayRetry(int http_status) const {
  if (!may_retry) return false;
  // The channel's own decision, for an answer with this status.
  static const std::vector<ResponseClass> kNone;
  AttemptEnd end;
  end.http_status = http_status;
  end.classified_failure =
      IsFailure(response_classes != nullptr ? *response_classes : kNone,
                absl::OkStatus(), http_status);
  end.route_retryable = true;
  end.replayable = true;
  end.retry_on = retry_on;
  end.retry_on_http_status = retry_on_http_status;
  return RetryWanted(end);
}

void StartExternalCall(Channel& channel, ExternalCall call,
                       absl::AnyInvocable<void(CallResult)> done) {
  ChannelAccess::Core(channel).StartExternal(std::move(call), std::move(done));
}

TapHub& TapHubOf(Channel& channel) {
  return ChannelAccess::Core(channel).tap_hub();
}

bool DestinationMissing(Channel& channel) {
  DestinationView view = ChannelAccess::Core(channel).destination().View();
  return view.has_update && !view.exists;
}

std::shared_ptr<const IdentityMaterial> IdentityOf(Channel& channel) {
  const std::shared_ptr<IdentityStore>& store =
      ChannelAccess::Core(channel).identity();
  return store != nullptr ? store->Current() : nullptr;
}

}  // namespace mesh::internal

#include "src/channel/external_call.h"

#include <utility>

#include "src/channel/channel_core.h"
#include "src/channel/describe.h"
#include "src/route/classify.h"

namespace mesh::internal {

// Reaches a Channel's core (Channel befriends it).
struct ChannelAccess {
  static ChannelCore& Core(Channel& channel) { return *channel.core_; }
};

bool AttemptRetryHint::MayRetry(int http_status) const {
  if (!may_retry) return false;
  // As RetryWanted: a route that retries by gRPC code never retries an
  // HTTP answer; one that lists HTTP statuses retries those.
  if (retry_on != nullptr && !retry_on->empty()) return false;
  if (retry_on_http_status != nullptr && !retry_on_http_status->empty()) {
    for (const HttpStatusRange& range : *retry_on_http_status) {
      const auto status = static_cast<uint32_t>(http_status);
      if (status >= range.min && status <= range.max) return true;
    }
    return false;
  }
  static const std::vector<ResponseClass> kNone;
  return IsFailure(response_classes != nullptr ? *response_classes : kNone,
                   absl::OkStatus(), http_status);
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

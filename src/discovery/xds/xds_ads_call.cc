#include "src/discovery/xds/xds_ads_call.h"

#include <algorithm>
#include <utility>

#include "src/transport/grpc_callback_queue.h"

namespace mesh::internal::xds {
namespace {

constexpr char kMethod[] =
    "/envoy.service.discovery.v3.AggregatedDiscoveryService/"
    "StreamAggregatedResources";

}  // namespace

std::shared_ptr<grpc::Channel> MakeAdsChannel(
    const std::string& server_uri, int max_message_bytes,
    std::shared_ptr<grpc::ChannelCredentials> credentials) {
  // The ADS stream is a callback-API call: its queue stays (see there).
  PinGrpcCallbackQueue();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(std::max(1024, max_message_bytes));
  return grpc::CreateCustomChannel(server_uri, std::move(credentials), args);
}

AdsCall::AdsCall(grpc::GenericStub* stub, Mutex* mu, Owner* owner)
    : stub_(stub), mu_(mu), owner_(owner) {}

void AdsCall::Prepare() {
  stub_->PrepareBidiStreamingCall(&context_, kMethod, grpc::StubOptions(),
                                  this);
}

void AdsCall::Begin() {
  // Held until the read side has ended: writes come from other threads
  // (new watches, timers), and gRPC must not finish the call under them.
  AddHold();
  StartRead(&message_);
  StartCall();
}

void AdsCall::Send(std::string bytes) {
  mu_->AssertHeld();
  if (closed_) return;  // the stream is ending: the next one asks again
  queue_.push_back(std::move(bytes));
  if (!writing_) WriteNext();
}

void AdsCall::OnWriteDone(bool ok) {
  MutexLock lock(mu_);
  writing_ = false;
  if (ok) WriteNext();
}

void AdsCall::OnReadDone(bool ok) {
  if (!ok) {
    // The stream ends: no write starts any more, then the hold goes and
    // OnDone follows.
    {
      MutexLock lock(mu_);
      closed_ = true;
    }
    RemoveHold();
    return;
  }
  got_responses_ = true;
  Owner* const owner = owner_;
  owner->OnAdsResponse(this, message_);
  message_.Clear();
  // The next response is read (and ACKed) while this one's deliveries run:
  // a slow observer holds up neither the stream nor other clusters. The
  // hold keeps the call, and so its owner (which waits for the call's
  // end), alive until they have run.
  AddHold();
  StartRead(&message_);
  owner->AfterAdsResponse();
  RemoveHold();  // may end the call: `this` is not used after
}

void AdsCall::OnDone(const grpc::Status& status) {
  owner_->OnAdsDone(this, status, got_responses_);
  delete this;
}

void AdsCall::WriteNext() {
  mu_->AssertHeld();
  if (queue_.empty() || closed_) return;
  grpc::Slice slice(queue_.front());
  queue_.erase(queue_.begin());
  writing_buffer_ = grpc::ByteBuffer(&slice, 1);
  writing_ = true;
  StartWrite(&writing_buffer_);
}

}  // namespace mesh::internal::xds

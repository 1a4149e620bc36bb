// AdsCall: one ADS stream (envoy.service.discovery.v3.AggregatedDiscovery
// Service/StreamAggregatedResources) of an XdsClient, as a gRPC callback
// call: requests queued and written one at a time, in order; each response
// handed to the owner, and the next one read while the owner's deliveries
// for it run, so a slow observer holds up neither the stream nor its ACKs.
//
//   call_ = new AdsCall(&stub_, &mu_, this);
//   call_->Prepare();
//   call_->Send(request.SerializeAsString());  // under mu_
//   call_->Begin();
//
// Thread-safe as stated per method; deletes itself once gRPC is done with
// it, after telling its owner (OnAdsDone).
#ifndef MESH_SRC_DISCOVERY_XDS_XDS_ADS_CALL_H_
#define MESH_SRC_DISCOVERY_XDS_XDS_ADS_CALL_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "src/base/mutex.h"

namespace mesh::internal::xds {

// The channel an XdsClient's ADS stream runs on: to `server_uri`, taking
// responses of up to `max_message_bytes`.
std::shared_ptr<grpc::Channel> MakeAdsChannel(
    const std::string& server_uri, int max_message_bytes,
    std::shared_ptr<grpc::ChannelCredentials> credentials);

class AdsCall final
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // What the call tells the client that made it, on gRPC's threads.
  class Owner {
   public:
    // A response; called without `mu`.
    virtual void OnAdsResponse(AdsCall* call,
                               const grpc::ByteBuffer& response) = 0;
    // After OnAdsResponse, once the next read has started: runs what the
    // response queued for the observers. The call is kept until it returns.
    virtual void AfterAdsResponse() = 0;
    // The call ended with `status`; `got_responses`: it brought at least
    // one. The call is deleted when this returns.
    virtual void OnAdsDone(AdsCall* call, const grpc::Status& status,
                           bool got_responses) = 0;

   protected:
    ~Owner() = default;
  };

  // `mu` is the owner's lock, which guards the call's write queue; `stub`,
  // `mu` and `owner` are not used after OnAdsDone returns (the owner may
  // be gone before the call deletes itself).
  AdsCall(grpc::GenericStub* stub, Mutex* mu, Owner* owner);

  // Binds the reactor to a new call; requests may be queued from here on.
  void Prepare();
  // Starts the call and its first read; requests queued go out.
  void Begin();
  // Queues one serialized DiscoveryRequest; dropped once the stream ends
  // (the next stream asks for everything again).
  // REQUIRES: `mu` held (asserted: the analysis cannot see that the
  // caller's lock is the one given here).
  void Send(std::string bytes);
  // Ends the stream; OnAdsDone follows. Any thread.
  void Cancel() { context_.TryCancel(); }

  // Under `mu`: why the owner cancelled the stream (a message it could not
  // parse); empty if it did not.
  std::string rejection;

  void OnWriteDone(bool ok) override;
  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  void WriteNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  grpc::GenericStub* const stub_;
  Mutex* const mu_;
  Owner* const owner_;
  grpc::ClientContext context_;
  grpc::ByteBuffer message_;
  std::vector<std::string> queue_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer writing_buffer_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool got_responses_ = false;
};

}  // namespace mesh::internal::xds

#endif  // MESH_SRC_DISCOVERY_XDS_XDS_ADS_CALL_H_

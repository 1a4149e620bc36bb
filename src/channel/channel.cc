#include "mesh/channel.h"

#include <google/protobuf/message_lite.h>

#include <utility>

#include "src/base/mutex.h"
#include "src/channel/channel_core.h"
#include "src/channel/stream_call.h"

namespace mesh {
namespace {

// A call's status, with its body parsed into `response` and its metadata
// and endpoint into `info` (if not null).
absl::Status TakeResult(CallResult r, google::protobuf::MessageLite* response,
                        ResponseInfo* info) {
  if (r.status.ok() && !response->ParseFromString(r.body)) {
    r.status = absl::InternalError("response does not parse as " +
                                   response->GetTypeName());
  }
  if (info != nullptr) {
    info->headers = std::move(r.headers);
    info->trailers = std::move(r.trailers);
    info->endpoint = std::move(r.endpoint);
  }
  return std::move(r.status);
}

}  // namespace

Channel::Channel(std::shared_ptr<internal::ChannelCore> core)
    : core_(std::move(core)) {}

Channel::~Channel() = default;

const std::string& Channel::target() const { return core_->target(); }

void Channel::CallRawAsync(absl::string_view method, std::string request,
                           const CallOptions& options,
                           absl::AnyInvocable<void(CallResult)> done) {
  core_->CallRawAsync(method, std::move(request), options, std::move(done));
}

CallResult Channel::CallRaw(absl::string_view method, std::string request,
                            const CallOptions& options) {
  return core_->CallRaw(method, std::move(request), options);
}

void Channel::CallAsync(absl::string_view method,
                        const google::protobuf::MessageLite& request,
                        google::protobuf::MessageLite* response,
                        const CallOptions& options,
                        absl::AnyInvocable<void(absl::Status)> done) {
  CallAsync(method, request, response, options, nullptr, std::move(done));
}

void Channel::CallAsync(absl::string_view method,
                        const google::protobuf::MessageLite& request,
                        google::protobuf::MessageLite* response,
                        const CallOptions& options, ResponseInfo* info,
                        absl::AnyInvocable<void(absl::Status)> done) {
  std::string bytes;
  if (!request.SerializeToString(&bytes)) {
    done(absl::InvalidArgumentError("request " + request.GetTypeName() +
                                    " does not serialize"));
    return;
  }
  core_->CallRawAsync(
      method, std::move(bytes), options,
      [response, info, done = std::move(done)](CallResult r) mutable {
        done(TakeResult(std::move(r), response, info));
      });
}

absl::Status Channel::Call(absl::string_view method,
                           const google::protobuf::MessageLite& request,
                           google::protobuf::MessageLite* response,
                           const CallOptions& options, ResponseInfo* info) {
  std::string bytes;
  if (!request.SerializeToString(&bytes)) {
    return absl::InvalidArgumentError("request " + request.GetTypeName() +
                                      " does not serialize");
  }
  return TakeResult(core_->CallRaw(method, std::move(bytes), options), response,
                    info);
}

std::unique_ptr<ClientStream> Channel::StartStream(absl::string_view method,
                                                   const CallOptions& options,
                                                   StreamObserver* observer) {
  return std::unique_ptr<ClientStream>(
      new ClientStream(core_->StartStream(method, options, observer)));
}

ClientStream::ClientStream(std::shared_ptr<internal::StreamCall> call)
    : call_(std::move(call)) {}

ClientStream::~ClientStream() {
  if (!call_->closed()) call_->Cancel();
}

bool ClientStream::Write(std::string message) {
  return call_->Write(std::move(message));
}

void ClientStream::WritesDone() { call_->WritesDone(); }

void ClientStream::Read() { call_->Read(); }

void ClientStream::Cancel() { call_->Cancel(); }

std::vector<EndpointStats> Channel::EndpointStatsSnapshot() const {
  return core_->Stats();
}

absl::Status Channel::WaitForEndpoints(absl::Duration timeout) const {
  return core_->WaitForEndpoints(timeout);
}

std::optional<ServiceConfig> Channel::service_config() const {
  return core_->destination().service_config();
}

}  // namespace mesh

#include "src/transport/grpc_transport.h"

#include <grpcpp/generic/generic_stub.h>

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/base/destroy_later.h"
#include "src/model/address.h"
#include "src/transport/grpc_callback_queue.h"

namespace mesh::internal {
namespace {

std::string ToString(const grpc::string_ref& s) {
  return std::string(s.data(), s.size());
}

Metadata ToMetadata(
    const std::multimap<grpc::string_ref, grpc::string_ref>& m) {
  Metadata out;
  out.reserve(m.size());
  for (const auto& [k, v] : m) out.emplace_back(ToString(k), ToString(v));
  return out;
}

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  out.reserve(buffer.Length());
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// gRPC's pick_first fails a call it could not place on a connection with
// this message: the request was never written to any server.
bool IsConnectFailure(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE &&
         absl::StrContains(status.error_message(),
                           "failed to connect to all addresses");
}

// gRPC answers ride on HTTP 200. A status the client may have made up itself
// (UNAVAILABLE, CANCELLED, DEADLINE_EXCEEDED) without any response headers
// says nothing about HTTP: 0.
int HttpStatusOf(const grpc::Status& status, const TransportResponse& r) {
  if (r.never_sent) return 0;
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return r.headers.empty() ? 0 : 200;
    default:
      return 200;
  }
}

// The call whose callback this thread is running, if any: Shutdown() called
// from inside that callback (say, by destroying the Mesh) must not wait for
// the very call it runs in.
thread_local const void* finishing_call = nullptr;
// The call this thread is cancelling (TryCancel holds its context's lock;
// gRPC may finish the call inline, and the context must then outlive it).
thread_local const void* cancelling_call = nullptr;

}  // namespace

struct GrpcTransport::Call {
  grpc::ClientContext context;
  grpc::ByteBuffer request;
  grpc::ByteBuffer response;
  Callback done;
  std::shared_ptr<grpc::Channel> channel;
  std::shared_ptr<Cancellation> cancel;
  uint64_t cancel_watch = 0;
};

GrpcTransport::GrpcTransport(const GrpcTransportOptions& options) {
  PinGrpcCallbackQueue();
  // Each endpoint gets its own connection, closed with its channel, rather
  // than one shared through gRPC's global subchannel pool.
  args_.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args_.SetLoadBalancingPolicyName("pick_first");
  for (const auto& [key, value] : options.channel_args) {
    args_.SetInt(key, value);
  }
}

GrpcTransport::~GrpcTransport() { Shutdown(); }

absl::StatusOr<std::shared_ptr<grpc::Channel>> GrpcTransport::ChannelFor(
    const std::string& address) {
  auto it = channels_.find(address);
  if (it != channels_.end()) return it->second;
  absl::StatusOr<SocketAddress> parsed = SocketAddress::Parse(address);
  if (!parsed.ok()) return parsed.status();
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      GrpcTargetFor(*parsed), grpc::InsecureChannelCredentials(), args_);
  // An address that is no longer live (a pick from just before an update)
  // gets a channel for this call only.
  if (!retained_known_ || retained_.contains(address)) {
    channels_.emplace(address, channel);
  }
  return channel;
}

void GrpcTransport::Send(const Endpoint& endpoint, TransportRequest request,
                         Callback done) {
  auto call = std::make_shared<Call>();
  absl::Status error;
  {
    MutexLock lock(&mu_);
    if (shutdown_) {
      error = absl::UnavailableError("transport is shut down");
    } else {
      absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
          ChannelFor(endpoint.address);
      if (channel.ok()) {
        call->channel = *std::move(channel);
        in_flight_.emplace(call.get(), call);
      } else {
        error = channel.status();
      }
    }
  }
  if (!error.ok()) {
    TransportResponse response;
    response.status = std::move(error);
    response.never_sent = true;
    done(std::move(response));
    return;
  }
  call->done = std::move(done);
  if (request.deadline != absl::InfiniteFuture()) {
    call->context.set_deadline(absl::ToChronoTime(request.deadline));
  }
  const std::string& authority = endpoint.authority_override.empty()
                                     ? request.authority
                                     : endpoint.authority_override;
  if (!authority.empty()) call->context.set_authority(authority);
  for (const auto& [key, value] : request.headers) {
    call->context.AddMetadata(key, value);
  }
  grpc::Slice slice(request.body);
  call->request = grpc::ByteBuffer(&slice, 1);
  grpc::GenericStub stub(call->channel);
  // in_flight_ owns the call; the completion refers to it by pointer.
  Call* raw = call.get();
  if (request.cancel != nullptr) {
    // Before the call starts: a cancel now makes gRPC fail it at its start.
    call->cancel = std::move(request.cancel);
    call->cancel_watch = call->cancel->Watch([raw] {
      cancelling_call = raw;
      raw->context.TryCancel();
      cancelling_call = nullptr;
    });
  }
  stub.UnaryCall(&raw->context, request.path, grpc::StubOptions(),
                 &raw->request, &raw->response,
                 [this, raw](grpc::Status status) { Finish(raw, status); });
}

void GrpcTransport::Finish(Call* call, const grpc::Status& status) {
  // Until this returns, a cancel may still be touching the context.
  if (call->cancel != nullptr) call->cancel->Unwatch(call->cancel_watch);
  TransportResponse response;
  response.status =
      absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                   status.error_message());
  if (!status.ok() && !status.error_details().empty()) {
    response.status.SetPayload(kGrpcStatusDetailsUrl,
                               absl::Cord(status.error_details()));
  }
  response.headers = ToMetadata(call->context.GetServerInitialMetadata());
  response.trailers = ToMetadata(call->context.GetServerTrailingMetadata());
  response.never_sent = IsConnectFailure(status);
  response.http_status = HttpStatusOf(status, response);
  if (status.ok()) response.body = Flatten(call->response);
  Callback done = std::move(call->done);
  finishing_call = call;
  done(std::move(response));
  finishing_call = nullptr;
  std::shared_ptr<Call> owned;
  {
    MutexLock lock(&mu_);
    auto it = in_flight_.find(call);
    owned = std::move(it->second);
    in_flight_.erase(it);
  }
  // The callback may be the last owner of a transport or a whole
  // destination, and the call's context holds a reference to the
  // grpc::Channel, which may be the last one (an update dropped the
  // endpoint): neither may be released on this gRPC thread (destroy_later.h).
  // The call itself is destroyed here, as gRPC's own callback users do —
  // handing it to DestroyLater made another thread tear down a gRPC call per
  // call
  // (~10-20 us of CPU per call at one call in flight, docs/benchmarks.md) —
  // while `keep` holds the channel, so that the context's reference is not
  // the last; `keep` and the callback go to DestroyLater. Nothing touches
  // `this` after the reset.
  std::shared_ptr<grpc::Channel> keep = owned->channel;
  if (cancelling_call == call) {
    // Finished inline by TryCancel, which still holds the context's lock.
    DestroyLater([owned = std::move(owned)] {});
  }
  owned.reset();
  DestroyLater([keep = std::move(keep), done = std::move(done)] {});
}

void GrpcTransport::RetainOnly(const std::vector<std::string>& addresses) {
  // Built (sorted) before taking the lock every Send takes.
  AddressSet retained(addresses);
  MutexLock lock(&mu_);
  retained_known_ = true;
  retained_ = std::move(retained);
  std::vector<std::shared_ptr<grpc::Channel>> dropped;
  for (auto it = channels_.begin(); it != channels_.end();) {
    if (!retained_.contains(it->first)) {
      dropped.push_back(std::move(it->second));
      channels_.erase(it++);
    } else {
      ++it;
    }
  }
  // Updates can arrive on gRPC threads (a discovery stream's callback).
  if (!dropped.empty()) DestroyLater([dropped = std::move(dropped)] {});
}

void GrpcTransport::Shutdown() {
  std::vector<std::shared_ptr<Call>> calls;
  {
    MutexLock lock(&mu_);
    shutdown_ = true;
    for (const auto& [ptr, call] : in_flight_) calls.push_back(call);
  }
  for (const auto& call : calls) call->context.TryCancel();
  DestroyLater([calls = std::move(calls)] {});
  // The call this thread is finishing, if any, cannot end while we wait.
  Call* own = static_cast<Call*>(const_cast<void*>(finishing_call));
  MutexLock lock(&mu_);
  // (Finish's Unlock wakes this wait.)
  auto drained = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return in_flight_.empty() ||
           (in_flight_.size() == 1 && in_flight_.contains(own));
  };
  mu_.Await(absl::Condition(&drained));
  DestroyLater([channels = std::move(channels_)] {});
  channels_.clear();
}

size_t GrpcTransport::ChannelCount() const {
  MutexLock lock(&mu_);
  return channels_.size();
}

bool GrpcTransport::HasChannel(const std::string& address) const {
  MutexLock lock(&mu_);
  return channels_.contains(address);
}

}  // namespace mesh::internal

std::unique_ptr<mesh::Transport> mesh::NewGrpcTransport(
    const GrpcTransportOptions& options) {
  return std::make_unique<internal::GrpcTransport>(options);
}

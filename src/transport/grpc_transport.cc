#include "src/transport/grpc_transport.h"

#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/base/destroy_later.h"
#include "src/model/address.h"
#include "src/tls/server_name_match.h"
#include "src/transport/byte_buffer_bytes.h"
#include "src/transport/grpc_call_parts.h"
#include "src/transport/grpc_callback_queue.h"

namespace mesh::internal {
namespace {

// The calls whose callbacks this thread is running, innermost last:
// Shutdown() called from inside one (say, by destroying the Mesh) must not
// wait for them. Nested when a callback cancels another call that gRPC
// finishes inline (a hedged call's winner cancelling its losers).
thread_local std::vector<const void*> finishing_calls;
// The call this thread is cancelling, innermost (TryCancel holds its
// context's lock; gRPC may finish the call inline, and the context must
// then outlive it). Saved and put back around each cancel, as cancels nest
// too.
thread_local const void* cancelling_call = nullptr;

}  // namespace

void BeginFinishingCall(const void* call) { finishing_calls.push_back(call); }
void EndFinishingCall() { finishing_calls.pop_back(); }
const std::vector<const void*>& FinishingCalls() { return finishing_calls; }

struct GrpcTransport::Call {
  // Declared first, so destroyed last: the context holds the channel too,
  // and its reference must not be the last. gRPC's library is not built
  // for TSan, so a last release inside ~ClientContext frees the channel
  // after an acquire TSan cannot see (a false race with RetainOnly's
  // release on another thread, seen in CI).
  std::shared_ptr<grpc::Channel> channel;
  grpc::ClientContext context;
  std::string tls_address;  // empty: plaintext
  grpc::ByteBuffer request;
  grpc::ByteBuffer response;
  Callback done;
  std::shared_ptr<Cancellation> cancel;
  uint64_t cancel_watch = 0;
};

GrpcTransport::GrpcTransport(const GrpcTransportOptions& options,
                             std::shared_ptr<IdentityStore> identity,
                             std::shared_ptr<EndpointStores> endpoint_stores)
    : identity_(std::move(identity)),
      endpoint_stores_(endpoint_stores != nullptr
                           ? std::move(endpoint_stores)
                           : std::make_shared<EndpointStores>()) {
  // Each endpoint gets its own connection, closed with its channel, rather
  // than one shared through gRPC's global subchannel pool.
  args_.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args_.SetLoadBalancingPolicyName("pick_first");
  for (const auto& [key, value] : options.channel_args) {
    args_.SetInt(key, value);
  }
}

GrpcTransport::~GrpcTransport() { Shutdown(); }

bool GrpcTransport::Fits(Connection& c, const Endpoint& endpoint) const {
  if (endpoint.tls != nullptr) {
    if (c.policy == nullptr) return false;
    if (c.policy != endpoint.tls) {
      // The same context re-sent (a control plane's new copy): keep the
      // connection, and compare pointers from now on.
      if (!(*c.policy == *endpoint.tls)) return false;
      c.policy = endpoint.tls;
    }
    return c.generation == c.store->generation();
  }
  if (c.policy != nullptr) return false;
  const bool tls = identity_ != nullptr && !endpoint.tls_identity.empty();
  if (!tls) return c.store == nullptr;
  return c.store != nullptr && c.identity == endpoint.tls_identity &&
         c.generation == identity_->generation();
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> GrpcTransport::ChannelFor(
    const Endpoint& endpoint, bool* tls_out) {
  const std::string& address = endpoint.address;
  const bool policy = endpoint.tls != nullptr;
  const bool tls =
      policy || (identity_ != nullptr && !endpoint.tls_identity.empty());
  *tls_out = tls;
  if (identity_ != nullptr && !tls && identity_->options().require_identity) {
    return absl::UnavailableError(absl::StrCat(
        "mesh: endpoint ", address,
        " has no TLS identity, and MeshOptions.identity.require_identity "
        "refuses plaintext"));
  }
  auto it = channels_.find(address);
  if (it != channels_.end() && Fits(it->second, endpoint)) {
    return it->second.channel;
  }
  absl::StatusOr<SocketAddress> parsed = SocketAddress::Parse(address);
  if (!parsed.ok()) return parsed.status();
  Connection connection;
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  grpc::ChannelArguments args = args_;
  if (policy) {
    absl::StatusOr<std::shared_ptr<IdentityStore>> store =
        endpoint_stores_->For(endpoint.tls->certificates);
    if (!store.ok()) {
      return absl::UnavailableError(
          absl::StrCat("mesh: TLS to ", address,
                       ": its certificates: ", store.status().message()));
    }
    std::shared_ptr<const IdentityMaterial> material = (*store)->Current();
    connection.policy = endpoint.tls;
    connection.store = *std::move(store);
    connection.identity = DescribeMatchers(endpoint.tls->server_names);
    connection.generation = material->generation;
    connection.handshakes = std::make_shared<HandshakeRecord>();
    credentials =
        EndpointTlsCredentials(*material, *endpoint.tls, connection.handshakes);
    if (!endpoint.tls->sni.empty()) {
      args.SetSslTargetNameOverride(endpoint.tls->sni);
    }
  } else if (tls) {
    std::shared_ptr<const IdentityMaterial> material = identity_->Current();
    connection.identity = endpoint.tls_identity;
    connection.store = identity_;
    connection.generation = material->generation;
    connection.handshakes = std::make_shared<HandshakeRecord>();
    credentials = MutualTlsCredentials(*material, endpoint.tls_identity,
                                       connection.handshakes);
    // A DNS-like identity is also the server name (SNI) the handshake
    // announces, as Linkerd's proxies expect; the name check is the
    // identity verifier's, and each call sets its own authority.
    SetServerNameFor(endpoint.tls_identity, &args);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  connection.channel =
      grpc::CreateCustomChannel(GrpcTargetFor(*parsed), credentials, args);
  // An address that is no longer live (a pick from just before an update)
  // gets a channel for this call only. A live one's channel replaces the
  // one made for another identity or an older certificate (calls on that
  // one finish on it). An address listed twice with two identities would
  // swap its channel at each call: discovery gives one identity per
  // address.
  if (!retained_known_ || retained_.contains(address)) {
    if (it != channels_.end()) {
      DestroyLater([old = std::move(it->second)] {});
      it->second = connection;
    } else {
      channels_.emplace(address, connection);
    }
  }
  return connection.channel;
}

absl::Status GrpcTransport::Admit(const Endpoint& endpoint,
                                  const std::shared_ptr<Call>& call) {
  MutexLock lock(&mu_);
  if (shutdown_) return absl::UnavailableError("transport is shut down");
  bool tls = false;
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      ChannelFor(endpoint, &tls);
  if (!channel.ok()) return channel.status();
  call->channel = *std::move(channel);
  if (tls) call->tls_address = endpoint.address;
  in_flight_.emplace(call.get(), call);
  return absl::OkStatus();
}

void GrpcTransport::Begin(Call* call, const Endpoint& endpoint,
                          TransportRequest& request) {
  Prepare(call->context, endpoint, request);
  grpc::Slice slice(std::move(request.body));
  call->request = grpc::ByteBuffer(&slice, 1);
  if (request.cancel != nullptr) {
    // Before the call starts: a cancel now makes gRPC fail it at its start.
    call->cancel = std::move(request.cancel);
    call->cancel_watch = call->cancel->Watch([call] {
      const void* outer = cancelling_call;
      cancelling_call = call;
      call->context.TryCancel();
      cancelling_call = outer;
    });
  }
}

void GrpcTransport::Send(const Endpoint& endpoint, TransportRequest request,
                         Callback done) {
  // The callback API's first use in this process keeps its queue alive.
  PinGrpcCallbackQueue();
  auto call = std::make_shared<Call>();
  if (absl::Status error = Admit(endpoint, call); !error.ok()) {
    return done(NotSent(std::move(error)));
  }
  call->done = std::move(done);
  // in_flight_ owns the call; the completion refers to it by pointer.
  Call* raw = call.get();
  Begin(raw, endpoint, request);
  grpc::GenericStub stub(raw->channel);
  stub.UnaryCall(&raw->context, request.path, grpc::StubOptions(),
                 &raw->request, &raw->response,
                 [this, raw](grpc::Status status) { Finish(raw, status); });
}

namespace {

// The calling thread's completion queue for SendAndWait: one call at a time,
// polled by the thread while it waits; shut down and drained when the
// thread ends.
class ThreadQueue {
 public:
  ~ThreadQueue() {
    queue_.Shutdown();
    void* tag;
    bool ok;
    while (queue_.Next(&tag, &ok)) {
    }
  }
  grpc::CompletionQueue& queue() { return queue_; }

 private:
  grpc::CompletionQueue queue_;
};

}  // namespace

TransportResponse GrpcTransport::SendAndWait(const Endpoint& endpoint,
                                             TransportRequest request) {
  auto call = std::make_shared<Call>();
  if (absl::Status error = Admit(endpoint, call); !error.ok()) {
    return NotSent(std::move(error));
  }
  Begin(call.get(), endpoint, request);
  thread_local ThreadQueue thread_queue;
  grpc::CompletionQueue& queue = thread_queue.queue();
  grpc::GenericStub stub(call->channel);
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> reader =
      stub.PrepareUnaryCall(&call->context, request.path, call->request,
                            &queue);
  reader->StartCall();
  grpc::Status status;
  reader->Finish(&call->response, &status, call.get());
  void* tag = nullptr;
  bool ok = false;
  // The queue holds this call's completion only, and it comes whatever the
  // call's fate (an answer, the deadline, a cancel, Shutdown's cancel).
  if (!queue.Next(&tag, &ok) || tag != call.get()) {
    status = grpc::Status(grpc::StatusCode::INTERNAL,
                          "mesh: the thread's completion queue ended");
  }
  if (call->cancel != nullptr) call->cancel->Unwatch(call->cancel_watch);
  TransportResponse response =
      ResponseOf(call->context, status, call->tls_address);
  if (status.ok()) response.body = BytesOf(call->response);
  reader.reset();
  {
    MutexLock lock(&mu_);
    in_flight_.erase(call.get());
  }
  return response;
}

void GrpcTransport::Finish(Call* call, const grpc::Status& status) {
  // Until this returns, a cancel may still be touching the context.
  if (call->cancel != nullptr) call->cancel->Unwatch(call->cancel_watch);
  TransportResponse response =
      ResponseOf(call->context, status, call->tls_address);
  if (status.ok()) response.body = BytesOf(call->response);
  Callback done = std::move(call->done);
  BeginFinishingCall(call);
  done(std::move(response));
  EndFinishingCall();
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
  std::vector<Connection> dropped;
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
  std::vector<std::shared_ptr<Stream>> streams;
  {
    MutexLock lock(&mu_);
    shutdown_ = true;
    for (const auto& [ptr, call] : in_flight_) calls.push_back(call);
    for (const auto& [ptr, stream] : streams_) streams.push_back(stream);
  }
  for (const auto& call : calls) call->context.TryCancel();
  for (const auto& stream : streams) CancelStream(*stream);
  DestroyLater([calls = std::move(calls), streams = std::move(streams)] {});
  // The calls and streams this thread is finishing, if any, cannot end
  // while we wait.
  const std::vector<const void*> own = finishing_calls;
  MutexLock lock(&mu_);
  // (Finish's and StreamEnded's Unlock wake this wait.)
  auto drained = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    size_t own_calls = 0;
    size_t own_streams = 0;
    for (const void* p : own) {
      own_calls +=
          in_flight_.contains(static_cast<Call*>(const_cast<void*>(p))) ? 1 : 0;
      own_streams +=
          streams_.contains(static_cast<Stream*>(const_cast<void*>(p))) ? 1 : 0;
    }
    return in_flight_.size() == own_calls && streams_.size() == own_streams;
  };
  mu_.Await(absl::Condition(&drained));
  DestroyLater([channels = std::move(channels_)] {});
  channels_.clear();
}

namespace {

const char* StateName(grpc_connectivity_state state) {
  switch (state) {
    case GRPC_CHANNEL_IDLE:
      return "IDLE";
    case GRPC_CHANNEL_CONNECTING:
      return "CONNECTING";
    case GRPC_CHANNEL_READY:
      return "READY";
    case GRPC_CHANNEL_TRANSIENT_FAILURE:
      return "TRANSIENT_FAILURE";
    case GRPC_CHANNEL_SHUTDOWN:
      return "SHUTDOWN";
  }
  return "UNKNOWN";
}

}  // namespace

std::vector<std::pair<std::string, std::string>>
GrpcTransport::DescribeConnection(const std::string& address) const {
  // Copied under the lock without the channel: a copy of it could be the
  // last reference once the lock is let go, and end it on this thread.
  grpc_connectivity_state state;
  std::string identity;
  uint64_t generation = 0;
  std::shared_ptr<HandshakeRecord> handshakes;
  std::shared_ptr<IdentityStore> store;
  {
    MutexLock lock(&mu_);
    auto it = channels_.find(address);
    if (it == channels_.end()) return {};
    state = it->second.channel->GetState(false);
    identity = it->second.identity;
    generation = it->second.generation;
    handshakes = it->second.handshakes;
    store = it->second.store;
  }
  std::vector<std::pair<std::string, std::string>> out = {
      {"state", StateName(state)}};
  if (handshakes == nullptr) {
    out.emplace_back("tls", "no_identity");
    out.emplace_back("no_tls_reason", identity_ != nullptr
                                          ? "not_provided_by_service_discovery"
                                          : "disabled");
    return out;
  }
  HandshakeRecord::Summary h = handshakes->Get();
  out.emplace_back("tls", "true");
  out.emplace_back("server_id", identity);
  std::shared_ptr<const IdentityMaterial> current = store->Current();
  out.emplace_back("client_certificate_serial",
                   current->generation != generation ? "(an earlier version)"
                   : current->cert_chain_pem.empty() ? "(none)"
                                                     : current->leaf.serial);
  out.emplace_back("handshakes_succeeded", absl::StrCat(h.succeeded));
  out.emplace_back("handshakes_refused", absl::StrCat(h.refused));
  if (!h.presented.empty()) out.emplace_back("presented", h.presented);
  if (h.refused > 0) {
    out.emplace_back("last_refusal", h.last_refusal);
    out.emplace_back("last_refusal_at",
                     absl::FormatTime(h.last_refusal_at, absl::UTCTimeZone()));
  }
  return out;
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

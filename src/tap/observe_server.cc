#include "src/tap/observe_server.h"

#include <grpc/grpc.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "linkerd/tap.grpc.pb.h"
#include "src/base/destroy_later.h"
#include "src/base/mutex.h"
#include "src/tap/observe_convert.h"
#include "src/tap/observe_pump.h"

namespace mesh::internal {
namespace {

namespace tap = ::io::linkerd::proxy::tap;

// The identities of a TLS peer as gRPC's AuthContext exposes them: every
// subject alternative name (URIs, DNS names, ...) and the subject CN.
std::vector<std::string> PresentedIdentities(
    const grpc::ServerContextBase& context) {
  std::vector<std::string> out;
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr) return out;
  for (const char* property :
       {GRPC_X509_SAN_PROPERTY_NAME, GRPC_X509_CN_PROPERTY_NAME}) {
    for (const grpc::string_ref& value : auth->FindPropertyValues(property)) {
      out.emplace_back(value.data(), value.size());
    }
  }
  return out;
}

}  // namespace

bool IsLocalPeer(absl::string_view peer) {
  for (absl::string_view local :
       {"ipv4:127.0.0.1:", "ipv6:[::1]:", "ipv6:[::ffff:127.0.0.1]:"}) {
    if (absl::StartsWith(peer, local)) return true;
  }
  return false;
}

bool IsAllowedIdentity(const std::vector<std::string>& presented,
                       const std::vector<std::string>& allowed) {
  return std::any_of(
      presented.begin(), presented.end(), [&](const std::string& identity) {
        return std::find(allowed.begin(), allowed.end(), identity) !=
               allowed.end();
      });
}

namespace {

// The access rule of every call: with TLS the certificate's identity
// decides, wherever the peer is; without, the peer's address.
grpc::Status CheckTapAccess(const grpc::ServerContextBase& context, bool tls,
                            const std::vector<std::string>& allowed) {
  if (!tls) {
    if (IsLocalPeer(context.peer())) return grpc::Status::OK;
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        absl::StrCat("tap: peer ", context.peer(),
                     " is not on this host; only 127.0.0.1 and ::1 may tap"));
  }
  std::vector<std::string> presented = PresentedIdentities(context);
  if (IsAllowedIdentity(presented, allowed)) return grpc::Status::OK;
  return grpc::Status(
      grpc::StatusCode::UNAUTHENTICATED,
      presented.empty()
          ? absl::StrCat("tap: peer ", context.peer(),
                         " presented no certificate identity")
          : absl::StrCat("tap: identity ", absl::StrJoin(presented, ", "),
                         " of peer ", context.peer(),
                         " is not allowed to tap"));
}

// Holds every call of the server, whatever its service, to the access rule:
// a call the rule refuses is cancelled with UNAUTHENTICATED (and the rule's
// message) as it arrives, before its handler starts. A handler still runs,
// on a cancelled call: nothing it sends reaches the peer. So services that
// check nothing themselves (CSDS) are bound by the rule as Observe is.
class AccessGuard final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  AccessGuard(bool tls, std::vector<std::string> allowed_identities)
      : tls_(tls), allowed_identities_(std::move(allowed_identities)) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    grpc::ServerContextBase* context = info->server_context();
    grpc::Status access = CheckTapAccess(*context, tls_, allowed_identities_);
    if (!access.ok()) {
      grpc_call_cancel_with_status(context->c_call(),
                                   GRPC_STATUS_UNAUTHENTICATED,
                                   access.error_message().c_str(), nullptr);
    }
    return nullptr;  // nothing to intercept once decided
  }

 private:
  const bool tls_;
  const std::vector<std::string> allowed_identities_;
};

}  // namespace

// Observe is served raw (ByteBuffer in and out): a request that does not
// parse reaches mesh, which names the fault, instead of gRPC's own
// UNIMPLEMENTED with an empty message; and events are serialized on the
// ObserveWriter's thread.
class ObserveServer::Service final
    : public tap::Tap::WithRawCallbackMethod_Observe<tap::Tap::Service> {
 public:
  // `tls` false: plaintext, loopback peers only; `allowed_identities` is
  // then unused.
  Service(std::shared_ptr<TapHub> hub, bool tls,
          std::vector<std::string> allowed_identities)
      : hub_(std::move(hub)),
        tls_(tls),
        allowed_identities_(std::move(allowed_identities)) {}
  // After the server's Wait(): every stream's OnDone has unregistered it.
  // (Taking the lock also shows TSan that order, which it cannot see
  // through gRPC.)
  ~Service() {
    MutexLock lock(&mu_);
    open_.clear();
  }

  // Ends every open stream UNAVAILABLE; later ones are refused.
  void Stop() {
    std::vector<std::shared_ptr<ObservePump>> open;
    {
      MutexLock lock(&mu_);
      stopping_ = true;
      for (const auto& [stream, pump] : open_) open.push_back(pump);
    }
    for (const auto& pump : open) {
      pump->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                "tap: the server is stopping"));
    }
  }

  grpc::ServerWriteReactor<grpc::ByteBuffer>* Observe(
      grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* request) override {
    auto* stream = new Stream(this, context);
    stream->Begin(*request);
    return stream;
  }

 private:
  class Stream final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
   public:
    Stream(Service* service, grpc::CallbackServerContext* context)
        : service_(service),
          context_(context),
          pump_(std::make_shared<ObservePump>(&service->writer_, this,
                                              context)) {}

    // A refused call is finished through the pump too, which finishes a
    // stream once: OnCancel may follow (the AccessGuard cancels every call
    // it refuses) and must not finish it again.
    void Begin(const grpc::ByteBuffer& request) {
      if (grpc::Status access = service_->CheckAccess(*context_);
          !access.ok()) {
        return pump_->Finish(access);
      }
      absl::StatusOr<TapOptions> options =
          TapOptionsFromObserveBytes(Flatten(request));
      if (!options.ok()) {
        return pump_->Finish(
            grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                         std::string(options.status().message())));
      }
      std::weak_ptr<ObservePump> weak = pump_;
      absl::StatusOr<std::unique_ptr<TapSubscription>> sub =
          service_->hub_->Subscribe(*options, [weak] {
            if (std::shared_ptr<ObservePump> pump = weak.lock()) {
              pump->Ready();
            }
          });
      if (!sub.ok()) {
        // INVALID_ARGUMENT, or RESOURCE_EXHAUSTED at the subscription cap.
        return pump_->Finish(
            grpc::Status(static_cast<grpc::StatusCode>(sub.status().code()),
                         std::string(sub.status().message())));
      }
      if (!service_->Register(this, pump_)) {
        return pump_->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                          "tap: the server is stopping"));
      }
      pump_->Start(*std::move(sub));
    }

    void OnWriteDone(bool ok) override { pump_->WriteDone(ok); }
    void OnCancel() override { pump_->Finish(grpc::Status::CANCELLED); }
    void OnDone() override {
      service_->Unregister(this);
      // Unsubscribes here, outside the pump's lock: a hook firing now
      // finds the stream gone.
      std::unique_ptr<TapSubscription> sub = pump_->Detach();
      sub.reset();
      delete this;
    }

   private:
    Service* const service_;
    grpc::CallbackServerContext* const context_;
    const std::shared_ptr<ObservePump> pump_;
  };

  bool Register(Stream* stream, std::shared_ptr<ObservePump> pump) {
    MutexLock lock(&mu_);
    if (stopping_) return false;
    open_[stream] = std::move(pump);
    return true;
  }
  void Unregister(Stream* stream) {
    MutexLock lock(&mu_);
    open_.erase(stream);
  }

  // The server's AccessGuard has cancelled a refused call already; checked
  // again so that no subscription is made for it.
  grpc::Status CheckAccess(const grpc::CallbackServerContext& context) const {
    return CheckTapAccess(context, tls_, allowed_identities_);
  }

  // A request is small (gRPC bounds it at 4 MiB); one copy is simplest.
  static std::string Flatten(const grpc::ByteBuffer& buffer) {
    std::vector<grpc::Slice> slices;
    std::string out;
    if (!buffer.Dump(&slices).ok()) return out;
    out.reserve(buffer.Length());
    for (const grpc::Slice& slice : slices) {
      out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    return out;
  }

  const std::shared_ptr<TapHub> hub_;
  // Declared before the streams' pumps can exist and destroyed after the
  // server has waited for every stream's OnDone (~ObserveServer).
  ObserveWriter writer_;
  const bool tls_;
  const std::vector<std::string> allowed_identities_;
  Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<Stream*, std::shared_ptr<ObservePump>> open_
      ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::unique_ptr<ObserveServer>> ObserveServer::Start(
    const std::string& address, std::shared_ptr<TapHub> hub,
    const TapTlsOptions& tls,
    std::vector<std::shared_ptr<grpc::Service>> services) {
  const bool use_tls = !tls.cert_chain_pem.empty();
  std::unique_ptr<ObserveServer> server(new ObserveServer());
  server->service_ = std::make_unique<Service>(std::move(hub), use_tls,
                                               tls.allowed_identities);
  server->services_ = std::move(services);
  std::shared_ptr<grpc::ServerCredentials> credentials =
      grpc::InsecureServerCredentials();
  if (use_tls) {
    grpc::SslServerCredentialsOptions ssl(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = tls.client_ca_pem;
    ssl.pem_key_cert_pairs.push_back({tls.private_key_pem, tls.cert_chain_pem});
    credentials = grpc::SslServerCredentials(ssl);
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, credentials, &server->port_);
  builder.RegisterService(server->service_.get());
  for (const std::shared_ptr<grpc::Service>& service : server->services_) {
    builder.RegisterService(service.get());
  }
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      guards;
  guards.push_back(
      std::make_unique<AccessGuard>(use_tls, tls.allowed_identities));
  builder.experimental().SetInterceptorCreators(std::move(guards));
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat(
        "tap: cannot listen on '", address, "'",
        use_tls ? " with the given TLS certificate, key and CA" : ""));
  }
  return server;
}

ObserveServer::~ObserveServer() {
  if (server_ == nullptr) return;
  // Open streams end at once; Shutdown cancels what a client does not read
  // after 2 s, and waits for every stream's OnDone.
  service_->Stop();
  server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
  server_->Wait();
}

}  // namespace mesh::internal

#include "src/tap/observe_server.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "linkerd/tap.grpc.pb.h"
#include "src/tap/observe_convert.h"
#include "src/transport/reaper.h"

namespace mesh::internal {
namespace {

namespace tap = ::io::linkerd::proxy::tap;

// How often a stream handler looks up from waiting for events to see
// whether the client left or the server is stopping.
constexpr absl::Duration kPoll = absl::Milliseconds(50);

// The identities of a TLS peer as gRPC's AuthContext exposes them: every
// subject alternative name (URIs, DNS names, ...) and the subject CN.
std::vector<std::string> PresentedIdentities(
    const grpc::ServerContext& context) {
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

class ObserveServer::Service final : public tap::Tap::Service {
 public:
  // `tls` false: plaintext, loopback peers only; `allowed_identities` is
  // then unused.
  Service(std::shared_ptr<TapHub> hub, bool tls,
          std::vector<std::string> allowed_identities)
      : hub_(std::move(hub)),
        tls_(tls),
        allowed_identities_(std::move(allowed_identities)) {}

  void Stop() { stopping_.store(true); }

  grpc::Status Observe(grpc::ServerContext* context,
                       const tap::ObserveRequest* request,
                       grpc::ServerWriter<tap::TapEvent>* writer) override {
    if (grpc::Status access = CheckAccess(*context); !access.ok()) {
      return access;
    }
    absl::StatusOr<TapOptions> options = TapOptionsFromObserve(*request);
    if (!options.ok()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          std::string(options.status().message()));
    }
    absl::StatusOr<std::unique_ptr<TapSubscription>> sub =
        hub_->Subscribe(*options);
    if (!sub.ok()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          std::string(sub.status().message()));
    }
    bool client_left = false;
    while (!stopping_.load() && !(*sub)->done()) {
      if (context->IsCancelled()) {
        client_left = true;
        break;
      }
      std::optional<TapEvent> event = (*sub)->Next(kPoll);
      if (!event) continue;
      if (!writer->Write(TapEventToProto(*event))) {
        client_left = true;
        break;
      }
    }
    context->AddTrailingMetadata("mesh-tap-dropped-events",
                                 absl::StrCat((*sub)->dropped()));
    if (client_left) return grpc::Status::CANCELLED;
    if (stopping_.load() && !(*sub)->done()) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          "tap: the server is stopping");
    }
    return grpc::Status::OK;
  }

 private:
  // With TLS the certificate's identity decides, wherever the peer is.
  grpc::Status CheckAccess(const grpc::ServerContext& context) const {
    if (!tls_) {
      if (IsLocalPeer(context.peer())) return grpc::Status::OK;
      return grpc::Status(
          grpc::StatusCode::UNAUTHENTICATED,
          absl::StrCat("tap: peer ", context.peer(),
                       " is not on this host; only 127.0.0.1 and ::1 may tap"));
    }
    std::vector<std::string> presented = PresentedIdentities(context);
    if (IsAllowedIdentity(presented, allowed_identities_)) {
      return grpc::Status::OK;
    }
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        presented.empty()
            ? absl::StrCat("tap: peer ", context.peer(),
                           " presented no certificate identity")
            : absl::StrCat("tap: identity ", absl::StrJoin(presented, ", "),
                           " of peer ", context.peer(),
                           " is not allowed to tap"));
  }

  const std::shared_ptr<TapHub> hub_;
  const bool tls_;
  const std::vector<std::string> allowed_identities_;
  std::atomic<bool> stopping_{false};
};

absl::StatusOr<std::unique_ptr<ObserveServer>> ObserveServer::Start(
    const std::string& address, std::shared_ptr<TapHub> hub,
    const TapTlsOptions& tls) {
  const bool use_tls = !tls.cert_chain_pem.empty();
  std::unique_ptr<ObserveServer> server(new ObserveServer());
  server->service_ = std::make_unique<Service>(std::move(hub), use_tls,
                                               tls.allowed_identities);
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
  service_->Stop();
  // Handlers notice Stop() within kPoll and return; Shutdown waits for them.
  server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
  server_->Wait();
}

}  // namespace mesh::internal

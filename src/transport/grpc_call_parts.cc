#include "src/transport/grpc_call_parts.h"

#include <string>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/tls/chain_verify.h"
#include "src/tls/tls_credentials.h"

namespace mesh::internal {
namespace {

std::string ToString(const grpc::string_ref& s) {
  return std::string(s.data(), s.size());
}

}  // namespace

Metadata ToMetadata(
    const std::multimap<grpc::string_ref, grpc::string_ref>& m) {
  Metadata out;
  out.reserve(m.size());
  for (const auto& [k, v] : m) out.emplace_back(ToString(k), ToString(v));
  return out;
}

namespace {

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

}  // namespace

// What a finished call's context and status say (no body). A call over TLS
// (`tls_address` set) that could not connect says so, naming the address:
// with the expected and the presented identity when the identity check
// refused the server, OpenSSL's verify result when the chain check did
// ("certificate has expired"), else with gRPC's reason (a server that requires
// a client certificate not sent, say, closes the handshake).
TransportResponse ResponseOf(grpc::ClientContext& context,
                             const grpc::Status& status,
                             const std::string& tls_address) {
  TransportResponse response;
  response.never_sent = IsConnectFailure(status);
  std::string message = status.error_message();
  if (!tls_address.empty() && response.never_sent) {
    size_t at = message.find(kIdentityMismatch);
    if (at == std::string::npos) at = message.find(kChainRefused);
    message = at != std::string::npos
                  ? absl::StrCat("mesh: TLS handshake with ", tls_address,
                                 " refused: ", message.substr(at))
                  : absl::StrCat("mesh: no TLS connection to ", tls_address,
                                 ": ", message);
  }
  response.status =
      absl::Status(static_cast<absl::StatusCode>(status.error_code()), message);
  if (!status.ok() && !status.error_details().empty()) {
    response.status.SetPayload(kGrpcStatusDetailsUrl,
                               absl::Cord(status.error_details()));
  }
  response.headers = ToMetadata(context.GetServerInitialMetadata());
  response.trailers = ToMetadata(context.GetServerTrailingMetadata());
  response.http_status = HttpStatusOf(status, response);
  return response;
}

// The answer to a request that could not be sent (shut down, a bad
// address).
TransportResponse NotSent(absl::Status error) {
  TransportResponse response;
  response.status = std::move(error);
  response.never_sent = true;
  return response;
}

// A request's deadline, authority and metadata on its context.
void Prepare(grpc::ClientContext& context, const Endpoint& endpoint,
             const TransportRequest& request) {
  if (request.deadline != absl::InfiniteFuture()) {
    context.set_deadline(absl::ToChronoTime(request.deadline));
  }
  const std::string& authority = endpoint.authority_override.empty()
                                     ? request.authority
                                     : endpoint.authority_override;
  if (!authority.empty()) context.set_authority(authority);
  for (const auto& [key, value] : request.headers) {
    context.AddMetadata(key, value);
  }
}

}  // namespace mesh::internal

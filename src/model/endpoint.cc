#include "mesh/endpoint.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "src/model/address.h"

namespace mesh {

bool operator==(const IdentityOptions& a, const IdentityOptions& b) {
  return a.cert_chain_file == b.cert_chain_file &&
         a.private_key_file == b.private_key_file &&
         a.trust_roots_file == b.trust_roots_file &&
         a.cert_chain_pem == b.cert_chain_pem &&
         a.private_key_pem == b.private_key_pem &&
         a.trust_roots_pem == b.trust_roots_pem &&
         a.refresh_interval == b.refresh_interval &&
         a.require_identity == b.require_identity;
}

bool operator==(const ServerNameMatcher& a, const ServerNameMatcher& b) {
  return a.kind == b.kind && a.value == b.value &&
         a.ignore_case == b.ignore_case && a.san_type == b.san_type;
}

bool operator==(const EndpointTls& a, const EndpointTls& b) {
  return a.certificates == b.certificates && a.server_names == b.server_names &&
         a.sni == b.sni;
}

bool operator==(const Endpoint& a, const Endpoint& b) {
  const bool same_tls =
      a.tls == b.tls ||
      (a.tls != nullptr && b.tls != nullptr && *a.tls == *b.tls);
  return a.address == b.address && a.weight == b.weight &&
         a.labels == b.labels && a.tls_identity == b.tls_identity && same_tls &&
         a.protocol_hint == b.protocol_hint &&
         a.authority_override == b.authority_override;
}

absl::Status ValidateEndpoint(const Endpoint& endpoint) {
  absl::StatusOr<internal::SocketAddress> parsed =
      internal::SocketAddress::Parse(endpoint.address);
  if (!parsed.ok()) return parsed.status();
  if (endpoint.weight == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "endpoint '", endpoint.address, "' has weight 0; weights start at 1"));
  }
  if (endpoint.tls != nullptr) {
    const IdentityOptions& c = endpoint.tls->certificates;
    if (c.trust_roots_file.empty() && c.trust_roots_pem.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("endpoint '", endpoint.address,
                       "': tls.certificates has no trust roots to verify the "
                       "server with"));
    }
    if (c.enabled() !=
        (!c.private_key_file.empty() || !c.private_key_pem.empty())) {
      return absl::InvalidArgumentError(
          absl::StrCat("endpoint '", endpoint.address,
                       "': tls.certificates needs a certificate chain and a "
                       "private key together, or neither"));
    }
  }
  return absl::OkStatus();
}

EndpointUpdate EndpointUpdate::Reset(std::vector<Endpoint> endpoints) {
  EndpointUpdate u;
  u.kind = Kind::kReset;
  u.endpoints = std::move(endpoints);
  return u;
}

EndpointUpdate EndpointUpdate::Add(std::vector<Endpoint> endpoints) {
  EndpointUpdate u;
  u.kind = Kind::kAdd;
  u.endpoints = std::move(endpoints);
  return u;
}

EndpointUpdate EndpointUpdate::Remove(std::vector<std::string> addresses) {
  EndpointUpdate u;
  u.kind = Kind::kRemove;
  u.addresses = std::move(addresses);
  return u;
}

EndpointUpdate EndpointUpdate::NoEndpoints(bool exists, std::string reason) {
  EndpointUpdate u;
  u.kind = Kind::kNoEndpoints;
  u.exists = exists;
  u.reason = std::move(reason);
  return u;
}

}  // namespace mesh

#include "mesh/endpoint.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "src/model/address.h"

namespace mesh {

bool operator==(const Endpoint& a, const Endpoint& b) {
  return a.address == b.address && a.weight == b.weight &&
         a.labels == b.labels && a.tls_identity == b.tls_identity &&
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

EndpointUpdate EndpointUpdate::NoEndpoints(bool exists) {
  EndpointUpdate u;
  u.kind = Kind::kNoEndpoints;
  u.exists = exists;
  return u;
}

}  // namespace mesh

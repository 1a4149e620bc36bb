// Destination.Get updates → EndpointUpdate. See convert.h.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/discovery/linkerd/convert.h"
#include "src/model/address.h"
#include "src/model/http_syntax.h"

namespace mesh::internal::linkerd {
namespace {

namespace dst = ::io::linkerd::proxy::destination;
namespace net = ::io::linkerd::proxy::net;

absl::Status AddContext(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(),
                      absl::StrCat(what, ": ", status.message()));
}

}  // namespace

absl::StatusOr<std::string> FormatTcpAddress(const net::TcpAddress& address) {
  if (!address.has_ip()) {
    return absl::InvalidArgumentError("TCP address has no ip");
  }
  const net::IPAddress& ip = address.ip();
  IpAddress host;
  switch (ip.ip_case()) {
    case net::IPAddress::kIpv4:
      host = IpAddress::FromV4(ip.ipv4());
      break;
    case net::IPAddress::kIpv6:
      host = IpAddress::FromV6(ip.ipv6().first(), ip.ipv6().last());
      break;
    case net::IPAddress::IP_NOT_SET:
      return absl::InvalidArgumentError(
          "TCP address has an ip with neither ipv4 nor ipv6");
  }
  if (address.port() == 0 || address.port() > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("TCP address ", host.ToUriHost(), " has port ",
                     address.port(), "; want 1..65535"));
  }
  return SocketAddress(host, static_cast<uint16_t>(address.port())).ToString();
}

absl::StatusOr<Endpoint> ConvertWeightedAddr(
    const dst::WeightedAddr& addr,
    const google::protobuf::Map<std::string, std::string>& set_labels) {
  if (!addr.has_addr()) {
    return absl::InvalidArgumentError("weighted address has no addr");
  }
  absl::StatusOr<std::string> address = FormatTcpAddress(addr.addr());
  if (!address.ok()) return address.status();

  Endpoint e;
  e.address = *std::move(address);
  e.weight = addr.weight() == 0 ? 1 : addr.weight();
  e.labels.insert(set_labels.begin(), set_labels.end());
  for (const auto& [key, value] : addr.metric_labels()) e.labels[key] = value;
  if (addr.has_tls_identity()) {
    const dst::TlsIdentity& id = addr.tls_identity();
    switch (id.strategy_case()) {
      case dst::TlsIdentity::kDnsLikeIdentity:
        e.tls_identity = id.dns_like_identity().name();
        break;
      case dst::TlsIdentity::kUriLikeIdentity:
        e.tls_identity = id.uri_like_identity().uri();
        break;
      case dst::TlsIdentity::STRATEGY_NOT_SET:
        break;
    }
  }
  if (addr.has_protocol_hint()) {
    switch (addr.protocol_hint().protocol_case()) {
      case dst::ProtocolHint::kH2:
        e.protocol_hint = ProtocolHint::kHttp2;
        break;
      case dst::ProtocolHint::kOpaque:
        e.protocol_hint = ProtocolHint::kOpaque;
        break;
      case dst::ProtocolHint::PROTOCOL_NOT_SET:
        break;
    }
  }
  if (addr.has_authority_override() &&
      IsAuthority(addr.authority_override().authority_override())) {
    e.authority_override = addr.authority_override().authority_override();
  }
  return e;
}

absl::StatusOr<EndpointUpdate> ConvertUpdate(const dst::Update& update) {
  switch (update.update_case()) {
    case dst::Update::kAdd: {
      const dst::WeightedAddrSet& set = update.add();
      std::vector<Endpoint> endpoints;
      endpoints.reserve(set.addrs_size());
      absl::flat_hash_map<std::string, size_t> index_of;
      for (int i = 0; i < set.addrs_size(); ++i) {
        absl::StatusOr<Endpoint> e =
            ConvertWeightedAddr(set.addrs(i), set.metric_labels());
        if (!e.ok()) {
          return AddContext(e.status(), absl::StrCat("add: address #", i));
        }
        auto [it, inserted] = index_of.emplace(e->address, endpoints.size());
        if (inserted) {
          endpoints.push_back(*std::move(e));
        } else {
          endpoints[it->second] = *std::move(e);
        }
      }
      return EndpointUpdate::Add(std::move(endpoints));
    }
    case dst::Update::kRemove: {
      std::vector<std::string> addresses;
      addresses.reserve(update.remove().addrs_size());
      for (int i = 0; i < update.remove().addrs_size(); ++i) {
        absl::StatusOr<std::string> a =
            FormatTcpAddress(update.remove().addrs(i));
        if (!a.ok()) {
          return AddContext(a.status(), absl::StrCat("remove: address #", i));
        }
        addresses.push_back(*std::move(a));
      }
      return EndpointUpdate::Remove(std::move(addresses));
    }
    case dst::Update::kNoEndpoints:
      return EndpointUpdate::NoEndpoints(update.no_endpoints().exists());
    case dst::Update::UPDATE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "update has no add, remove or no_endpoints");
}

}  // namespace mesh::internal::linkerd

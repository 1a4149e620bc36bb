#include "src/model/address.h"

#include <arpa/inet.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/base/utf8.h"

namespace mesh::internal {
namespace {

absl::StatusOr<uint16_t> ParsePort(absl::string_view text,
                                   absl::string_view whole) {
  uint32_t port = 0;
  if (text.empty() || !absl::SimpleAtoi(text, &port) || port == 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port of '", whole, "' must be 1..65535"));
  }
  return static_cast<uint16_t>(port);
}

}  // namespace

absl::StatusOr<SocketAddress> ParseSocketAddress(absl::string_view address) {
  SocketAddress out;
  absl::string_view host;
  absl::string_view port;
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    if (close == absl::string_view::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      return absl::InvalidArgumentError(absl::StrCat(
          "address '", address, "' must be [ipv6]:port or ipv4:port"));
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
    out.ipv6 = true;
  } else {
    size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("address '", address, "' has no port"));
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  char buf[INET6_ADDRSTRLEN];
  unsigned char raw[16];
  std::string host_str(host);
  int family = out.ipv6 ? AF_INET6 : AF_INET;
  if (inet_pton(family, host_str.c_str(), raw) != 1 ||
      inet_ntop(family, raw, buf, sizeof(buf)) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "address '", address, "' is not an IP address (host names must be ",
        "resolved by a discovery source)"));
  }
  out.ip = buf;
  absl::StatusOr<uint16_t> p = ParsePort(port, address);
  if (!p.ok()) return p.status();
  out.port = *p;
  return out;
}

std::string GrpcTargetFor(const SocketAddress& address) {
  if (address.ipv6)
    return absl::StrCat("ipv6:[", address.ip, "]:", address.port);
  return absl::StrCat("ipv4:", address.ip, ":", address.port);
}

absl::Status ValidateDestination(absl::string_view destination) {
  if (destination.empty()) {
    return absl::InvalidArgumentError("target is empty; want name:port");
  }
  // Names go into logs, metrics labels and protobuf strings: no spaces or
  // control characters, and UTF-8.
  for (char c : destination) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat("target '", PrintableText(destination),
                       "' holds a space or control character"));
    }
  }
  if (!IsValidUtf8(destination)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target '", PrintableText(destination), "' is not valid UTF-8"));
  }
  size_t colon = destination.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("target '", destination, "' must be name:port"));
  }
  absl::StatusOr<uint16_t> port =
      ParsePort(destination.substr(colon + 1), destination);
  return port.ok() ? absl::OkStatus() : port.status();
}

}  // namespace mesh::internal

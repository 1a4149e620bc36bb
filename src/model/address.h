// Addresses of the model: IpAddress (an IPv4 or IPv6 address) and
// SocketAddress (an IP address and a port), parsed from text, built from
// bytes or from the integers Linkerd's wire carries, printed in inet_ntop's
// canonical text. Every IP text <-> bytes conversion in mesh goes through
// here. Also destination names ("name:port").
//
//   absl::StatusOr<SocketAddress> a = SocketAddress::Parse("[fd00::7]:8443");
//   if (a.ok()) target = GrpcTargetFor(*a);  // "ipv6:[fd00::7]:8443"
//
// Value types (thread-compatible, like int) and pure functions (thread-safe).
#ifndef MESH_SRC_MODEL_ADDRESS_H_
#define MESH_SRC_MODEL_ADDRESS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "src/base/internal_export.h"

namespace mesh::internal {

// An IPv4 or IPv6 address: a family and its 4 or 16 bytes in network order.
// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) stays IPv6: it is neither
// equal to nor converted into the IPv4 address. The default is 0.0.0.0.
class MESH_INTERNAL_EXPORT IpAddress {
 public:
  enum class Family : uint8_t { kV4, kV6 };

  IpAddress() = default;

  // "a.b.c.d" (four decimal octets, no leading zeros) or IPv6 text (RFC 4291
  // §2.2, e.g. "fd00::7" or "::ffff:10.0.0.1"), as inet_pton reads them; no
  // brackets, zone ids or prefix. Text holding a ':' is IPv6. Otherwise
  // INVALID_ARGUMENT "'<text>' is not an IP address".
  static absl::StatusOr<IpAddress> Parse(absl::string_view text);
  // As Linkerd's net.IPAddress carries them: IPv4 as one integer, IPv6 as
  // two halves (`high` holds bytes 0..7); the first byte most significant.
  static IpAddress FromV4(uint32_t v4);
  static IpAddress FromV6(uint64_t high, uint64_t low);

  Family family() const { return family_; }
  bool is_v6() const { return family_ == Family::kV6; }
  int bit_length() const { return is_v6() ? 128 : 32; }
  // The 4 or 16 bytes, network order.
  absl::Span<const uint8_t> bytes() const {
    return absl::MakeConstSpan(bytes_, is_v6() ? 16 : 4);
  }
  // The inverses of FromV4 and FromV6: v4() of an IPv4 address, v6_high()
  // and v6_low() of an IPv6 one (0 for the other family).
  uint32_t v4() const;
  uint64_t v6_high() const;
  uint64_t v6_low() const;

  // The network of the first `prefix` bits (clamped to 0..bit_length()):
  // the other bits cleared, so 10.1.2.3 masked to 8 is 10.0.0.0.
  IpAddress Masked(int prefix) const;
  // True if the first `prefix` bits equal `network`'s, of the same family.
  bool InNetwork(const IpAddress& network, int prefix) const;

  // inet_ntop's canonical text: "10.0.0.1", "fd00::7", "::ffff:10.0.0.1".
  std::string ToString() const;
  // As the host of a URI or socket address: IPv6 in brackets ("[fd00::7]").
  std::string ToUriHost() const;

  // Equal if family and bytes are; IPv4 orders before IPv6, then by bytes.
  friend bool operator==(const IpAddress& a, const IpAddress& b);
  friend bool operator!=(const IpAddress& a, const IpAddress& b) {
    return !(a == b);
  }
  friend bool operator<(const IpAddress& a, const IpAddress& b);

 private:
  friend class SocketAddress;
  // Parse without the error status (SocketAddress::Parse words its own).
  static bool ParseInto(absl::string_view text, IpAddress* out);

  Family family_ = Family::kV4;
  uint8_t bytes_[16] = {};  // IPv4: bytes_[0..3], the rest 0
};

// An IP address and a port (1..65535 when parsed; any when built).
class MESH_INTERNAL_EXPORT SocketAddress {
 public:
  SocketAddress() = default;
  SocketAddress(const IpAddress& ip, uint16_t port) : ip_(ip), port_(port) {}

  // "a.b.c.d:port" or "[v6]:port", port 1..65535. INVALID_ARGUMENT names the
  // problem (no port, no brackets around IPv6, not an IP, bad port).
  static absl::StatusOr<SocketAddress> Parse(absl::string_view text);

  const IpAddress& ip() const { return ip_; }
  uint16_t port() const { return port_; }
  // Canonical text: "a.b.c.d:port" or "[v6]:port", the IP as
  // IpAddress::ToString; Parse(x).ToString() is x for canonical x.
  std::string ToString() const;

  friend bool operator==(const SocketAddress& a, const SocketAddress& b) {
    return a.ip_ == b.ip_ && a.port_ == b.port_;
  }
  friend bool operator!=(const SocketAddress& a, const SocketAddress& b) {
    return !(a == b);
  }

 private:
  IpAddress ip_;
  uint16_t port_ = 0;
};

// gRPC target for one address: "ipv4:a.b.c.d:port" or "ipv6:[v6]:port".
std::string GrpcTargetFor(const SocketAddress& address);

// A destination is "name:port" (e.g. "books.default.svc.cluster.local:7001").
// OK, or INVALID_ARGUMENT naming the problem (empty, no port, bad port).
absl::Status ValidateDestination(absl::string_view destination);

// The address of a server mesh connects to itself (an xDS bootstrap's
// server_uri, LinkerdDiscoveryOptions::address, a DNS server): a gRPC
// target in one of the forms gRPC's resolvers take, each checked the same
// way, so that no form passes a port gRPC would wrap (99999 became 34463):
//   host:port             host a DNS name (at most 253 bytes, labels of
//                         1..63 letters, digits, '-' or '_'), an IPv4
//                         address, or [IPv6]; port 1..65535; without
//                         ":port" gRPC's default (443)
//   dns:///host:port      the same, after the scheme
//   dns://A:P/host:port   A:P a DNS server's IP address and port
//   ipv4:a.b.c.d:port,…   ipv6:[v6]:port,…   (IP addresses and ports)
//   unix:path  unix:///path  unix-abstract:name
// OK, or INVALID_ARGUMENT naming the problem and quoting the address (at
// most 256 bytes of it).
MESH_INTERNAL_EXPORT absl::Status ValidateServerAddress(
    absl::string_view address);

// A name a DNS resolver can be asked for (RFC 1123 labels, '_' allowed as
// in service names): letters, digits, '-' and '_' in labels of 1 to 63
// bytes between dots, 253 bytes at most, a final dot allowed. A name that
// fails this would only fail every query later.
MESH_INTERNAL_EXPORT bool IsDnsName(absl::string_view name);

// A channel's target: "name:port" (scheme empty), or a URI in gRPC's form
// "scheme:///name:port" whose scheme picks the discovery source, or
// "scheme://authority/name:port" (e.g. dns://10.0.0.2:53/db:5432).
struct Target {
  std::string scheme;     // lower case; empty for a bare name:port
  std::string authority;  // empty if none; the source checks it
  std::string name;       // name:port
};
// INVALID_ARGUMENT naming the problem: a malformed scheme, an authority
// with '/', spaces or control characters, or over 255 bytes, a name that is
// not name:port.
absl::StatusOr<Target> ParseTarget(absl::string_view target);

// What a discovery source is asked for a target: its name, or
// "//authority/name:port" when it names an authority (a source that takes
// one, DiscoverySource::TakesAuthority).
std::string SourceName(const Target& target);
// The other way: `*authority` and `*name` of "//authority/name:port";
// false (and `*name` the whole) for a name without one.
bool SplitSourceName(absl::string_view source_name,
                     absl::string_view* authority, absl::string_view* name);

// "host:port", with an IPv6 literal in brackets: ("10.0.0.1", 80) →
// "10.0.0.1:80", ("::1", 80) → "[::1]:80", ("db.example", 80) →
// "db.example:80".
MESH_INTERNAL_EXPORT std::string JoinHostPort(absl::string_view host, int port);

}  // namespace mesh::internal

#endif  // MESH_SRC_MODEL_ADDRESS_H_

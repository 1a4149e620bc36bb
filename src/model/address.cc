#include "src/model/address.h"

#include <arpa/inet.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/base/utf8.h"

namespace mesh::internal {
namespace {

absl::StatusOr<uint16_t> ParsePort(absl::string_view text,
                                   absl::string_view whole) {
  // Decimal digits only (no sign, no spaces); leading zeros are allowed.
  uint32_t port = 0;
  bool digits = !text.empty();
  for (char c : text) {
    if (c < '0' || c > '9') {
      digits = false;
      break;
    }
    port = port * 10 + static_cast<uint32_t>(c - '0');
    if (port > 65535) break;  // already too large; no overflow
  }
  if (!digits) port = 0;
  if (port == 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port of '", whole, "' must be 1..65535"));
  }
  return static_cast<uint16_t>(port);
}

uint64_t GetBigEndian(const uint8_t* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | in[i];
  return value;
}

void PutBigEndian(uint64_t value, int bytes, uint8_t* out) {
  for (int i = 0; i < bytes; ++i) {
    out[i] = static_cast<uint8_t>(value >> (8 * (bytes - 1 - i)));
  }
}

}  // namespace

namespace {

// Dotted-quad IPv4 as inet_pton reads it (four decimal octets 0..255, no
// leading zeros), without its C-string copy: the tap matches a request's
// endpoint address on every request that a destination condition sees.
bool ParseV4(absl::string_view text, uint8_t* bytes) {
  int octet = 0;
  for (size_t i = 0; octet < 4; ++octet) {
    if (i >= text.size()) return false;
    uint32_t value = 0;
    size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      value = value * 10 + static_cast<uint32_t>(text[i] - '0');
      if (++i - start > 3 || value > 255) return false;
    }
    if (i == start || (text[start] == '0' && i - start > 1)) return false;
    bytes[octet] = static_cast<uint8_t>(value);
    if (octet < 3) {
      if (i >= text.size() || text[i] != '.') return false;
      ++i;
    } else if (i != text.size()) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool IpAddress::ParseInto(absl::string_view text, IpAddress* out) {
  if (text.find(':') == absl::string_view::npos) {
    *out = IpAddress();  // IPv4 leaves bytes 4..15 as they are: 0
    return ParseV4(text, out->bytes_);
  }
  // inet_pton wants a C string: copied, so a NUL inside `text` cannot cut
  // it short. The longest IP text ("ffff:...:255.255.255.255") is 45 bytes.
  char buf[INET6_ADDRSTRLEN];
  if (text.size() >= sizeof(buf)) return false;
  bool v6 = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\0') return false;
    if (text[i] == ':') v6 = true;
    buf[i] = text[i];
  }
  buf[text.size()] = '\0';
  *out = IpAddress();  // IPv4 leaves bytes 4..15 as they are: 0
  out->family_ = v6 ? Family::kV6 : Family::kV4;
  return inet_pton(v6 ? AF_INET6 : AF_INET, buf, out->bytes_) == 1;
}

absl::StatusOr<IpAddress> IpAddress::Parse(absl::string_view text) {
  IpAddress out;
  if (ParseInto(text, &out)) return out;
  return absl::InvalidArgumentError(
      absl::StrCat("'", PrintableText(text), "' is not an IP address"));
}

IpAddress IpAddress::FromV4(uint32_t v4) {
  IpAddress out;
  PutBigEndian(v4, 4, out.bytes_);
  return out;
}

IpAddress IpAddress::FromV6(uint64_t high, uint64_t low) {
  IpAddress out;
  out.family_ = Family::kV6;
  PutBigEndian(high, 8, out.bytes_);
  PutBigEndian(low, 8, out.bytes_ + 8);
  return out;
}

uint32_t IpAddress::v4() const {
  return is_v6() ? 0 : static_cast<uint32_t>(GetBigEndian(bytes_, 4));
}

uint64_t IpAddress::v6_high() const {
  return is_v6() ? GetBigEndian(bytes_, 8) : 0;
}

uint64_t IpAddress::v6_low() const {
  return is_v6() ? GetBigEndian(bytes_ + 8, 8) : 0;
}

IpAddress IpAddress::Masked(int prefix) const {
  IpAddress out = *this;
  for (int i = 0; i < 16; ++i) {
    const int keep = prefix - 8 * i;  // bits of byte i to keep
    if (keep <= 0) {
      out.bytes_[i] = 0;
    } else if (keep < 8) {
      out.bytes_[i] &= static_cast<uint8_t>(0xff00 >> keep);
    }
  }
  return out;  // a prefix past bit_length() keeps all; IPv4's tail stays 0
}

bool IpAddress::InNetwork(const IpAddress& network, int prefix) const {
  return family_ == network.family_ && Masked(prefix) == network.Masked(prefix);
}

std::string IpAddress::ToString() const {
  if (!is_v6()) {  // without inet_ntop, whose IPv4 path is a sprintf
    return absl::StrCat(
        static_cast<int>(bytes_[0]), ".", static_cast<int>(bytes_[1]), ".",
        static_cast<int>(bytes_[2]), ".", static_cast<int>(bytes_[3]));
  }
  char text[INET6_ADDRSTRLEN];
  if (inet_ntop(is_v6() ? AF_INET6 : AF_INET, bytes_, text, sizeof(text)) ==
      nullptr) {
    return std::string();  // cannot happen: the buffer fits either family
  }
  return text;
}

std::string IpAddress::ToUriHost() const {
  return is_v6() ? absl::StrCat("[", ToString(), "]") : ToString();
}

bool operator==(const IpAddress& a, const IpAddress& b) {
  return a.family_ == b.family_ &&
         std::memcmp(a.bytes_, b.bytes_, sizeof(a.bytes_)) == 0;
}

bool operator<(const IpAddress& a, const IpAddress& b) {
  if (a.family_ != b.family_) return a.family_ < b.family_;
  return std::memcmp(a.bytes_, b.bytes_, sizeof(a.bytes_)) < 0;
}

absl::StatusOr<SocketAddress> SocketAddress::Parse(absl::string_view text) {
  absl::string_view host;
  absl::string_view port;
  bool bracketed = false;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == absl::string_view::npos || close + 1 >= text.size() ||
        text[close + 1] != ':') {
      return absl::InvalidArgumentError(absl::StrCat(
          "address '", text, "' must be [ipv6]:port or ipv4:port"));
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    bracketed = true;
  } else {
    size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("address '", text, "' has no port"));
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  // IPv6 only in brackets, IPv4 only without.
  IpAddress ip;
  if (!IpAddress::ParseInto(host, &ip) || ip.is_v6() != bracketed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "address '", text, "' is not an IP address (host names must be ",
        "resolved by a discovery source)"));
  }
  absl::StatusOr<uint16_t> p = ParsePort(port, text);
  if (!p.ok()) return p.status();
  return SocketAddress(ip, *p);
}

std::string SocketAddress::ToString() const {
  return absl::StrCat(ip_.ToUriHost(), ":", port_);
}

std::string GrpcTargetFor(const SocketAddress& address) {
  return absl::StrCat(address.ip().is_v6() ? "ipv6:" : "ipv4:",
                      address.ToString());
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

bool IsDnsName(absl::string_view name) {
  absl::ConsumeSuffix(&name, ".");
  if (name.empty() || name.size() > 253) return false;
  size_t label = 0;
  for (char c : name) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_') return false;
    if (++label > 63) return false;
  }
  return label > 0;
}

namespace {

// "host[:port]" after any scheme: see ValidateServerAddress.
absl::Status CheckHostPort(absl::string_view host_port,
                           absl::string_view whole) {
  auto bad = [whole](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("address '", QuotedText(whole), "' ", why));
  };
  absl::string_view host = host_port;
  absl::string_view port;
  bool has_port = false;
  if (absl::ConsumePrefix(&host, "[")) {
    const size_t close = host.find(']');
    if (close == absl::string_view::npos) return bad("has no ']'");
    absl::string_view after = host.substr(close + 1);
    host = host.substr(0, close);
    absl::StatusOr<IpAddress> ip = IpAddress::Parse(host);
    if (!ip.ok() || !ip->is_v6()) {
      return bad("holds brackets around something that is not IPv6");
    }
    if (!after.empty()) {
      if (!absl::ConsumePrefix(&after, ":")) return bad("has text after ']'");
      port = after;
      has_port = true;
    }
  } else {
    const size_t colon = host.rfind(':');
    if (colon != absl::string_view::npos) {
      if (host.find(':') != colon) {
        return bad("holds an IPv6 address without brackets: write [v6]:port");
      }
      port = host.substr(colon + 1);
      host = host.substr(0, colon);
      has_port = true;
    }
    if (!IpAddress::Parse(host).ok() && !IsDnsName(host)) {
      return bad(
          "has a host that is neither an IP address nor a DNS name (at most "
          "253 bytes, labels of 1..63 letters, digits, '-' or '_')");
    }
  }
  if (has_port) {
    absl::StatusOr<uint16_t> p = ParsePort(port, QuotedText(whole));
    if (!p.ok()) return p.status();
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateServerAddress(absl::string_view address) {
  auto bad = [address](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("address '", QuotedText(address), "' ", why));
  };
  if (address.empty()) return bad("is empty");
  for (char c : address) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return bad("holds a space or control character");
    }
  }
  absl::string_view rest = address;
  if (absl::ConsumePrefix(&rest, "unix:") ||
      absl::ConsumePrefix(&rest, "unix-abstract:")) {
    absl::ConsumePrefix(&rest, "//");
    return rest.empty() ? bad("has no path") : absl::OkStatus();
  }
  if (absl::ConsumePrefix(&rest, "ipv4:") ||
      absl::ConsumePrefix(&rest, "ipv6:")) {
    const bool v6 = address[3] == '6';
    for (absl::string_view one : absl::StrSplit(rest, ',')) {
      absl::StatusOr<SocketAddress> a = SocketAddress::Parse(one);
      if (!a.ok()) return bad(a.status().message());
      if (a->ip().is_v6() != v6) {
        return bad(absl::StrCat("lists '", one, "' under the other family"));
      }
    }
    return absl::OkStatus();
  }
  if (absl::ConsumePrefix(&rest, "dns:")) {
    if (absl::ConsumePrefix(&rest, "//")) {
      const size_t slash = rest.find('/');
      if (slash == absl::string_view::npos) {
        return bad("has no '/' after its authority: write dns:///host:port");
      }
      absl::string_view authority = rest.substr(0, slash);
      rest.remove_prefix(slash + 1);
      if (!authority.empty() && !SocketAddress::Parse(authority).ok()) {
        return bad("names a DNS server that is not IP:port");
      }
    }
    return CheckHostPort(rest, address);
  }
  if (rest.find("://") != absl::string_view::npos) {
    return bad(
        "has a scheme mesh does not connect to (dns, ipv4, ipv6, "
        "unix, unix-abstract)");
  }
  return CheckHostPort(rest, address);
}

absl::StatusOr<Target> ParseTarget(absl::string_view target) {
  size_t sep = target.find("://");
  if (sep == absl::string_view::npos) {
    if (absl::Status s = ValidateDestination(target); !s.ok()) return s;
    return Target{"", "", std::string(target)};
  }
  absl::string_view scheme = target.substr(0, sep);
  bool valid = !scheme.empty() && absl::ascii_isalpha(scheme[0]);
  for (char c : scheme) {
    valid =
        valid && (absl::ascii_isalnum(c) || c == '+' || c == '-' || c == '.');
  }
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target '", PrintableText(target), "' has a malformed scheme"));
  }
  absl::string_view rest = target.substr(sep + 3);
  const size_t slash = rest.find('/');
  if (slash == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("target '", PrintableText(target),
                     "' has no '/' before its name: write scheme:///name:port "
                     "or scheme://authority/name:port"));
  }
  absl::string_view authority = rest.substr(0, slash);
  rest.remove_prefix(slash + 1);
  bool printable = authority.size() <= 255;
  for (char c : authority) printable = printable && absl::ascii_isgraph(c);
  if (!printable) {
    return absl::InvalidArgumentError(
        absl::StrCat("target '", PrintableText(target),
                     "' has an authority that is over 255 bytes or holds "
                     "spaces or control characters"));
  }
  if (absl::Status s = ValidateDestination(rest); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("target '", PrintableText(target), "': ", s.message()));
  }
  return Target{absl::AsciiStrToLower(scheme), std::string(authority),
                std::string(rest)};
}

std::string SourceName(const Target& target) {
  return target.authority.empty()
             ? target.name
             : absl::StrCat("//", target.authority, "/", target.name);
}

bool SplitSourceName(absl::string_view source_name,
                     absl::string_view* authority, absl::string_view* name) {
  *authority = absl::string_view();
  *name = source_name;
  if (!absl::ConsumePrefix(name, "//")) return false;
  const size_t slash = name->find('/');
  *authority = name->substr(0, slash);
  name->remove_prefix(slash == absl::string_view::npos ? name->size()
                                                       : slash + 1);
  return true;
}

std::string JoinHostPort(absl::string_view host, int port) {
  return host.find(':') == absl::string_view::npos
             ? absl::StrCat(host, ":", port)
             : absl::StrCat("[", host, "]:", port);
}

}  // namespace mesh::internal

// ObserveRequest → TapOptions and TapEvent → wire TapEvent. See
// observe_convert.h.
#include "src/tap/observe_convert.h"

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/empty.pb.h"
#include "src/model/address.h"
#include "src/tap/tap_match.h"

namespace mesh::internal {
namespace {

// Not `tap` or `net`: src/tap may well have namespaces of those names.
namespace wire = ::io::linkerd::proxy::tap;
namespace wire_http = ::io::linkerd::proxy::http_types;
namespace wire_net = ::io::linkerd::proxy::net;

using WireMatch = wire::ObserveRequest::Match;

// Indexed by the Registered enums' numbers (docs/wire-linkerd.md).
constexpr const char* kMethodNames[] = {"GET",     "POST",  "PUT",
                                        "DELETE",  "PATCH", "OPTIONS",
                                        "CONNECT", "HEAD",  "TRACE"};
static_assert(sizeof(kMethodNames) / sizeof(kMethodNames[0]) ==
                  wire_http::HttpMethod::Registered_MAX + 1,
              "one name per registered method");
constexpr const char* kSchemeNames[] = {"http", "https"};
static_assert(sizeof(kSchemeNames) / sizeof(kSchemeNames[0]) ==
                  wire_http::Scheme::Registered_MAX + 1,
              "one name per registered scheme");

constexpr uint32_t kMaxPort = 65535;

absl::Status Bad(absl::string_view path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", why));
}

TapMatch Leaf(TapMatch::Kind kind, std::string value) {
  TapMatch m;
  m.kind = kind;
  m.value = std::move(value);
  return m;
}

absl::StatusOr<std::string> NetmaskCidr(const WireMatch::Tcp::Netmask& netmask,
                                        const std::string& path) {
  if (!netmask.has_ip()) return Bad(path, "no ip");
  const wire_net::IPAddress& wire_ip = netmask.ip();
  IpAddress ip;
  switch (wire_ip.ip_case()) {
    case wire_net::IPAddress::kIpv4:
      ip = IpAddress::FromV4(wire_ip.ipv4());
      break;
    case wire_net::IPAddress::kIpv6:
      ip = IpAddress::FromV6(wire_ip.ipv6().first(), wire_ip.ipv6().last());
      break;
    case wire_net::IPAddress::IP_NOT_SET:
      return Bad(path, "ip has neither ipv4 nor ipv6");
  }
  const uint32_t bits = static_cast<uint32_t>(ip.bit_length());
  if (netmask.mask() > bits) {
    return Bad(path, absl::StrCat("mask ", netmask.mask(), " > ", bits,
                                  ip.is_v6() ? " for IPv6" : " for IPv4"));
  }
  const int mask = static_cast<int>(netmask.mask());
  return absl::StrCat(ip.Masked(mask).ToString(), "/", mask);
}

absl::StatusOr<TapMatch> ConvertTcp(const WireMatch::Tcp& tcp, bool source,
                                    const std::string& path) {
  switch (tcp.match_case()) {
    case WireMatch::Tcp::kNetmask: {
      absl::StatusOr<std::string> cidr =
          NetmaskCidr(tcp.netmask(), absl::StrCat(path, ".netmask"));
      if (!cidr.ok()) return cidr.status();
      return Leaf(
          source ? TapMatch::Kind::kSourceNet : TapMatch::Kind::kDestinationNet,
          *std::move(cidr));
    }
    case WireMatch::Tcp::kPorts: {
      const std::string where = absl::StrCat(path, ".ports");
      uint32_t min = tcp.ports().min(), max = tcp.ports().max();
      if (min > kMaxPort)
        return Bad(where, absl::StrCat("min ", min, " > 65535"));
      if (max > kMaxPort)
        return Bad(where, absl::StrCat("max ", max, " > 65535"));
      if (min == 0) min = max;
      if (max == 0) max = min;
      if (min == 0) return Bad(where, "both bounds are 0");
      if (min > max) {
        return Bad(where, absl::StrCat("min ", min, " > max ", max));
      }
      TapMatch m;
      m.kind = source ? TapMatch::Kind::kSourcePorts
                      : TapMatch::Kind::kDestinationPorts;
      m.port_min = min;
      m.port_max = max;
      return m;
    }
    case WireMatch::Tcp::MATCH_NOT_SET:
      break;
  }
  return Bad(path, "neither netmask nor ports set");
}

absl::StatusOr<TapMatch> ConvertString(
    const WireMatch::Http::StringMatch& match, TapMatch::Kind exact,
    TapMatch::Kind prefix, const std::string& path) {
  switch (match.match_case()) {
    case WireMatch::Http::StringMatch::kExact:
      return Leaf(exact, match.exact());
    case WireMatch::Http::StringMatch::kPrefix:
      return Leaf(prefix, match.prefix());
    case WireMatch::Http::StringMatch::MATCH_NOT_SET:
      break;
  }
  return Bad(path, "neither exact nor prefix set");
}

// HttpMethod and Scheme share their shape: a registered enum or a string.
template <typename Message, size_t N>
absl::StatusOr<std::string> RegisteredOrNot(const Message& message,
                                            const char* const (&names)[N],
                                            const std::string& path) {
  switch (message.type_case()) {
    case Message::kRegistered: {
      const int n = static_cast<int>(message.registered());
      if (n < 0 || static_cast<size_t>(n) >= N) {
        return Bad(path, absl::StrCat("unknown registered value ", n));
      }
      return std::string(names[n]);
    }
    case Message::kUnregistered:
      if (message.unregistered().empty()) {
        return Bad(path, "unregistered value is empty");
      }
      return message.unregistered();
    case Message::TYPE_NOT_SET:
      break;
  }
  return Bad(path, "neither registered nor unregistered set");
}

absl::StatusOr<TapMatch> ConvertHttp(const WireMatch::Http& http,
                                     const std::string& path) {
  using Kind = TapMatch::Kind;
  switch (http.match_case()) {
    case WireMatch::Http::kScheme: {
      absl::StatusOr<std::string> scheme = RegisteredOrNot(
          http.scheme(), kSchemeNames, absl::StrCat(path, ".scheme"));
      if (!scheme.ok()) return scheme.status();
      return Leaf(Kind::kScheme, *std::move(scheme));
    }
    case WireMatch::Http::kMethod: {
      absl::StatusOr<std::string> method = RegisteredOrNot(
          http.method(), kMethodNames, absl::StrCat(path, ".method"));
      if (!method.ok()) return method.status();
      return Leaf(Kind::kMethod, *std::move(method));
    }
    case WireMatch::Http::kAuthority:
      return ConvertString(http.authority(), Kind::kAuthorityExact,
                           Kind::kAuthorityPrefix,
                           absl::StrCat(path, ".authority"));
    case WireMatch::Http::kPath:
      return ConvertString(http.path(), Kind::kPathExact, Kind::kPathPrefix,
                           absl::StrCat(path, ".path"));
    case WireMatch::Http::MATCH_NOT_SET:
      break;
  }
  return Bad(path, "no condition set");
}

absl::StatusOr<TapMatch> ConvertLabel(const WireMatch::Label& label,
                                      TapMatch::Kind kind,
                                      const std::string& path) {
  if (label.key().empty()) return Bad(path, "empty key");
  TapMatch m = Leaf(kind, label.value());
  m.key = label.key();
  return m;
}

// The bytes of the strings a leaf node carries into its TapMatch (a
// netmask's CIDR text is short and bounded: none counted).
size_t StringBytes(const WireMatch& match) {
  switch (match.match_case()) {
    case WireMatch::kDestinationLabel:
      return match.destination_label().key().size() +
             match.destination_label().value().size();
    case WireMatch::kRouteLabel:
      return match.route_label().key().size() +
             match.route_label().value().size();
    case WireMatch::kHttp: {
      const WireMatch::Http& http = match.http();
      switch (http.match_case()) {
        case WireMatch::Http::kAuthority:
          return http.authority().exact().size() +
                 http.authority().prefix().size();
        case WireMatch::Http::kPath:
          return http.path().exact().size() + http.path().prefix().size();
        case WireMatch::Http::kMethod:
          return http.method().unregistered().size();
        case WireMatch::Http::kScheme:
          return http.scheme().unregistered().size();
        default:
          return 0;
      }
    }
    default:
      return 0;
  }
}

absl::StatusOr<TapMatch> ConvertMatch(const WireMatch& match,
                                      const std::string& path,
                                      TapMatchBudget& budget);

absl::StatusOr<TapMatch> ConvertSeq(const WireMatch::Seq& seq,
                                    TapMatch::Kind kind,
                                    const std::string& path,
                                    TapMatchBudget& budget) {
  TapMatch m;
  m.kind = kind;
  for (int i = 0; i < seq.matches_size(); ++i) {
    absl::StatusOr<TapMatch> child =
        ConvertMatch(seq.matches(i), absl::StrCat(path, "[", i, "]"), budget);
    if (!child.ok()) return child.status();
    m.children.push_back(*std::move(child));
  }
  return m;
}

// The node at `path` counted against the budget before anything of it is
// built: a request of 200,000 leaves stops at the first past the bound.
absl::StatusOr<TapMatch> ConvertMatch(const WireMatch& match,
                                      const std::string& path,
                                      TapMatchBudget& budget) {
  using Kind = TapMatch::Kind;
  if (absl::Status s = budget.Take(path, StringBytes(match)); !s.ok()) {
    return s;
  }
  switch (match.match_case()) {
    case WireMatch::kAll:
      return ConvertSeq(match.all(), Kind::kAll, absl::StrCat(path, ".all"),
                        budget);
    case WireMatch::kAny:
      return ConvertSeq(match.any(), Kind::kAny, absl::StrCat(path, ".any"),
                        budget);
    case WireMatch::kNot: {
      absl::StatusOr<TapMatch> inner =
          ConvertMatch(match.not_(), absl::StrCat(path, ".not"), budget);
      if (!inner.ok()) return inner.status();
      TapMatch m;
      m.kind = Kind::kNot;
      m.children.push_back(*std::move(inner));
      return m;
    }
    case WireMatch::kSource:
      return ConvertTcp(match.source(), /*source=*/true,
                        absl::StrCat(path, ".source"));
    case WireMatch::kDestination:
      return ConvertTcp(match.destination(), /*source=*/false,
                        absl::StrCat(path, ".destination"));
    case WireMatch::kHttp:
      return ConvertHttp(match.http(), absl::StrCat(path, ".http"));
    case WireMatch::kDestinationLabel:
      return ConvertLabel(match.destination_label(), Kind::kDestinationLabel,
                          absl::StrCat(path, ".destination_label"));
    case WireMatch::kRouteLabel:
      return ConvertLabel(match.route_label(), Kind::kRouteLabel,
                          absl::StrCat(path, ".route_label"));
    case WireMatch::MATCH_NOT_SET:
      break;
  }
  return Bad(path, "no condition set");
}

// --- TapEvent → wire ---------------------------------------------------------

// Unset (false) unless `address` is "a.b.c.d:port" or "[v6]:port".
bool ToTcpAddress(const std::string& address, wire_net::TcpAddress* out) {
  absl::StatusOr<SocketAddress> parsed = SocketAddress::Parse(address);
  if (!parsed.ok()) return false;
  wire_net::IPAddress* ip = out->mutable_ip();
  if (parsed->ip().is_v6()) {
    ip->mutable_ipv6()->set_first(parsed->ip().v6_high());
    ip->mutable_ipv6()->set_last(parsed->ip().v6_low());
  } else {
    ip->set_ipv4(parsed->ip().v4());
  }
  out->set_port(parsed->port());
  return true;
}

void SetMethod(const std::string& method, wire_http::HttpMethod* out) {
  for (size_t i = 0; i < std::size(kMethodNames); ++i) {
    if (method == kMethodNames[i]) {
      out->set_registered(static_cast<wire_http::HttpMethod::Registered>(i));
      return;
    }
  }
  out->set_unregistered(method);
}

void SetScheme(const std::string& scheme, wire_http::Scheme* out) {
  for (size_t i = 0; i < std::size(kSchemeNames); ++i) {
    if (absl::EqualsIgnoreCase(scheme, kSchemeNames[i])) {
      out->set_registered(static_cast<wire_http::Scheme::Registered>(i));
      return;
    }
  }
  out->set_unregistered(scheme);
}

void SetHeaders(const Metadata& headers, wire_http::Headers* out) {
  for (const auto& [name, value] : headers) {
    wire_http::Headers::Header* header = out->add_headers();
    header->set_name(name);
    header->set_value(value);
  }
}

void SetDuration(absl::Duration d, google::protobuf::Duration* out) {
  if (d < absl::ZeroDuration()) d = absl::ZeroDuration();
  // Duration's documented range: up to 10,000 years.
  constexpr int64_t kMaxSeconds = 315'576'000'000;
  if (d > absl::Seconds(kMaxSeconds)) d = absl::Seconds(kMaxSeconds);
  absl::Duration rest;
  const int64_t seconds = absl::IDivDuration(d, absl::Seconds(1), &rest);
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(rest)));
}

void SetId(const TapEvent& event, wire::TapEvent::Http::StreamId* out) {
  out->set_base(event.base);
  out->set_stream(event.stream);
}

}  // namespace

absl::StatusOr<TapOptions> TapOptionsFromObserve(
    const wire::ObserveRequest& request) {
  if (request.limit() == 0) {
    return absl::InvalidArgumentError("limit must be > 0");
  }
  if (!request.has_match()) {
    return absl::InvalidArgumentError("match is required");
  }
  TapMatchBudget budget;
  absl::StatusOr<TapMatch> match =
      ConvertMatch(request.match(), "match", budget);
  if (!match.ok()) return match.status();
  TapOptions options;
  options.match = *std::move(match);
  options.limit = request.limit();
  options.extract_headers = request.has_extract() &&
                            request.extract().has_http() &&
                            request.extract().http().has_headers();
  return options;
}

absl::StatusOr<TapOptions> TapOptionsFromObserveBytes(absl::string_view bytes) {
  wire::ObserveRequest request;
  if (request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return TapOptionsFromObserve(request);
  }
  // A message without fields keeps every field unparsed, so it parses
  // whatever is well-formed on the outside: the fault is then inside.
  google::protobuf::Empty outside;
  const bool well_formed =
      outside.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  return absl::InvalidArgumentError(absl::StrCat(
      "the ", bytes.size(), "-byte ObserveRequest does not parse: ",
      well_formed ? "a match nested deeper than protobuf's limit of 100, a "
                    "string that is not UTF-8, or a malformed inner message"
                  : "not a protobuf encoding"));
}

wire::TapEvent TapEventToProto(const TapEvent& event) {
  wire::TapEvent out;
  wire_net::TcpAddress destination;
  if (ToTcpAddress(event.destination, &destination)) {
    *out.mutable_destination() = std::move(destination);
  }
  out.mutable_destination_meta()->mutable_labels()->insert(
      event.destination_labels.begin(), event.destination_labels.end());
  out.mutable_route_meta()->mutable_labels()->insert(event.route_labels.begin(),
                                                     event.route_labels.end());
  if (event.kind == TapEvent::Kind::kRequestInit && event.attempt > 1) {
    // Linkerd's event has no field for it: a retry or hedge says so among
    // its route's labels ("attempt", and "hedge" for a hedge).
    auto& labels = *out.mutable_route_meta()->mutable_labels();
    labels["attempt"] = absl::StrCat(event.attempt);
    if (event.hedge) labels["hedge"] = "true";
  }
  out.set_proxy_direction(wire::TapEvent::OUTBOUND);

  wire::TapEvent::Http* http = out.mutable_http();
  switch (event.kind) {
    case TapEvent::Kind::kRequestInit: {
      wire::TapEvent::Http::RequestInit* init = http->mutable_request_init();
      SetId(event, init->mutable_id());
      if (!event.method.empty())
        SetMethod(event.method, init->mutable_method());
      if (!event.scheme.empty())
        SetScheme(event.scheme, init->mutable_scheme());
      init->set_authority(event.authority);
      init->set_path(event.path);
      if (!event.headers.empty()) {
        SetHeaders(event.headers, init->mutable_headers());
      }
      break;
    }
    case TapEvent::Kind::kResponseInit: {
      wire::TapEvent::Http::ResponseInit* init = http->mutable_response_init();
      SetId(event, init->mutable_id());
      SetDuration(event.since_request_init, init->mutable_since_request_init());
      init->set_http_status(event.http_status);
      if (!event.headers.empty()) {
        SetHeaders(event.headers, init->mutable_headers());
      }
      break;
    }
    case TapEvent::Kind::kResponseEnd: {
      wire::TapEvent::Http::ResponseEnd* end = http->mutable_response_end();
      SetId(event, end->mutable_id());
      SetDuration(event.since_request_init, end->mutable_since_request_init());
      SetDuration(event.since_response_init,
                  end->mutable_since_response_init());
      end->set_response_bytes(event.response_bytes);
      if (event.reset_error_code.has_value()) {
        end->mutable_eos()->set_reset_error_code(*event.reset_error_code);
      } else if (event.grpc_status.has_value()) {
        end->mutable_eos()->set_grpc_status_code(*event.grpc_status);
      }
      if (!event.trailers.empty()) {
        SetHeaders(event.trailers, end->mutable_trailers());
      }
      break;
    }
  }
  return out;
}

}  // namespace mesh::internal

// Tap wire conversion: ObserveRequest → TapOptions (every match node, every
// refusal naming its part) and TapEvent → wire TapEvent (every event kind and
// field), both also through serialized bytes.
#include "src/tap/observe_convert.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

namespace wire = ::io::linkerd::proxy::tap;
namespace wire_http = ::io::linkerd::proxy::http_types;
using WireMatch = wire::ObserveRequest::Match;

// The model has no equality for match trees: compare renderings.
std::string Describe(const TapMatch& m) {
  std::vector<std::string> children;
  for (const TapMatch& c : m.children) children.push_back(Describe(c));
  const std::string joined = absl::StrJoin(children, ", ");
  using Kind = TapMatch::Kind;
  switch (m.kind) {
    case Kind::kAll:
      return absl::StrCat("all(", joined, ")");
    case Kind::kAny:
      return absl::StrCat("any(", joined, ")");
    case Kind::kNot:
      return absl::StrCat("not(", joined, ")");
    case Kind::kSourceNet:
      return absl::StrCat("src_net(", m.value, ")");
    case Kind::kSourcePorts:
      return absl::StrCat("src_ports(", m.port_min, "..", m.port_max, ")");
    case Kind::kDestinationNet:
      return absl::StrCat("dst_net(", m.value, ")");
    case Kind::kDestinationPorts:
      return absl::StrCat("dst_ports(", m.port_min, "..", m.port_max, ")");
    case Kind::kDestinationLabel:
      return absl::StrCat("dst_label(", m.key, "=", m.value, ")");
    case Kind::kRouteLabel:
      return absl::StrCat("route_label(", m.key, "=", m.value, ")");
    case Kind::kScheme:
      return absl::StrCat("scheme(", m.value, ")");
    case Kind::kAuthorityExact:
      return absl::StrCat("authority(", m.value, ")");
    case Kind::kAuthorityPrefix:
      return absl::StrCat("authority_prefix(", m.value, ")");
    case Kind::kMethod:
      return absl::StrCat("method(", m.value, ")");
    case Kind::kPathExact:
      return absl::StrCat("path(", m.value, ")");
    case Kind::kPathPrefix:
      return absl::StrCat("path_prefix(", m.value, ")");
  }
  return "?";
}

wire::ObserveRequest Request(const WireMatch& match, uint32_t limit = 10) {
  wire::ObserveRequest r;
  r.set_limit(limit);
  *r.mutable_match() = match;
  return r;
}

// The converted tree, or "error: <message>".
std::string Convert(const WireMatch& match) {
  absl::StatusOr<TapOptions> options = TapOptionsFromObserve(Request(match));
  if (!options.ok()) {
    EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument);
    return absl::StrCat("error: ", options.status().message());
  }
  return Describe(options->match);
}

WireMatch All(std::vector<WireMatch> matches) {
  WireMatch m;
  m.mutable_all();
  for (WireMatch& c : matches) *m.mutable_all()->add_matches() = std::move(c);
  return m;
}

WireMatch Any(std::vector<WireMatch> matches) {
  WireMatch m;
  m.mutable_any();
  for (WireMatch& c : matches) *m.mutable_any()->add_matches() = std::move(c);
  return m;
}

WireMatch Not(WireMatch inner) {
  WireMatch m;
  *m.mutable_not_() = std::move(inner);
  return m;
}

WireMatch DstV4(uint32_t ip, uint32_t mask) {
  WireMatch m;
  m.mutable_destination()->mutable_netmask()->mutable_ip()->set_ipv4(ip);
  m.mutable_destination()->mutable_netmask()->set_mask(mask);
  return m;
}

WireMatch SrcV6(uint64_t first, uint64_t last, uint32_t mask) {
  WireMatch m;
  auto* netmask = m.mutable_source()->mutable_netmask();
  netmask->mutable_ip()->mutable_ipv6()->set_first(first);
  netmask->mutable_ip()->mutable_ipv6()->set_last(last);
  netmask->set_mask(mask);
  return m;
}

WireMatch DstPorts(uint32_t min, uint32_t max) {
  WireMatch m;
  m.mutable_destination()->mutable_ports()->set_min(min);
  m.mutable_destination()->mutable_ports()->set_max(max);
  return m;
}

WireMatch SrcPorts(uint32_t min, uint32_t max) {
  WireMatch m;
  m.mutable_source()->mutable_ports()->set_min(min);
  m.mutable_source()->mutable_ports()->set_max(max);
  return m;
}

WireMatch DstLabel(const std::string& key, const std::string& value) {
  WireMatch m;
  m.mutable_destination_label()->set_key(key);
  m.mutable_destination_label()->set_value(value);
  return m;
}

WireMatch RouteLabel(const std::string& key, const std::string& value) {
  WireMatch m;
  m.mutable_route_label()->set_key(key);
  m.mutable_route_label()->set_value(value);
  return m;
}

WireMatch Method(wire_http::HttpMethod::Registered method) {
  WireMatch m;
  m.mutable_http()->mutable_method()->set_registered(method);
  return m;
}

WireMatch MethodString(const std::string& method) {
  WireMatch m;
  m.mutable_http()->mutable_method()->set_unregistered(method);
  return m;
}

WireMatch Scheme(wire_http::Scheme::Registered scheme) {
  WireMatch m;
  m.mutable_http()->mutable_scheme()->set_registered(scheme);
  return m;
}

WireMatch AuthorityExact(const std::string& a) {
  WireMatch m;
  m.mutable_http()->mutable_authority()->set_exact(a);
  return m;
}

WireMatch AuthorityPrefix(const std::string& a) {
  WireMatch m;
  m.mutable_http()->mutable_authority()->set_prefix(a);
  return m;
}

WireMatch PathExact(const std::string& p) {
  WireMatch m;
  m.mutable_http()->mutable_path()->set_exact(p);
  return m;
}

WireMatch PathPrefix(const std::string& p) {
  WireMatch m;
  m.mutable_http()->mutable_path()->set_prefix(p);
  return m;
}

// --- ObserveRequest → TapOptions ---------------------------------------------

TEST(TapOptionsFromObserve, LimitZeroIsRefused) {
  absl::StatusOr<TapOptions> o = TapOptionsFromObserve(Request(All({}), 0));
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().message(), "limit must be > 0");
}

TEST(TapOptionsFromObserve, MissingMatchIsRefused) {
  wire::ObserveRequest r;
  r.set_limit(5);
  absl::StatusOr<TapOptions> o = TapOptionsFromObserve(r);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().message(), "match is required");
}

TEST(TapOptionsFromObserve, LimitExtractAndBuffer) {
  wire::ObserveRequest r = Request(All({}), 4000000000u);
  absl::StatusOr<TapOptions> o = TapOptionsFromObserve(r);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->limit, 4000000000u);
  EXPECT_FALSE(o->extract_headers);
  EXPECT_EQ(o->buffer, TapOptions().buffer);
  EXPECT_EQ(Describe(o->match), "all()");

  r.mutable_extract();  // no http
  EXPECT_FALSE(TapOptionsFromObserve(r)->extract_headers);
  r.mutable_extract()->mutable_http();  // no headers
  EXPECT_FALSE(TapOptionsFromObserve(r)->extract_headers);
  r.mutable_extract()->mutable_http()->mutable_headers();
  EXPECT_TRUE(TapOptionsFromObserve(r)->extract_headers);
}

TEST(TapOptionsFromObserve, Sequences) {
  EXPECT_EQ(Convert(Any({})), "any()");
  EXPECT_EQ(Convert(All({PathPrefix("/a"), Any({Not(PathExact("/b/c")),
                                                AuthorityExact("x:1")})})),
            "all(path_prefix(/a), any(not(path(/b/c)), authority(x:1)))");
  EXPECT_EQ(Convert(Not(Not(All({})))), "not(not(all()))");
}

TEST(TapOptionsFromObserve, Netmasks) {
  EXPECT_EQ(Convert(DstV4(0x0A000001, 32)), "dst_net(10.0.0.1/32)");
  // Host bits are cleared: only the network matters.
  EXPECT_EQ(Convert(DstV4(0x0A010203, 8)), "dst_net(10.0.0.0/8)");
  EXPECT_EQ(Convert(DstV4(0xC0A80A81, 25)), "dst_net(192.168.10.128/25)");
  EXPECT_EQ(Convert(DstV4(0xFFFFFFFF, 0)), "dst_net(0.0.0.0/0)");
  // fd00::1/64 and ::1/128.
  EXPECT_EQ(Convert(SrcV6(0xFD00000000000000ull, 1, 64)), "src_net(fd00::/64)");
  EXPECT_EQ(Convert(SrcV6(0, 1, 128)), "src_net(::1/128)");
  EXPECT_EQ(Convert(SrcV6(0x20010DB8ABCDFFFFull, 0, 52)),
            "src_net(2001:db8:abcd:f000::/52)");
}

TEST(TapOptionsFromObserve, PortRanges) {
  EXPECT_EQ(Convert(DstPorts(80, 90)), "dst_ports(80..90)");
  EXPECT_EQ(Convert(DstPorts(0, 8080)), "dst_ports(8080..8080)");
  EXPECT_EQ(Convert(DstPorts(443, 0)), "dst_ports(443..443)");
  EXPECT_EQ(Convert(DstPorts(1, 65535)), "dst_ports(1..65535)");
  EXPECT_EQ(Convert(SrcPorts(7000, 7001)), "src_ports(7000..7001)");
}

TEST(TapOptionsFromObserve, Labels) {
  EXPECT_EQ(Convert(DstLabel("pod", "books-1")), "dst_label(pod=books-1)");
  EXPECT_EQ(Convert(DstLabel("canary", "")), "dst_label(canary=)");
  EXPECT_EQ(Convert(RouteLabel("route", "GET /books")),
            "route_label(route=GET /books)");
}

TEST(TapOptionsFromObserve, HttpLeaves) {
  EXPECT_EQ(Convert(Scheme(wire_http::Scheme::HTTP)), "scheme(http)");
  EXPECT_EQ(Convert(Scheme(wire_http::Scheme::HTTPS)), "scheme(https)");
  WireMatch h2c;
  h2c.mutable_http()->mutable_scheme()->set_unregistered("h2c");
  EXPECT_EQ(Convert(h2c), "scheme(h2c)");

  EXPECT_EQ(Convert(AuthorityExact("books:7001")), "authority(books:7001)");
  EXPECT_EQ(Convert(AuthorityPrefix("books")), "authority_prefix(books)");
  EXPECT_EQ(Convert(PathExact("/books.Library/GetBook")),
            "path(/books.Library/GetBook)");
  EXPECT_EQ(Convert(PathPrefix("/books.Library/")),
            "path_prefix(/books.Library/)");
  EXPECT_EQ(Convert(PathPrefix("")), "path_prefix()");

  EXPECT_EQ(Convert(MethodString("PURGE")), "method(PURGE)");
  const std::vector<std::string> names = {"GET",     "POST",  "PUT",
                                          "DELETE",  "PATCH", "OPTIONS",
                                          "CONNECT", "HEAD",  "TRACE"};
  for (int i = 0; i <= wire_http::HttpMethod::Registered_MAX; ++i) {
    EXPECT_EQ(
        Convert(Method(static_cast<wire_http::HttpMethod::Registered>(i))),
        absl::StrCat("method(", names[i], ")"));
  }
}

TEST(TapOptionsFromObserve, ThroughBytes) {
  wire::ObserveRequest r = Request(
      All({PathPrefix("/books.Library/"), DstLabel("zone", "a"),
           Not(DstPorts(9000, 9100)), Method(wire_http::HttpMethod::POST)}),
      7);
  r.mutable_extract()->mutable_http()->mutable_headers();
  wire::ObserveRequest parsed;
  ASSERT_TRUE(parsed.ParseFromString(r.SerializeAsString()));
  absl::StatusOr<TapOptions> o = TapOptionsFromObserve(parsed);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->limit, 7u);
  EXPECT_TRUE(o->extract_headers);
  EXPECT_EQ(Describe(o->match),
            "all(path_prefix(/books.Library/), dst_label(zone=a), "
            "not(dst_ports(9000..9100)), method(POST))");
}

TEST(TapOptionsFromObserve, EmptyNodesAreRefusedByPath) {
  EXPECT_EQ(Convert(WireMatch()), "error: match: no condition set");
  EXPECT_EQ(Convert(All({PathPrefix("/"), WireMatch()})),
            "error: match.all[1]: no condition set");
  EXPECT_EQ(Convert(Not(WireMatch())), "error: match.not: no condition set");
  EXPECT_EQ(Convert(Any({All({}), Not(All({WireMatch()}))})),
            "error: match.any[1].not.all[0]: no condition set");

  WireMatch tcp;
  tcp.mutable_destination();
  EXPECT_EQ(Convert(tcp),
            "error: match.destination: neither netmask nor ports set");
  tcp.Clear();
  tcp.mutable_source();
  EXPECT_EQ(Convert(tcp), "error: match.source: neither netmask nor ports set");

  WireMatch http;
  http.mutable_http();
  EXPECT_EQ(Convert(http), "error: match.http: no condition set");
  http.mutable_http()->mutable_authority();
  EXPECT_EQ(Convert(http),
            "error: match.http.authority: neither exact nor prefix set");
  http.mutable_http()->mutable_path();
  EXPECT_EQ(Convert(http),
            "error: match.http.path: neither exact nor prefix set");
  http.mutable_http()->mutable_method();
  EXPECT_EQ(Convert(http),
            "error: match.http.method: neither registered nor unregistered "
            "set");
  http.mutable_http()->mutable_scheme();
  EXPECT_EQ(Convert(http),
            "error: match.http.scheme: neither registered nor unregistered "
            "set");
}

TEST(TapOptionsFromObserve, BadMethodsAndSchemes) {
  EXPECT_EQ(Convert(MethodString("")),
            "error: match.http.method: unregistered value is empty");
  EXPECT_EQ(Convert(Method(static_cast<wire_http::HttpMethod::Registered>(42))),
            "error: match.http.method: unknown registered value 42");
  EXPECT_EQ(Convert(Scheme(static_cast<wire_http::Scheme::Registered>(7))),
            "error: match.http.scheme: unknown registered value 7");
  WireMatch m;
  m.mutable_http()->mutable_scheme()->set_unregistered("");
  EXPECT_EQ(Convert(m),
            "error: match.http.scheme: unregistered value is empty");
}

TEST(TapOptionsFromObserve, BadNetmasks) {
  WireMatch m;
  m.mutable_destination()->mutable_netmask()->set_mask(8);
  EXPECT_EQ(Convert(m), "error: match.destination.netmask: no ip");
  m.mutable_destination()->mutable_netmask()->mutable_ip();
  EXPECT_EQ(Convert(m),
            "error: match.destination.netmask: ip has neither ipv4 nor ipv6");
  EXPECT_EQ(Convert(All({All({}), DstV4(0x0A000000, 33)})),
            "error: match.all[1].destination.netmask: mask 33 > 32 for IPv4");
  EXPECT_EQ(Convert(SrcV6(0, 1, 129)),
            "error: match.source.netmask: mask 129 > 128 for IPv6");
}

TEST(TapOptionsFromObserve, BadPortRanges) {
  EXPECT_EQ(Convert(All({PathPrefix("/"), DstPorts(9000, 80)})),
            "error: match.all[1].destination.ports: min 9000 > max 80");
  EXPECT_EQ(Convert(DstPorts(70000, 0)),
            "error: match.destination.ports: min 70000 > 65535");
  EXPECT_EQ(Convert(DstPorts(1, 65536)),
            "error: match.destination.ports: max 65536 > 65535");
  EXPECT_EQ(Convert(SrcPorts(0, 0)),
            "error: match.source.ports: both bounds are 0");
}

TEST(TapOptionsFromObserve, EmptyLabelKeys) {
  EXPECT_EQ(Convert(DstLabel("", "x")),
            "error: match.destination_label: empty key");
  EXPECT_EQ(Convert(Any({RouteLabel("", "x")})),
            "error: match.any[0].route_label: empty key");
}

// --- TapEvent → wire
// -----------------------------------------------------------

TapEvent Base(TapEvent::Kind kind) {
  TapEvent e;
  e.kind = kind;
  e.base = 3;
  e.stream = 41;
  e.destination = "10.0.0.1:7001";
  e.destination_labels = {{"pod", "books-1"}, {"zone", "a"}};
  e.route_labels = {{"route", "GetBook"}};
  return e;
}

wire::TapEvent ThroughBytes(const wire::TapEvent& event) {
  wire::TapEvent parsed;
  EXPECT_TRUE(parsed.ParseFromString(event.SerializeAsString()));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(event, parsed))
      << event.DebugString() << " vs " << parsed.DebugString();
  return parsed;
}

TEST(TapEventToProto, AHedgeSaysSoInItsRouteLabels) {
  TapEvent e = Base(TapEvent::Kind::kRequestInit);
  e.path = "/books.Library/GetBook";
  e.attempt = 3;
  e.hedge = true;
  wire::TapEvent w = ThroughBytes(TapEventToProto(e));
  EXPECT_THAT(
      w.route_meta().labels(),
      UnorderedElementsAre(Pair("route", "GetBook"), Pair("attempt", "3"),
                           Pair("hedge", "true")));
  // A retry: its number, no hedge label; a first attempt: neither.
  e.hedge = false;
  w = ThroughBytes(TapEventToProto(e));
  EXPECT_THAT(
      w.route_meta().labels(),
      UnorderedElementsAre(Pair("route", "GetBook"), Pair("attempt", "3")));
  e.attempt = 1;
  w = ThroughBytes(TapEventToProto(e));
  EXPECT_THAT(w.route_meta().labels(),
              UnorderedElementsAre(Pair("route", "GetBook")));
}

TEST(TapEventToProto, RequestInit) {
  TapEvent e = Base(TapEvent::Kind::kRequestInit);
  e.method = "POST";
  e.scheme = "http";
  e.authority = "books:7001";
  e.path = "/books.Library/GetBook";
  e.headers = {{":method", "POST"},
               {"content-type", "application/grpc"},
               {"x-bin", std::string("\0\xff", 2)}};
  wire::TapEvent w = ThroughBytes(TapEventToProto(e));

  EXPECT_FALSE(w.has_source());
  ASSERT_TRUE(w.has_destination());
  EXPECT_EQ(w.destination().ip().ipv4(), 0x0A000001u);
  EXPECT_EQ(w.destination().port(), 7001u);
  EXPECT_THAT(w.destination_meta().labels(),
              UnorderedElementsAre(Pair("pod", "books-1"), Pair("zone", "a")));
  EXPECT_THAT(w.route_meta().labels(),
              UnorderedElementsAre(Pair("route", "GetBook")));
  EXPECT_EQ(w.proxy_direction(), wire::TapEvent::OUTBOUND);

  ASSERT_TRUE(w.http().has_request_init());
  const auto& init = w.http().request_init();
  EXPECT_EQ(init.id().base(), 3u);
  EXPECT_EQ(init.id().stream(), 41u);
  EXPECT_EQ(init.method().registered(), wire_http::HttpMethod::POST);
  EXPECT_EQ(init.scheme().registered(), wire_http::Scheme::HTTP);
  EXPECT_EQ(init.authority(), "books:7001");
  EXPECT_EQ(init.path(), "/books.Library/GetBook");
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& h : init.headers().headers()) {
    headers.emplace_back(h.name(), h.value());
  }
  EXPECT_THAT(headers, ElementsAre(Pair(":method", "POST"),
                                   Pair("content-type", "application/grpc"),
                                   Pair("x-bin", std::string("\0\xff", 2))));
}

TEST(TapEventToProto, MethodsAndSchemes) {
  TapEvent e = Base(TapEvent::Kind::kRequestInit);
  e.method = "GET";
  e.scheme = "HTTPS";
  wire::TapEvent w = TapEventToProto(e);
  EXPECT_EQ(w.http().request_init().method().type_case(),
            wire_http::HttpMethod::kRegistered);
  EXPECT_EQ(w.http().request_init().method().registered(),
            wire_http::HttpMethod::GET);
  EXPECT_EQ(w.http().request_init().scheme().registered(),
            wire_http::Scheme::HTTPS);

  e.method = "PURGE";
  e.scheme = "h2c";
  w = ThroughBytes(TapEventToProto(e));
  EXPECT_EQ(w.http().request_init().method().unregistered(), "PURGE");
  EXPECT_EQ(w.http().request_init().scheme().unregistered(), "h2c");

  // Methods are case-sensitive (RFC 9110 §9.1): "get" is not GET.
  e.method = "get";
  w = TapEventToProto(e);
  EXPECT_EQ(w.http().request_init().method().unregistered(), "get");

  e.method.clear();
  e.scheme.clear();
  w = TapEventToProto(e);
  EXPECT_FALSE(w.http().request_init().has_method());
  EXPECT_FALSE(w.http().request_init().has_scheme());
  EXPECT_FALSE(w.http().request_init().has_headers());
}

TEST(TapEventToProto, Destinations) {
  TapEvent e = Base(TapEvent::Kind::kRequestInit);
  e.destination = "[fd00::1:2]:443";
  wire::TapEvent w = TapEventToProto(e);
  ASSERT_TRUE(w.destination().ip().has_ipv6());
  EXPECT_EQ(w.destination().ip().ipv6().first(), 0xFD00000000000000ull);
  EXPECT_EQ(w.destination().ip().ipv6().last(), 0x0000000000010002ull);
  EXPECT_EQ(w.destination().port(), 443u);

  e.destination = "255.254.0.9:1";
  w = TapEventToProto(e);
  EXPECT_EQ(w.destination().ip().ipv4(), 0xFFFE0009u);
  EXPECT_EQ(w.destination().port(), 1u);

  for (const char* bad : {"", "books:7001", "10.0.0.1", "[::1]"}) {
    e.destination = bad;
    EXPECT_FALSE(TapEventToProto(e).has_destination()) << bad;
  }
}

TEST(TapEventToProto, ResponseInit) {
  TapEvent e = Base(TapEvent::Kind::kResponseInit);
  e.since_request_init = absl::Microseconds(1234);
  e.http_status = 200;
  e.headers = {{":status", "200"}, {"content-type", "application/grpc"}};
  wire::TapEvent w = ThroughBytes(TapEventToProto(e));
  ASSERT_TRUE(w.http().has_response_init());
  const auto& init = w.http().response_init();
  EXPECT_EQ(init.id().base(), 3u);
  EXPECT_EQ(init.id().stream(), 41u);
  EXPECT_EQ(init.since_request_init().seconds(), 0);
  EXPECT_EQ(init.since_request_init().nanos(), 1234000);
  EXPECT_EQ(init.http_status(), 200u);
  ASSERT_EQ(init.headers().headers_size(), 2);
  EXPECT_EQ(init.headers().headers(0).name(), ":status");
  EXPECT_EQ(init.headers().headers(1).value(), "application/grpc");

  e.since_request_init = absl::Milliseconds(2500);
  e.headers.clear();
  w = TapEventToProto(e);
  EXPECT_EQ(w.http().response_init().since_request_init().seconds(), 2);
  EXPECT_EQ(w.http().response_init().since_request_init().nanos(), 500000000);
  EXPECT_FALSE(w.http().response_init().has_headers());

  e.since_request_init = absl::Milliseconds(-3);
  w = TapEventToProto(e);
  EXPECT_EQ(w.http().response_init().since_request_init().seconds(), 0);
  EXPECT_EQ(w.http().response_init().since_request_init().nanos(), 0);
}

TEST(TapEventToProto, ResponseEnd) {
  TapEvent e = Base(TapEvent::Kind::kResponseEnd);
  e.since_request_init = absl::Microseconds(1300);
  e.since_response_init = absl::Microseconds(66);
  e.response_bytes = 42;
  e.grpc_status = 5;
  e.trailers = {{"grpc-status", "5"}, {"grpc-message", "no such book"}};
  wire::TapEvent w = ThroughBytes(TapEventToProto(e));
  ASSERT_TRUE(w.http().has_response_end());
  const auto& end = w.http().response_end();
  EXPECT_EQ(end.id().stream(), 41u);
  EXPECT_EQ(end.since_request_init().nanos(), 1300000);
  EXPECT_EQ(end.since_response_init().nanos(), 66000);
  EXPECT_EQ(end.response_bytes(), 42u);
  EXPECT_EQ(end.eos().end_case(), wire::Eos::kGrpcStatusCode);
  EXPECT_EQ(end.eos().grpc_status_code(), 5u);
  ASSERT_EQ(end.trailers().headers_size(), 2);
  EXPECT_EQ(end.trailers().headers(1).name(), "grpc-message");
  EXPECT_EQ(end.trailers().headers(1).value(), "no such book");

  e.grpc_status = 0;
  w = TapEventToProto(e);
  EXPECT_EQ(w.http().response_end().eos().end_case(),
            wire::Eos::kGrpcStatusCode);
  EXPECT_EQ(w.http().response_end().eos().grpc_status_code(), 0u);

  // A reset wins over a status derived from it.
  e.reset_error_code = 8;  // CANCEL
  e.trailers.clear();
  w = ThroughBytes(TapEventToProto(e));
  EXPECT_EQ(w.http().response_end().eos().end_case(),
            wire::Eos::kResetErrorCode);
  EXPECT_EQ(w.http().response_end().eos().reset_error_code(), 8u);
  EXPECT_FALSE(w.http().response_end().has_trailers());

  e.reset_error_code.reset();
  e.grpc_status.reset();
  w = TapEventToProto(e);
  EXPECT_FALSE(w.http().response_end().has_eos());
}

TEST(TapEventToProto, EmptyLabels) {
  TapEvent e;
  e.kind = TapEvent::Kind::kResponseEnd;
  wire::TapEvent w = TapEventToProto(e);
  EXPECT_TRUE(w.destination_meta().labels().empty());
  EXPECT_TRUE(w.route_meta().labels().empty());
  EXPECT_EQ(w.http().response_end().id().base(), 0u);
  EXPECT_EQ(w.http().response_end().id().stream(), 0u);
}

}  // namespace
}  // namespace mesh::internal

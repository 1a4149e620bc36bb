// Tap match trees: each leaf, all/any/not, address parsing, and the
// validation messages that name the bad part.
#include "src/tap/tap_match.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/tap.h"

namespace mesh::internal {
namespace {

using ::testing::HasSubstr;

// A request head over owned strings; `route` null means no route.
struct Head {
  std::string method = "POST";
  std::string scheme = "http";
  std::string authority = "books.default.svc:7001";
  std::string path = "/books.Library/GetBook";
  Endpoint endpoint{"10.1.2.3:7001"};
  std::map<std::string, std::string> route_labels = {{"route", "get"}};
  bool has_endpoint = true;
  bool has_route = true;

  TapRequestHead view() const {
    return TapRequestHead{method,
                          scheme,
                          authority,
                          path,
                          has_endpoint ? &endpoint : nullptr,
                          has_route ? &route_labels : nullptr};
  }
};

bool Matches(const TapMatch& match, const Head& head = Head()) {
  absl::StatusOr<CompiledTapMatch> compiled = CompiledTapMatch::Compile(match);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() && compiled->Matches(head.view());
}

absl::Status Invalid(const TapMatch& match) {
  TapOptions options;
  options.match = match;
  return ValidateTapOptions(options);
}

TEST(TapMatchTest, MethodIsExact) {
  EXPECT_TRUE(Matches(TapMatch::Method("POST")));
  EXPECT_FALSE(Matches(TapMatch::Method("GET")));
  EXPECT_FALSE(Matches(TapMatch::Method("POS")));
}

TEST(TapMatchTest, SchemeIsExact) {
  EXPECT_TRUE(Matches(TapMatch::Scheme("http")));
  EXPECT_FALSE(Matches(TapMatch::Scheme("https")));
}

TEST(TapMatchTest, AuthorityExactAndPrefix) {
  EXPECT_TRUE(Matches(TapMatch::AuthorityExact("books.default.svc:7001")));
  EXPECT_FALSE(Matches(TapMatch::AuthorityExact("books.default.svc")));
  EXPECT_TRUE(Matches(TapMatch::AuthorityPrefix("books.")));
  EXPECT_FALSE(Matches(TapMatch::AuthorityPrefix("authors.")));
}

TEST(TapMatchTest, PathExactAndPrefixIgnoreTheQuery) {
  Head head;
  head.path = "/books.Library/GetBook?id=7&x=/books.Library/Other";
  EXPECT_TRUE(Matches(TapMatch::PathExact("/books.Library/GetBook"), head));
  EXPECT_FALSE(Matches(TapMatch::PathExact(head.path), head));
  EXPECT_TRUE(Matches(TapMatch::PathPrefix("/books.Library/"), head));
  EXPECT_FALSE(Matches(TapMatch::PathPrefix("/books.Library/GetBook?"), head));
  EXPECT_FALSE(Matches(TapMatch::PathPrefix("/authors."), head));
}

TEST(TapMatchTest, DestinationNetV4MasksTheNetwork) {
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("10.0.0.0/8")));
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("10.9.9.9/8")));  // masked
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("10.1.2.0/23")));
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("10.1.2.3/32")));
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("10.1.2.3")));  // bare: /32
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("0.0.0.0/0")));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("10.1.2.4/32")));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("10.1.4.0/23")));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("192.168.0.0/16")));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("::/0")));  // other family
}

TEST(TapMatchTest, DestinationNetV6) {
  Head head;
  head.endpoint.address = "[fd00:1:2::7]:8443";
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("fd00::/8"), head));
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("fd00:1:2::/48"), head));
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("fd00:1:2::7/128"), head));
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("fd00:1:3::/47"), head));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("fd00:1:3::/48"), head));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("fe80::/10"), head));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("0.0.0.0/0"), head));
  EXPECT_TRUE(Matches(TapMatch::DestinationPorts(8443, 8443), head));
}

TEST(TapMatchTest, DestinationPortsRangeAndZeroBound) {
  EXPECT_TRUE(Matches(TapMatch::DestinationPorts(7000, 7999)));
  EXPECT_TRUE(Matches(TapMatch::DestinationPorts(7001, 7001)));
  EXPECT_FALSE(Matches(TapMatch::DestinationPorts(7002, 8000)));
  EXPECT_FALSE(Matches(TapMatch::DestinationPorts(1, 7000)));
  // A 0 bound copies the other: a single port.
  EXPECT_TRUE(Matches(TapMatch::DestinationPorts(0, 7001)));
  EXPECT_TRUE(Matches(TapMatch::DestinationPorts(7001, 0)));
  EXPECT_FALSE(Matches(TapMatch::DestinationPorts(0, 7002)));
  EXPECT_FALSE(Matches(TapMatch::DestinationPorts(7000, 0)));
}

TEST(TapMatchTest, DestinationLeavesNeedAParsableEndpoint) {
  Head no_endpoint;
  no_endpoint.has_endpoint = false;
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("0.0.0.0/0"), no_endpoint));
  EXPECT_FALSE(Matches(TapMatch::DestinationPorts(1, 65535), no_endpoint));
  EXPECT_FALSE(Matches(TapMatch::DestinationLabel("k", "v"), no_endpoint));
  Head host_name;
  host_name.endpoint.address = "books:7001";
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("0.0.0.0/0"), host_name));
  EXPECT_FALSE(Matches(TapMatch::DestinationPorts(1, 65535), host_name));
}

TEST(TapMatchTest, LabelsOnEndpointVersusRoute) {
  Head head;
  head.endpoint.labels = {{"pod", "books-1"}, {"zone", "a"}};
  head.route_labels = {{"route", "get"}, {"pod", "route-pod"}};
  EXPECT_TRUE(Matches(TapMatch::DestinationLabel("pod", "books-1"), head));
  EXPECT_FALSE(Matches(TapMatch::DestinationLabel("pod", "books-2"), head));
  EXPECT_FALSE(Matches(TapMatch::DestinationLabel("route", "get"), head));
  EXPECT_TRUE(Matches(TapMatch::RouteLabel("route", "get"), head));
  EXPECT_TRUE(Matches(TapMatch::RouteLabel("pod", "route-pod"), head));
  EXPECT_FALSE(Matches(TapMatch::RouteLabel("pod", "books-1"), head));
  EXPECT_FALSE(Matches(TapMatch::RouteLabel("zone", "a"), head));
  head.has_route = false;
  EXPECT_FALSE(Matches(TapMatch::RouteLabel("route", "get"), head));
}

TEST(TapMatchTest, SourceLeavesNeverMatch) {
  EXPECT_FALSE(Matches(TapMatch::SourceNet("0.0.0.0/0")));
  EXPECT_FALSE(Matches(TapMatch::SourcePorts(1, 65535)));
  EXPECT_TRUE(Matches(TapMatch::Not(TapMatch::SourceNet("0.0.0.0/0"))));
}

TEST(TapMatchTest, AllAnyNot) {
  TapMatch yes = TapMatch::Method("POST");
  TapMatch no = TapMatch::Method("GET");
  EXPECT_TRUE(Matches(TapMatch::All({})));
  EXPECT_FALSE(Matches(TapMatch::Any({})));
  EXPECT_TRUE(Matches(TapMatch::All({yes, yes})));
  EXPECT_FALSE(Matches(TapMatch::All({yes, no})));
  EXPECT_TRUE(Matches(TapMatch::Any({no, yes})));
  EXPECT_FALSE(Matches(TapMatch::Any({no, no})));
  EXPECT_FALSE(Matches(TapMatch::Not(yes)));
  EXPECT_TRUE(Matches(TapMatch::Not(no)));
  EXPECT_TRUE(Matches(TapMatch::Not(TapMatch::Any({}))));
  // Nesting: siblings after a subtree are found by its end.
  EXPECT_TRUE(Matches(TapMatch::All(
      {TapMatch::Any({no, TapMatch::All({yes, TapMatch::Not(no)})}),
       TapMatch::PathPrefix("/books."), TapMatch::Not(TapMatch::Any({no}))})));
  EXPECT_FALSE(Matches(TapMatch::All(
      {TapMatch::Any({no, TapMatch::All({yes, TapMatch::Not(yes)})}), yes})));
}

TEST(TapMatchTest, DestinationIsTheEndpointAddressParsed) {
  Head head;
  TapRequestHead view = head.view();
  TapMatchInput input(view);
  const SocketAddress* destination = input.Destination();
  ASSERT_NE(destination, nullptr);
  EXPECT_EQ(destination->ip(), *IpAddress::Parse("10.1.2.3"));
  EXPECT_EQ(destination->port(), 7001);
  EXPECT_EQ(input.Destination(), destination);  // parsed once

  head.endpoint.address = "[::1]:65535";
  view = head.view();
  TapMatchInput v6(view);
  ASSERT_NE(v6.Destination(), nullptr);
  EXPECT_TRUE(v6.Destination()->ip().is_v6());
  EXPECT_EQ(v6.Destination()->ip().bytes()[15], 1);
  EXPECT_EQ(v6.Destination()->port(), 65535);

  for (const char* bad :
       {"", "10.1.2.3", "10.1.2:80", "10.1.2.256:80", "10.1.2.3:", "a:80",
        "10.1.2.3:65536", "10.1.2.3:8x", "[::1]", "[::1]80", "[zz]:80",
        "10.1.2.3.4:80", "[10.1.2.3]:80", "::1:80", "[fe80::1%eth0]:80"}) {
    head.endpoint.address = bad;
    view = head.view();
    TapMatchInput input_bad(view);
    EXPECT_EQ(input_bad.Destination(), nullptr) << bad;
  }
}

TEST(TapMatchTest, Ipv4MappedAddressesAreIpv6) {
  // A v4-mapped endpoint is in v6 nets only, and a v4 endpoint is in no
  // v4-mapped net: the families are not mixed.
  Head mapped;
  mapped.endpoint.address = "[::ffff:10.1.2.3]:7001";
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("::ffff:10.0.0.0/104"), mapped));
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("::ffff:0:0/96"), mapped));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("10.0.0.0/8"), mapped));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("0.0.0.0/0"), mapped));
  EXPECT_TRUE(Matches(TapMatch::DestinationNet("::/0"), mapped));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("::ffff:10.0.0.0/104")));
  EXPECT_FALSE(Matches(TapMatch::DestinationNet("::ffff:0:0/96")));
}

TEST(TapValidationTest, ValidOptionsAreOk) {
  TapOptions options;
  options.match = TapMatch::All(
      {TapMatch::DestinationNet("10.0.0.0/8"),
       TapMatch::DestinationNet("fd00::/8"), TapMatch::DestinationPorts(0, 80),
       TapMatch::RouteLabel("route", ""), TapMatch::Not(TapMatch::Any({}))});
  EXPECT_TRUE(ValidateTapOptions(options).ok());
}

TEST(TapValidationTest, LimitAndBufferMustBePositive) {
  TapOptions options;
  options.limit = 0;
  EXPECT_EQ(ValidateTapOptions(options).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ValidateTapOptions(options).message(), HasSubstr("limit"));
  options.limit = 1;
  options.buffer = 0;
  EXPECT_EQ(ValidateTapOptions(options).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ValidateTapOptions(options).message(), HasSubstr("buffer"));
}

TEST(TapValidationTest, NotNeedsExactlyOneChild) {
  TapMatch two_children;
  two_children.kind = TapMatch::Kind::kNot;
  two_children.children = {TapMatch::Method("GET"), TapMatch::Method("PUT")};
  absl::Status status =
      Invalid(TapMatch::All({TapMatch::Method("GET"), two_children}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("match.all[1].not: needs exactly one condition"));
  TapMatch none;
  none.kind = TapMatch::Kind::kNot;
  EXPECT_THAT(Invalid(none).message(),
              HasSubstr("match.not: needs exactly one condition"));
}

TEST(TapValidationTest, BadCidrsNameThePart) {
  EXPECT_THAT(Invalid(TapMatch::DestinationNet("10.0.0/8")).message(),
              HasSubstr("match.destination_net:"));
  EXPECT_THAT(Invalid(TapMatch::DestinationNet("10.0.0.0/33")).message(),
              HasSubstr("match.destination_net: prefix length"));
  EXPECT_THAT(Invalid(TapMatch::DestinationNet("fd00::/129")).message(),
              HasSubstr("0..128"));
  EXPECT_THAT(Invalid(TapMatch::DestinationNet("10.0.0.0/x")).message(),
              HasSubstr("match.destination_net:"));
  EXPECT_THAT(
      Invalid(TapMatch::Any({TapMatch::Not(TapMatch::SourceNet("host/8"))}))
          .message(),
      HasSubstr("match.any[0].not.source_net:"));
}

TEST(TapValidationTest, BadPortRangesNameThePart) {
  EXPECT_THAT(
      Invalid(TapMatch::Any({TapMatch::DestinationPorts(1, 65536)})).message(),
      HasSubstr("match.any[0].destination_ports: port 65536"));
  EXPECT_THAT(Invalid(TapMatch::DestinationPorts(70000, 0)).message(),
              HasSubstr("match.destination_ports: port 70000"));
  EXPECT_THAT(Invalid(TapMatch::DestinationPorts(90, 80)).message(),
              HasSubstr("match.destination_ports: min 90 is above max 80"));
  EXPECT_THAT(Invalid(TapMatch::SourcePorts(0, 0)).message(),
              HasSubstr("match.source_ports: both bounds are 0"));
  EXPECT_TRUE(Invalid(TapMatch::DestinationPorts(65535, 0)).ok());
}

TEST(TapValidationTest, EmptyLabelKeyNamesThePart) {
  absl::Status status = Invalid(
      TapMatch::All({TapMatch::Method("GET"), TapMatch::All({}),
                     TapMatch::All({TapMatch::DestinationLabel("", "v")})}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("match.all[2].all[0].destination_label: empty label "
                        "key"));
  EXPECT_THAT(Invalid(TapMatch::RouteLabel("", "get")).message(),
              HasSubstr("match.route_label: empty label key"));
}

TEST(TapValidationTest, DeepTreesAreRefused) {
  TapMatch m = TapMatch::Method("GET");
  for (int i = 0; i < CompiledTapMatch::kMaxDepth; ++i) m = TapMatch::Not(m);
  EXPECT_THAT(Invalid(m).message(), HasSubstr("nested deeper than"));
}

// What one subscription's match may cost each request is bounded: its
// nodes (leaves and all/any/not alike) and the bytes of its strings.
TEST(TapValidationTest, MatchesPastTheNodeBoundAreRefusedNamingIt) {
  std::vector<TapMatch> leaves(kTapMaxMatchNodes - 1, TapMatch::Method("GET"));
  EXPECT_TRUE(Invalid(TapMatch::Any(leaves)).ok());  // 256 nodes
  leaves.push_back(TapMatch::Method("PUT"));
  absl::Status status = Invalid(TapMatch::Any(leaves));  // 257
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("match.any[255].method: the match has more than 256 "
                        "nodes (conditions and all/any/not), the most one "
                        "subscription may have (kTapMaxMatchNodes)"));
  // Inner nodes count too.
  std::vector<TapMatch> nots(kTapMaxMatchNodes / 2,
                             TapMatch::Not(TapMatch::Method("GET")));
  EXPECT_THAT(Invalid(TapMatch::All(nots)).message(),
              HasSubstr("kTapMaxMatchNodes"));
}

TEST(TapValidationTest, MatchesPastTheByteBoundAreRefusedNamingIt) {
  const std::string half(kTapMaxMatchBytes / 2, 'p');
  EXPECT_TRUE(Invalid(TapMatch::Any({TapMatch::PathPrefix(half),
                                     TapMatch::PathPrefix(half)}))
                  .ok());
  absl::Status status = Invalid(TapMatch::Any(
      {TapMatch::PathPrefix(half), TapMatch::DestinationLabel("k", half)}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("match.any[1].destination_label: the match's strings "
                        "pass 16384 bytes, the most one subscription may have "
                        "(kTapMaxMatchBytes)"));
}

}  // namespace
}  // namespace mesh::internal

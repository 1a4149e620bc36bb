// Destination.Get wire messages → EndpointUpdate (src/discovery/linkerd/).
// Expected values are written out by hand from docs/wire-linkerd.md and
// upstream's protos.
#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "linkerd/destination.pb.h"
#include "src/discovery/linkerd/convert.h"
#include "tests/unit/linkerd_convert_test_util.h"

namespace mesh::internal::linkerd {
namespace {

namespace dst = ::io::linkerd::proxy::destination;
namespace net = ::io::linkerd::proxy::net;

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

net::TcpAddress V4(uint32_t ip, uint32_t port) {
  net::TcpAddress a;
  a.mutable_ip()->set_ipv4(ip);
  a.set_port(port);
  return a;
}

net::TcpAddress V6(uint64_t first, uint64_t last, uint32_t port) {
  net::TcpAddress a;
  a.mutable_ip()->mutable_ipv6()->set_first(first);
  a.mutable_ip()->mutable_ipv6()->set_last(last);
  a.set_port(port);
  return a;
}

dst::WeightedAddr Weighted(net::TcpAddress addr, uint32_t weight) {
  dst::WeightedAddr w;
  *w.mutable_addr() = std::move(addr);
  w.set_weight(weight);
  return w;
}

Endpoint Ep(std::string address, uint32_t weight) {
  Endpoint e;
  e.address = std::move(address);
  e.weight = weight;
  return e;
}

// --- FormatTcpAddress
// ---------------------------------------------------------

TEST(FormatTcpAddressTest, Ipv4IsBigEndianInOneInteger) {
  EXPECT_EQ(FormatTcpAddress(V4(0x0A000001, 8080)).value(), "10.0.0.1:8080");
  EXPECT_EQ(FormatTcpAddress(V4(0xC0A80164, 80)).value(), "192.168.1.100:80");
  EXPECT_EQ(FormatTcpAddress(V4(0x7F000001, 1)).value(), "127.0.0.1:1");
  EXPECT_EQ(FormatTcpAddress(V4(0xFFFFFFFF, 65535)).value(),
            "255.255.255.255:65535");
  EXPECT_EQ(FormatTcpAddress(V4(0, 9)).value(), "0.0.0.0:9");
}

TEST(FormatTcpAddressTest, Ipv6IsTwoBigEndianHalvesInCanonicalText) {
  EXPECT_EQ(FormatTcpAddress(V6(0, 1, 443)).value(), "[::1]:443");
  EXPECT_EQ(FormatTcpAddress(V6(0x20010DB800000000, 1, 80)).value(),
            "[2001:db8::1]:80");
  EXPECT_EQ(
      FormatTcpAddress(V6(0xFE80000000000000, 0x0000000000010002, 80)).value(),
      "[fe80::1:2]:80");
  EXPECT_EQ(FormatTcpAddress(V6(0x20010DB885A30000, 0x00008A2E03707334, 7001))
                .value(),
            "[2001:db8:85a3::8a2e:370:7334]:7001");
  EXPECT_EQ(FormatTcpAddress(V6(~uint64_t{0}, ~uint64_t{0}, 1)).value(),
            "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:1");
  // IPv4-mapped, and the all-zero address (ipv6 set but empty).
  EXPECT_EQ(FormatTcpAddress(V6(0, 0x0000FFFF0A000001, 80)).value(),
            "[::ffff:10.0.0.1]:80");
  EXPECT_EQ(FormatTcpAddress(V6(0, 0, 80)).value(), "[::]:80");
}

TEST(FormatTcpAddressTest, RejectsMissingIpAndBadPorts) {
  net::TcpAddress no_ip;
  no_ip.set_port(80);
  absl::StatusOr<std::string> r = FormatTcpAddress(no_ip);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("no ip"));

  net::TcpAddress empty_ip;
  empty_ip.mutable_ip();
  empty_ip.set_port(80);
  r = FormatTcpAddress(empty_ip);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("neither ipv4 nor ipv6"));

  r = FormatTcpAddress(V4(0x0A000001, 0));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      r.status().message(),
      AllOf(HasSubstr("10.0.0.1"), HasSubstr("port 0"), HasSubstr("1..65535")));

  r = FormatTcpAddress(V4(0x0A000001, 65536));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("port 65536"));

  r = FormatTcpAddress(V6(0, 1, 4294967295u));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              AllOf(HasSubstr("[::1]"), HasSubstr("port 4294967295")));
}

// --- ConvertWeightedAddr
// ------------------------------------------------------

TEST(ConvertWeightedAddrTest, ConvertsEveryField) {
  dst::WeightedAddr w = Weighted(V4(0x0A000001, 7001), 10000);
  (*w.mutable_metric_labels())["pod"] = "books-1";
  (*w.mutable_metric_labels())["zone"] = "b";
  w.mutable_tls_identity()->mutable_dns_like_identity()->set_name(
      "books.default.serviceaccount.identity.linkerd.cluster.local");
  w.mutable_protocol_hint()->mutable_h2();
  w.mutable_authority_override()->set_authority_override(
      "books.default.svc.cluster.local:7001");
  // Carried on the wire, not in the model: must not disturb the rest.
  w.mutable_http2()->mutable_flow_control()->set_initial_stream_window_size(1);
  w.mutable_resource_ref()->set_default_("default");
  google::protobuf::Map<std::string, std::string> set_labels;
  set_labels["namespace"] = "default";
  set_labels["zone"] = "a";

  Endpoint want = Ep("10.0.0.1:7001", 10000);
  want.labels = {{"namespace", "default"}, {"pod", "books-1"}, {"zone", "b"}};
  want.tls_identity =
      "books.default.serviceaccount.identity.linkerd.cluster.local";
  want.protocol_hint = ProtocolHint::kHttp2;
  want.authority_override = "books.default.svc.cluster.local:7001";
  EXPECT_EQ(ConvertWeightedAddr(w, set_labels).value(), want);
}

TEST(ConvertWeightedAddrTest, MinimalAddressGetsDefaults) {
  google::protobuf::Map<std::string, std::string> none;
  EXPECT_EQ(ConvertWeightedAddr(Weighted(V4(0x0A000002, 80), 3), none).value(),
            Ep("10.0.0.2:80", 3));
}

TEST(ConvertWeightedAddrTest, WeightZeroBecomesOne) {
  google::protobuf::Map<std::string, std::string> none;
  EXPECT_EQ(ConvertWeightedAddr(Weighted(V4(0x0A000001, 80), 0), none)->weight,
            1u);
  EXPECT_EQ(ConvertWeightedAddr(Weighted(V4(0x0A000001, 80), 0xFFFFFFFF), none)
                ->weight,
            0xFFFFFFFFu);
}

TEST(ConvertWeightedAddrTest, TlsIdentityFromEitherStrategy) {
  google::protobuf::Map<std::string, std::string> none;
  dst::WeightedAddr uri = Weighted(V4(0x0A000001, 80), 1);
  uri.mutable_tls_identity()->mutable_uri_like_identity()->set_uri(
      "spiffe://cluster.local/ns/default/sa/books");
  EXPECT_EQ(ConvertWeightedAddr(uri, none)->tls_identity,
            "spiffe://cluster.local/ns/default/sa/books");

  // server_name alone (no strategy) gives no identity to verify.
  dst::WeightedAddr sni_only = Weighted(V4(0x0A000001, 80), 1);
  sni_only.mutable_tls_identity()->mutable_server_name()->set_name("books");
  EXPECT_EQ(ConvertWeightedAddr(sni_only, none)->tls_identity, "");
}

TEST(ConvertWeightedAddrTest, AuthorityOverrideMustBeAnAuthority) {
  google::protobuf::Map<std::string, std::string> none;
  for (const std::string good :
       {"books.default.svc.cluster.local:7001", "[::1]:80", "user@books:1"}) {
    dst::WeightedAddr w = Weighted(V4(0x0A000001, 80), 1);
    w.mutable_authority_override()->set_authority_override(good);
    EXPECT_EQ(ConvertWeightedAddr(w, none)->authority_override, good);
  }
  // Ignored, not fatal: the endpoint is still usable with the usual
  // authority (linkerd2-proxy does the same).
  for (const std::string bad :
       {"", "books:80/x", "books 80", "books\r\nx: y"}) {
    dst::WeightedAddr w = Weighted(V4(0x0A000001, 80), 1);
    w.mutable_authority_override()->set_authority_override(bad);
    absl::StatusOr<Endpoint> e = ConvertWeightedAddr(w, none);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->authority_override, "") << bad;
  }
}

TEST(ConvertWeightedAddrTest, ProtocolHints) {
  google::protobuf::Map<std::string, std::string> none;
  dst::WeightedAddr w = Weighted(V4(0x0A000001, 80), 1);
  EXPECT_EQ(ConvertWeightedAddr(w, none)->protocol_hint,
            ProtocolHint::kUnknown);
  w.mutable_protocol_hint()->mutable_opaque_transport()->set_inbound_port(4143);
  EXPECT_EQ(ConvertWeightedAddr(w, none)->protocol_hint,
            ProtocolHint::kUnknown);
  w.mutable_protocol_hint()->mutable_opaque();
  EXPECT_EQ(ConvertWeightedAddr(w, none)->protocol_hint, ProtocolHint::kOpaque);
  w.mutable_protocol_hint()->mutable_h2();
  EXPECT_EQ(ConvertWeightedAddr(w, none)->protocol_hint, ProtocolHint::kHttp2);
}

TEST(ConvertWeightedAddrTest, RejectsMissingOrBadAddress) {
  google::protobuf::Map<std::string, std::string> none;
  dst::WeightedAddr no_addr;
  no_addr.set_weight(1);
  absl::StatusOr<Endpoint> r = ConvertWeightedAddr(no_addr, none);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("no addr"));

  r = ConvertWeightedAddr(Weighted(V4(0x0A000001, 0), 1), none);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("port 0"));
}

// --- ConvertUpdate
// ------------------------------------------------------------

TEST(ConvertUpdateTest, AddOverlaysSetLabelsOnEachAddress) {
  dst::Update u;
  dst::WeightedAddrSet* add = u.mutable_add();
  (*add->mutable_metric_labels())["namespace"] = "default";
  (*add->mutable_metric_labels())["service"] = "books";
  *add->add_addrs() = Weighted(V4(0x0A000001, 7001), 10000);
  dst::WeightedAddr* second = add->add_addrs();
  *second = Weighted(V6(0x20010DB800000000, 1, 7001), 5000);
  (*second->mutable_metric_labels())["service"] = "books-canary";

  Endpoint a = Ep("10.0.0.1:7001", 10000);
  a.labels = {{"namespace", "default"}, {"service", "books"}};
  Endpoint b = Ep("[2001:db8::1]:7001", 5000);
  b.labels = {{"namespace", "default"}, {"service", "books-canary"}};
  absl::StatusOr<EndpointUpdate> got = ConvertUpdate(u);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->kind, EndpointUpdate::Kind::kAdd);
  EXPECT_THAT(got->endpoints, ElementsAre(a, b));
}

TEST(ConvertUpdateTest, EmptyAddIsAnEmptyAdd) {
  dst::Update u;
  u.mutable_add();
  absl::StatusOr<EndpointUpdate> got = ConvertUpdate(u);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->kind, EndpointUpdate::Kind::kAdd);
  EXPECT_THAT(got->endpoints, IsEmpty());
}

TEST(ConvertUpdateTest, DuplicateAddressInAddKeepsTheLastAtTheFirstPlace) {
  dst::Update u;
  dst::WeightedAddr* first = u.mutable_add()->add_addrs();
  *first = Weighted(V4(0x0A000001, 80), 1);
  (*first->mutable_metric_labels())["pod"] = "old";
  *u.mutable_add()->add_addrs() = Weighted(V4(0x0A000002, 80), 2);
  dst::WeightedAddr* again = u.mutable_add()->add_addrs();
  *again = Weighted(V4(0x0A000001, 80), 9);
  (*again->mutable_metric_labels())["zone"] = "z";

  Endpoint a = Ep("10.0.0.1:80", 9);
  a.labels = {{"zone", "z"}};  // the last occurrence whole, not a merge
  absl::StatusOr<EndpointUpdate> got = ConvertUpdate(u);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->endpoints, ElementsAre(a, Ep("10.0.0.2:80", 2)));
}

TEST(ConvertUpdateTest, OneBadAddressRejectsTheWholeAdd) {
  dst::Update u;
  *u.mutable_add()->add_addrs() = Weighted(V4(0x0A000001, 80), 1);
  *u.mutable_add()->add_addrs() = Weighted(V4(0x0A000002, 0), 1);
  absl::StatusOr<EndpointUpdate> got = ConvertUpdate(u);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(),
              AllOf(HasSubstr("add: address #1"), HasSubstr("10.0.0.2"),
                    HasSubstr("port 0")));

  dst::Update no_addr;
  *no_addr.mutable_add()->add_addrs() = Weighted(V4(0x0A000001, 80), 1);
  no_addr.mutable_add()->add_addrs()->set_weight(1);
  got = ConvertUpdate(no_addr);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(),
              AllOf(HasSubstr("add: address #1"), HasSubstr("no addr")));
}

TEST(ConvertUpdateTest, RemoveFormatsEveryAddress) {
  dst::Update u;
  *u.mutable_remove()->add_addrs() = V4(0x0A000001, 80);
  *u.mutable_remove()->add_addrs() = V6(0, 1, 443);
  absl::StatusOr<EndpointUpdate> got = ConvertUpdate(u);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->kind, EndpointUpdate::Kind::kRemove);
  EXPECT_THAT(got->addresses, ElementsAre("10.0.0.1:80", "[::1]:443"));
}

TEST(ConvertUpdateTest, UnparseableAddressRejectsTheRemove) {
  dst::Update u;
  *u.mutable_remove()->add_addrs() = V4(0x0A000001, 80);
  u.mutable_remove()->add_addrs()->set_port(80);  // no ip
  absl::StatusOr<EndpointUpdate> got = ConvertUpdate(u);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(),
              AllOf(HasSubstr("remove: address #1"), HasSubstr("no ip")));
}

TEST(ConvertUpdateTest, NoEndpointsCarriesExists) {
  dst::Update u;
  u.mutable_no_endpoints()->set_exists(true);
  absl::StatusOr<EndpointUpdate> got = ConvertUpdate(u);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->kind, EndpointUpdate::Kind::kNoEndpoints);
  EXPECT_TRUE(got->exists);

  u.mutable_no_endpoints()->set_exists(false);
  got = ConvertUpdate(u);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->kind, EndpointUpdate::Kind::kNoEndpoints);
  EXPECT_FALSE(got->exists);
}

TEST(ConvertUpdateTest, EmptyUpdateIsInvalid) {
  absl::StatusOr<EndpointUpdate> got = ConvertUpdate(dst::Update());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(),
            "update has no add, remove or no_endpoints");
}

// Bytes written out by hand from the field numbers in wire-linkerd.md, so a
// drift in our .proto files shows up here and not against a real controller.
TEST(ConvertUpdateTest, HandEncodedWireBytes) {
  // Update{add{addrs{addr{ip{ipv4: 10.0.0.1} port: 80} weight: 3}}}
  const std::string add(
      "\x0a\x0f"              // Update.add = 1
      "\x0a\x0d"              // WeightedAddrSet.addrs = 1
      "\x0a\x09"              // WeightedAddr.addr = 1
      "\x0a\x05"              // TcpAddress.ip = 1
      "\x0d\x01\x00\x00\x0a"  // IPAddress.ipv4 = 1, fixed32 little-endian
      "\x10\x50"              // TcpAddress.port = 2: 80
      "\x18\x03",             // WeightedAddr.weight = 3: 3
      17);
  dst::Update u;
  ASSERT_TRUE(u.ParseFromString(add));
  absl::StatusOr<EndpointUpdate> got = ConvertUpdate(u);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->endpoints, ElementsAre(Ep("10.0.0.1:80", 3)));

  // Update{remove{addrs{ip{ipv6{first: 0 last: 1}} port: 443}}}
  const std::string remove(
      "\x12\x1b"                              // Update.remove = 2
      "\x0a\x19"                              // AddrSet.addrs = 1
      "\x0a\x14"                              // TcpAddress.ip = 1
      "\x12\x12"                              // IPAddress.ipv6 = 2
      "\x09\x00\x00\x00\x00\x00\x00\x00\x00"  // IPv6.first = 1, fixed64
      "\x11\x01\x00\x00\x00\x00\x00\x00\x00"  // IPv6.last = 2, fixed64
      "\x10\xbb\x03",                         // TcpAddress.port = 2: 443
      29);
  ASSERT_TRUE(u.ParseFromString(remove));
  got = ConvertUpdate(u);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->addresses, ElementsAre("[::1]:443"));

  // Update{no_endpoints{exists: true}}
  ASSERT_TRUE(u.ParseFromString(std::string("\x1a\x02\x08\x01", 4)));
  got = ConvertUpdate(u);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->kind, EndpointUpdate::Kind::kNoEndpoints);
  EXPECT_TRUE(got->exists);
}

}  // namespace
}  // namespace mesh::internal::linkerd

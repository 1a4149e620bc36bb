#include "src/model/address.h"

#include <arpa/inet.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<uint8_t> Bytes(const IpAddress& ip) {
  return std::vector<uint8_t>(ip.bytes().begin(), ip.bytes().end());
}

TEST(IpAddressTest, ParsesIpv4) {
  absl::StatusOr<IpAddress> ip = IpAddress::Parse("10.1.2.3");
  ASSERT_TRUE(ip.ok()) << ip.status();
  EXPECT_EQ(ip->family(), IpAddress::Family::kV4);
  EXPECT_FALSE(ip->is_v6());
  EXPECT_EQ(ip->bit_length(), 32);
  EXPECT_THAT(Bytes(*ip), ElementsAre(10, 1, 2, 3));
  EXPECT_EQ(ip->v4(), 0x0a010203u);
  EXPECT_EQ(ip->v6_high(), 0u);
  EXPECT_EQ(ip->ToString(), "10.1.2.3");
  EXPECT_EQ(ip->ToUriHost(), "10.1.2.3");
  EXPECT_EQ(IpAddress(), *IpAddress::Parse("0.0.0.0"));
  EXPECT_EQ(IpAddress::Parse("255.255.255.255")->v4(), 0xffffffffu);
}

// IPv4 text is read by mesh's own parser (no C-string copy): it must agree
// with inet_pton, byte for byte, on what it accepts and what it refuses.
TEST(IpAddressTest, Ipv4ParserAgreesWithInetPton) {
  std::vector<std::string> texts = {
      "0.0.0.0",  "255.255.255.255", "10.0.0.1",       "1.2.3.4",   "01.2.3.4",
      "1.2.3.04", "1.2.3.0",         "256.1.1.1",      "1.2.3",     "1.2.3.4.5",
      "1..2.3",   ".1.2.3",          "1.2.3.",         "1.2.3.4 ",  " 1.2.3.4",
      "1.2.3.-4", "1.2.3.+4",        "1000.1.1.1",     "0x1.2.3.4", "",
      "1",        "00.0.0.0",        "199.255.255.255"};
  uint32_t seed = 12345;
  for (int i = 0; i < 2000; ++i) {  // random short strings over digits and dots
    std::string t;
    seed = seed * 1103515245 + 12345;
    size_t n = 7 + (seed >> 16) % 10;
    for (size_t k = 0; k < n; ++k) {
      seed = seed * 1103515245 + 12345;
      t += "0123456789.."[(seed >> 16) % 12];
    }
    texts.push_back(t);
  }
  for (const std::string& t : texts) {
    uint8_t want[4] = {};
    const bool ok = inet_pton(AF_INET, t.c_str(), want) == 1;
    absl::StatusOr<IpAddress> got = IpAddress::Parse(t);
    ASSERT_EQ(got.ok(), ok) << "'" << t << "'";
    if (ok) {
      EXPECT_FALSE(got->is_v6());
      EXPECT_EQ(got->ToString(), t) << "inet_pton reads '" << t << "' as is";
      for (int k = 0; k < 4; ++k) EXPECT_EQ(got->bytes()[k], want[k]) << t;
    }
  }
}

TEST(IpAddressTest, ParsesIpv6InCanonicalText) {
  absl::StatusOr<IpAddress> ip = IpAddress::Parse("fd00:1:2::7");
  ASSERT_TRUE(ip.ok()) << ip.status();
  EXPECT_TRUE(ip->is_v6());
  EXPECT_EQ(ip->bit_length(), 128);
  EXPECT_THAT(Bytes(*ip),
              ElementsAre(0xfd, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7));
  EXPECT_EQ(ip->v6_high(), 0xfd00000100020000u);
  EXPECT_EQ(ip->v6_low(), 7u);
  EXPECT_EQ(ip->v4(), 0u);
  EXPECT_EQ(ip->ToUriHost(), "[fd00:1:2::7]");
  // inet_ntop's canonical text: lower case, leading zeros dropped, the
  // longest run of zero groups (the first of equals) as "::", a lone zero
  // group kept.
  for (const auto& [text, canonical] :
       std::vector<std::pair<const char*, const char*>>{
           {"FD00:0001:0002:0000:0000:0000:0000:0007", "fd00:1:2::7"},
           {"0:0:0:0:0:0:0:1", "::1"},
           {"::", "::"},
           {"1:0:0:2:0:0:0:3", "1:0:0:2::3"},
           {"1:0:0:2:0:0:3:4", "1::2:0:0:3:4"},
           {"1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"},
           {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}}) {
    absl::StatusOr<IpAddress> parsed = IpAddress::Parse(text);
    ASSERT_TRUE(parsed.ok()) << text;
    EXPECT_EQ(parsed->ToString(), canonical) << text;
  }
}

TEST(IpAddressTest, Ipv4MappedStaysIpv6) {
  absl::StatusOr<IpAddress> mapped = IpAddress::Parse("::ffff:10.0.0.1");
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_TRUE(mapped->is_v6());
  EXPECT_THAT(Bytes(*mapped), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
                                          0xff, 10, 0, 0, 1));
  EXPECT_EQ(mapped->ToString(), "::ffff:10.0.0.1");
  EXPECT_EQ(IpAddress::Parse("::FFFF:0a00:0001")->ToString(),
            "::ffff:10.0.0.1");
  EXPECT_EQ(IpAddress::FromV6(0, 0x0000ffff0a000001).ToString(),
            "::ffff:10.0.0.1");
  const IpAddress v4 = *IpAddress::Parse("10.0.0.1");
  EXPECT_NE(*mapped, v4);
  EXPECT_FALSE(mapped->InNetwork(v4, 32));
  EXPECT_FALSE(v4.InNetwork(*mapped, 0));
}

TEST(IpAddressTest, RejectsBadTextWithClearErrors) {
  for (absl::string_view bad :
       {"", "10.0.0", "10.0.0.1.2", "256.0.0.1", "010.0.0.1", "10.0.0.1 ",
        " 10.0.0.1", "10.0.0.1/8", "0x0a.0.0.1", "books", "[::1]", "::1::2",
        "1:2:3:4:5:6:7:8:9", "fe80::1%eth0", "::g", "10.0.0.1:80",
        "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.2555"}) {
    absl::StatusOr<IpAddress> ip = IpAddress::Parse(bad);
    EXPECT_EQ(ip.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(ip.status().message()),
                HasSubstr("is not an IP address"))
        << bad;
  }
  EXPECT_EQ(IpAddress::Parse("books").status().message(),
            "'books' is not an IP address");
  // A NUL cannot cut the text short, and shows in the message escaped.
  absl::StatusOr<IpAddress> nul =
      IpAddress::Parse(std::string("10.0.0.1\0x", 10));
  EXPECT_FALSE(nul.ok());
  EXPECT_THAT(std::string(nul.status().message()), HasSubstr("\\x00"));
  // The longest IPv6 text parses; one byte more cannot.
  EXPECT_TRUE(
      IpAddress::Parse("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255").ok());
  EXPECT_FALSE(IpAddress::Parse(std::string(200, '1')).ok());
}

TEST(IpAddressTest, RoundTripsTextAndWireIntegers) {
  for (const char* text :
       {"0.0.0.0", "10.1.2.3", "255.255.255.255", "::", "::1", "fd00:1:2::7",
        "::ffff:10.0.0.1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        "2001:db8::ff00:42:8329"}) {
    absl::StatusOr<IpAddress> ip = IpAddress::Parse(text);
    ASSERT_TRUE(ip.ok()) << text;
    EXPECT_EQ(ip->ToString(), text);
    const IpAddress from_wire =
        ip->is_v6() ? IpAddress::FromV6(ip->v6_high(), ip->v6_low())
                    : IpAddress::FromV4(ip->v4());
    EXPECT_EQ(from_wire, *ip) << text;
    EXPECT_EQ(from_wire.ToString(), text);
  }
  EXPECT_EQ(IpAddress::FromV4(0x7f000001).ToString(), "127.0.0.1");
  EXPECT_EQ(IpAddress::FromV6(0x20010db800000000, 1).ToString(), "2001:db8::1");
}

TEST(IpAddressTest, MasksAndNetworks) {
  const IpAddress ip = *IpAddress::Parse("10.1.2.3");
  EXPECT_EQ(ip.Masked(8).ToString(), "10.0.0.0");
  EXPECT_EQ(ip.Masked(23).ToString(), "10.1.2.0");
  EXPECT_EQ(ip.Masked(31).ToString(), "10.1.2.2");
  EXPECT_EQ(ip.Masked(32), ip);
  EXPECT_EQ(ip.Masked(99), ip);  // clamped
  EXPECT_EQ(ip.Masked(0).ToString(), "0.0.0.0");
  EXPECT_EQ(ip.Masked(-1).ToString(), "0.0.0.0");
  const IpAddress v6 = *IpAddress::Parse("fd00:1:2::7");
  EXPECT_EQ(v6.Masked(8).ToString(), "fd00::");
  EXPECT_EQ(v6.Masked(47).ToString(), "fd00:1:2::");
  EXPECT_EQ(v6.Masked(128), v6);
  EXPECT_TRUE(ip.InNetwork(*IpAddress::Parse("10.0.0.0"), 8));
  EXPECT_TRUE(ip.InNetwork(*IpAddress::Parse("10.9.9.9"), 8));
  EXPECT_FALSE(ip.InNetwork(*IpAddress::Parse("10.1.4.0"), 23));
  EXPECT_TRUE(ip.InNetwork(*IpAddress::Parse("0.0.0.0"), 0));
  EXPECT_FALSE(ip.InNetwork(*IpAddress::Parse("::"), 0));  // other family
  EXPECT_TRUE(v6.InNetwork(*IpAddress::Parse("fd00:1:3::"), 47));
  EXPECT_FALSE(v6.InNetwork(*IpAddress::Parse("fd00:1:3::"), 48));
}

TEST(IpAddressTest, Compares) {
  const IpAddress a = *IpAddress::Parse("10.0.0.1");
  const IpAddress b = *IpAddress::Parse("10.0.0.2");
  const IpAddress six = *IpAddress::Parse("::1");
  EXPECT_EQ(a, *IpAddress::Parse("10.0.0.1"));
  EXPECT_NE(a, b);
  EXPECT_TRUE(a < b);
  EXPECT_FALSE(b < a);
  EXPECT_FALSE(a < a);
  EXPECT_TRUE(b < six);  // IPv4 first
  EXPECT_FALSE(six < a);
  // 0.0.0.0 and :: have the same (zero) bytes, not the same family.
  EXPECT_NE(IpAddress(), *IpAddress::Parse("::"));
}

TEST(AddressTest, ParsesIpv4AndIpv6) {
  absl::StatusOr<SocketAddress> v4 = SocketAddress::Parse("10.0.0.1:8080");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_FALSE(v4->ip().is_v6());
  EXPECT_EQ(v4->ip().ToString(), "10.0.0.1");
  EXPECT_EQ(v4->port(), 8080);
  EXPECT_EQ(v4->ToString(), "10.0.0.1:8080");
  EXPECT_EQ(GrpcTargetFor(*v4), "ipv4:10.0.0.1:8080");

  absl::StatusOr<SocketAddress> v6 = SocketAddress::Parse("[::1]:443");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_TRUE(v6->ip().is_v6());
  EXPECT_EQ(v6->port(), 443);
  EXPECT_EQ(v6->ToString(), "[::1]:443");
  EXPECT_EQ(GrpcTargetFor(*v6), "ipv6:[::1]:443");

  absl::StatusOr<SocketAddress> mapped =
      SocketAddress::Parse("[::ffff:10.0.0.1]:80");
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_TRUE(mapped->ip().is_v6());
  EXPECT_EQ(GrpcTargetFor(*mapped), "ipv6:[::ffff:10.0.0.1]:80");

  EXPECT_EQ(SocketAddress::Parse("1.2.3.4:1")->port(), 1);
  EXPECT_EQ(SocketAddress::Parse("1.2.3.4:65535")->port(), 65535);
}

TEST(AddressTest, PortsAreDecimalDigitsOnly) {
  // Leading zeros are allowed: the port is the number.
  EXPECT_EQ(SocketAddress::Parse("1.2.3.4:00080")->port(), 80);
  EXPECT_EQ(SocketAddress::Parse("[::1]:000000443")->port(), 443);
  for (const char* bad :
       {"1.2.3.4:0000", "1.2.3.4:65536", "1.2.3.4:99999", "1.2.3.4:123456",
        "1.2.3.4:-80", "1.2.3.4:+80", "1.2.3.4: 80", "1.2.3.4:80 ",
        "1.2.3.4:8o", "1.2.3.4:4294967377", "1.2.3.4:"}) {
    EXPECT_THAT(std::string(SocketAddress::Parse(bad).status().message()),
                HasSubstr("must be 1..65535"))
        << bad;
  }
}

TEST(AddressTest, ToStringIsCanonical) {
  EXPECT_EQ(SocketAddress::Parse("[FD00:0:0::0007]:8443")->ToString(),
            "[fd00::7]:8443");
  EXPECT_EQ(SocketAddress::Parse("[::FFFF:a00:1]:80")->ToString(),
            "[::ffff:10.0.0.1]:80");
  for (const char* canonical :
       {"10.0.0.1:80", "[::1]:443", "[fd00:1:2::7]:8443",
        "[::ffff:10.0.0.1]:80", "0.0.0.0:1", "255.255.255.255:65535"}) {
    EXPECT_EQ(SocketAddress::Parse(canonical)->ToString(), canonical);
  }
  const SocketAddress built(IpAddress::FromV4(0x0a000001), 8080);
  EXPECT_EQ(built.ToString(), "10.0.0.1:8080");
  EXPECT_EQ(built, *SocketAddress::Parse("10.0.0.1:8080"));
  EXPECT_NE(built, *SocketAddress::Parse("10.0.0.1:8081"));
}

TEST(AddressTest, RejectsBadAddressesWithMessages) {
  for (const char* bad : {"",
                          "10.0.0.1",
                          "10.0.0.1:0",
                          "10.0.0.1:70000",
                          "10.0.0.1:-1",
                          "10.0.0.1:http",
                          "books:80",
                          "[::1:80",
                          "[::1]80",
                          "300.0.0.1:80",
                          "[zz]:80",
                          "[::1]",
                          "[::1]:",
                          "10.0.0.1:",
                          "[10.0.0.1]:80",
                          "::1:80",
                          "[]:80",
                          ":80",
                          "010.0.0.1:80",
                          "[fe80::1%eth0]:80"}) {
    absl::StatusOr<SocketAddress> a = SocketAddress::Parse(bad);
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(SocketAddress::Parse("10.0.0.1:70000").status().message(),
            "port of '10.0.0.1:70000' must be 1..65535");
  EXPECT_EQ(SocketAddress::Parse("10.0.0.1").status().message(),
            "address '10.0.0.1' has no port");
  EXPECT_EQ(SocketAddress::Parse("[::1]80").status().message(),
            "address '[::1]80' must be [ipv6]:port or ipv4:port");
  EXPECT_EQ(SocketAddress::Parse("books:80").status().message(),
            "address 'books:80' is not an IP address (host names must be "
            "resolved by a discovery source)");
  // IPv6 only in brackets, IPv4 only without.
  EXPECT_THAT(
      std::string(SocketAddress::Parse("[10.0.0.1]:80").status().message()),
      HasSubstr("is not an IP address"));
  EXPECT_THAT(std::string(SocketAddress::Parse("::1:80").status().message()),
              HasSubstr("is not an IP address"));
  // A NUL in the host does not cut it short.
  EXPECT_FALSE(SocketAddress::Parse(std::string("10.0.0.1\0x:80", 13)).ok());
}

TEST(AddressTest, ValidatesDestinations) {
  EXPECT_TRUE(ValidateDestination("books.default.svc.cluster.local:7001").ok());
  EXPECT_TRUE(ValidateDestination("10.0.0.1:80").ok());
  EXPECT_EQ(ValidateDestination("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateDestination("books").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateDestination(":80").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateDestination("books:0").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateDestination("books:70000").code(),
            absl::StatusCode::kInvalidArgument);
  // Names end up in logs, labels and protobuf strings.
  EXPECT_THAT(std::string(ValidateDestination("bo oks:80").message()),
              ::testing::HasSubstr("space or control character"));
  EXPECT_THAT(
      std::string(ValidateDestination(std::string("b\0:80", 5)).message()),
      ::testing::HasSubstr("'b\\x00:80'"));
  EXPECT_THAT(std::string(ValidateDestination("b\xff:80").message()),
              ::testing::HasSubstr("not valid UTF-8"));
  EXPECT_TRUE(ValidateDestination("b\xc3\xbc.local:80").ok());
}

TEST(ParseTargetTest, ABareNameAndPortHasNoScheme) {
  absl::StatusOr<Target> t = ParseTarget("books.default.svc:7001");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->scheme, "");
  EXPECT_EQ(t->name, "books.default.svc:7001");
}

TEST(ParseTargetTest, AUriNamesItsSchemeAndName) {
  absl::StatusOr<Target> t = ParseTarget("xds:///books.default:7001");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->scheme, "xds");
  EXPECT_EQ(t->name, "books.default:7001");
  t = ParseTarget("linkerd+v2.x-y:///a:1");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->scheme, "linkerd+v2.x-y");
  EXPECT_EQ(t->name, "a:1");
}

TEST(ParseTargetTest, TheSchemeIsLowerCasedAndTheNameKept) {
  absl::StatusOr<Target> t = ParseTarget("XdS:///Books.Default:7001");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->scheme, "xds");
  EXPECT_EQ(t->name, "Books.Default:7001");
}

TEST(ParseTargetTest, AnAuthorityIsKeptApartFromTheName) {
  absl::StatusOr<Target> t = ParseTarget("dns://10.0.0.2:53/db.internal:5432");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->scheme, "dns");
  EXPECT_EQ(t->authority, "10.0.0.2:53");
  EXPECT_EQ(t->name, "db.internal:5432");
  t = ParseTarget("dns://[::1]:5353/a:1");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->authority, "[::1]:5353");
  t = ParseTarget("xds:///a:1");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->authority, "");
}

TEST(SourceNameTest, AnAuthorityTravelsToTheSourceAndBack) {
  Target t = *ParseTarget("dns://10.0.0.2:53/db.internal:5432");
  const std::string source_name = SourceName(t);
  EXPECT_EQ(source_name, "//10.0.0.2:53/db.internal:5432");
  absl::string_view authority, name;
  EXPECT_TRUE(SplitSourceName(source_name, &authority, &name));
  EXPECT_EQ(authority, "10.0.0.2:53");
  EXPECT_EQ(name, "db.internal:5432");
  const std::string bare = SourceName(*ParseTarget("dns:///db.internal:5432"));
  EXPECT_EQ(bare, "db.internal:5432");
  EXPECT_FALSE(SplitSourceName(bare, &authority, &name));
  EXPECT_EQ(authority, "");
  EXPECT_EQ(name, "db.internal:5432");
}

TEST(JoinHostPortTest, Ipv6LiteralsAreBracketed) {
  EXPECT_EQ(JoinHostPort("10.0.0.1", 80), "10.0.0.1:80");
  EXPECT_EQ(JoinHostPort("::1", 80), "[::1]:80");
  EXPECT_EQ(JoinHostPort("db.example", 5432), "db.example:5432");
}

TEST(ParseTargetTest, ABadAuthorityIsRefused) {
  for (std::string bad :
       {std::string("dns://a:1"), std::string("dns://a b/x:1"),
        std::string("dns://a\x01/x:1"),
        absl::StrCat("dns://", std::string(256, 'a'), "/x:1")}) {
    absl::StatusOr<Target> t = ParseTarget(bad);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_THAT(std::string(ParseTarget("dns://a:1").status().message()),
              HasSubstr("no '/' before its name"));
}

TEST(ParseTargetTest, AMalformedSchemeIsRefused) {
  for (const char* bad :
       {"1x:///a:1", ":///a:1", "x_y:///a:1", "x y:///a:1", "-x:///a:1"}) {
    absl::StatusOr<Target> t = ParseTarget(bad);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(t.status().message()),
                HasSubstr("malformed scheme"))
        << bad;
  }
}

TEST(ParseTargetTest, ANameThatIsNotNameAndPortIsRefused) {
  for (const char* bad :
       {"xds:///nope", "xds:///", "xds:///a:0", "xds:///:80", "xds:///a b:1"}) {
    absl::StatusOr<Target> t = ParseTarget(bad);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(t.status().message()),
                HasSubstr(absl::StrCat("target '", bad, "'")))
        << bad;
  }
  EXPECT_THAT(std::string(ParseTarget("xds:///nope").status().message()),
              HasSubstr("name:port"));
  for (const char* bad : {"", "nope", "nope:", "nope:http"}) {
    EXPECT_EQ(ParseTarget(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(ValidateServerAddressTest, EveryFormGrpcTakesPasses) {
  for (const char* good :
       {"127.0.0.1:8086", "localhost:8086", "istiod.istio-system.svc:15010",
        "trafficdirector.googleapis.com:443", "xds.example.com",
        "xds.example.com.:443", "[::1]:18000", "[fd00::7]", "dns:///cp:1",
        "dns://10.0.0.2:53/cp.ns.svc:15010", "dns://[::1]:53/cp:1",
        "ipv4:127.0.0.1:1,127.0.0.2:65535", "ipv6:[::1]:443",
        "unix:///etc/istio/proxy/XDS", "unix:relative/sock",
        "unix-abstract:mesh", "my_svc.ns:80"}) {
    EXPECT_TRUE(ValidateServerAddress(good).ok())
        << good << ": " << ValidateServerAddress(good);
  }
}

TEST(ValidateServerAddressTest, APortGrpcWouldWrapIsRefusedInEveryForm) {
  // gRPC takes 99999 as 99999 - 65536 = 34463 and connects there.
  for (const char* bad : {"127.0.0.1:99999", "cp:99999", "dns:///cp:99999",
                          "[::1]:99999", "ipv4:127.0.0.1:99999",
                          "ipv6:[::1]:65536", "cp:0", "cp:-1", "cp:http"}) {
    absl::Status s = ValidateServerAddress(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("1..65535")) << bad;
  }
}

TEST(ValidateServerAddressTest, OtherBadAddressesAreNamedAndQuotedShort) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "is empty"},
      {"cp :80", "space or control"},
      {"::1:80", "without brackets"},
      {"[127.0.0.1]:80", "not IPv6"},
      {"[::1]x", "text after ']'"},
      {"bad..name:80", "neither an IP address nor a DNS name"},
      {"http://cp:80", "scheme mesh does not connect to"},
      {"dns://cp:53/x:1", "not IP:port"},
      {"unix:", "no path"},
      {"ipv4:[::1]:80", "other family"},
      {absl::StrCat(std::string(64, 'a'), ".x:80"), "labels of 1..63"},
  };
  for (const auto& [bad, why] : cases) {
    absl::Status s = ValidateServerAddress(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr(why)) << bad;
  }
  // A 900 KB host: refused, quoted in at most 256 bytes.
  const std::string huge = absl::StrCat(std::string(900'000, 'h'), ":80");
  absl::Status s = ValidateServerAddress(huge);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(s.message().size(), 600u);
  EXPECT_THAT(std::string(s.message()), HasSubstr("(900003 bytes)"));
}

}  // namespace
}  // namespace mesh::internal

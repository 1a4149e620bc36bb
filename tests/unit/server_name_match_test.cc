// The server-name check of EndpointTls::server_names (gRFC A29's SAN
// matching): each kind of matcher, wildcard DNS names, SAN types, case,
// and the refusal of matchers that cannot work.
#include "src/tls/server_name_match.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mesh::internal {
namespace {

using Kind = ServerNameMatcher::Kind;
using SanType = ServerNameMatcher::SanType;
using ::testing::HasSubstr;

ServerNameMatcher M(Kind kind, std::string value, bool ignore_case = false,
                    SanType type = SanType::kAny) {
  ServerNameMatcher m;
  m.kind = kind;
  m.value = std::move(value);
  m.ignore_case = ignore_case;
  m.san_type = type;
  return m;
}

PresentedNames Dns(std::vector<std::string> names) {
  PresentedNames p;
  p.dns = std::move(names);
  return p;
}

PresentedNames Uri(std::vector<std::string> names) {
  PresentedNames p;
  p.uri = std::move(names);
  return p;
}

TEST(ServerNameMatch, NoMatchersAcceptsAnyCertificate) {
  EXPECT_TRUE(MatchesServerNames({}, PresentedNames{}));
  EXPECT_TRUE(MatchesServerNames({}, Dns({"a.b"})));
}

TEST(ServerNameMatch, EachKindOfMatcher) {
  const PresentedNames spiffe = Uri({"spiffe://cluster.local/ns/a/sa/web"});
  EXPECT_TRUE(MatchesServerNames(
      {M(Kind::kExact, "spiffe://cluster.local/ns/a/sa/web")}, spiffe));
  EXPECT_FALSE(MatchesServerNames(
      {M(Kind::kExact, "spiffe://cluster.local/ns/a/sa/we")}, spiffe));
  EXPECT_TRUE(MatchesServerNames(
      {M(Kind::kPrefix, "spiffe://cluster.local/ns/a/")}, spiffe));
  EXPECT_FALSE(MatchesServerNames(
      {M(Kind::kPrefix, "spiffe://cluster.local/ns/b/")}, spiffe));
  EXPECT_TRUE(MatchesServerNames({M(Kind::kSuffix, "/sa/web")}, spiffe));
  EXPECT_FALSE(MatchesServerNames({M(Kind::kSuffix, "/sa/db")}, spiffe));
  EXPECT_TRUE(MatchesServerNames({M(Kind::kContains, "/ns/a/")}, spiffe));
  EXPECT_FALSE(MatchesServerNames({M(Kind::kContains, "/ns/b/")}, spiffe));
  EXPECT_TRUE(MatchesServerNames(
      {M(Kind::kRegex, "spiffe://cluster\\.local/ns/[a-c]/sa/.*")}, spiffe));
  // A regex matches the whole name, not a part of it.
  EXPECT_FALSE(MatchesServerNames({M(Kind::kRegex, "ns/a")}, spiffe));
}

TEST(ServerNameMatch, AnyMatcherAgainstAnyName) {
  PresentedNames names = Dns({"other.svc", "web.a.svc"});
  EXPECT_TRUE(MatchesServerNames(
      {M(Kind::kExact, "nope"), M(Kind::kExact, "web.a.svc")}, names));
  EXPECT_FALSE(MatchesServerNames(
      {M(Kind::kExact, "nope"), M(Kind::kExact, "web.b.svc")}, names));
}

TEST(ServerNameMatch, IgnoreCaseIsAsciiCaseFolding) {
  const PresentedNames names = Dns({"Web.A.Svc"});
  EXPECT_FALSE(MatchesServerNames({M(Kind::kExact, "web.a.svc")}, names));
  EXPECT_TRUE(MatchesServerNames({M(Kind::kExact, "web.a.svc", true)}, names));
  EXPECT_TRUE(MatchesServerNames({M(Kind::kPrefix, "WEB.", true)}, names));
  EXPECT_TRUE(MatchesServerNames({M(Kind::kSuffix, ".svc", true)}, names));
  EXPECT_TRUE(MatchesServerNames({M(Kind::kContains, ".a.", true)}, names));
  EXPECT_FALSE(MatchesServerNames({M(Kind::kContains, ".a.")}, names));
}

TEST(ServerNameMatch, ExactMatchAcceptsAWildcardDnsNameForOneLabel) {
  const PresentedNames wildcard = Dns({"*.web.a.svc"});
  EXPECT_TRUE(
      MatchesServerNames({M(Kind::kExact, "pod1.web.a.svc")}, wildcard));
  // Not two labels, not none, not the bare domain.
  EXPECT_FALSE(
      MatchesServerNames({M(Kind::kExact, "x.pod1.web.a.svc")}, wildcard));
  EXPECT_FALSE(MatchesServerNames({M(Kind::kExact, ".web.a.svc")}, wildcard));
  EXPECT_FALSE(MatchesServerNames({M(Kind::kExact, "web.a.svc")}, wildcard));
  EXPECT_TRUE(
      MatchesServerNames({M(Kind::kExact, "POD1.WEB.A.SVC", true)}, wildcard));
  // Only DNS names are wildcards; a URI with '*' is a plain string.
  EXPECT_FALSE(MatchesServerNames({M(Kind::kExact, "pod1.web.a.svc")},
                                  Uri({"*.web.a.svc"})));
}

TEST(ServerNameMatch, SanTypeRestrictsWhichNamesAreLookedAt) {
  PresentedNames names;
  names.dns = {"web.a.svc"};
  names.uri = {"spiffe://td/web"};
  names.email = {"ops@example.com"};
  names.ip = {"10.0.0.1"};
  EXPECT_TRUE(MatchesServerNames(
      {M(Kind::kExact, "web.a.svc", false, SanType::kDns)}, names));
  EXPECT_FALSE(MatchesServerNames(
      {M(Kind::kExact, "web.a.svc", false, SanType::kUri)}, names));
  EXPECT_TRUE(MatchesServerNames(
      {M(Kind::kExact, "spiffe://td/web", false, SanType::kUri)}, names));
  EXPECT_TRUE(MatchesServerNames(
      {M(Kind::kExact, "ops@example.com", false, SanType::kEmail)}, names));
  EXPECT_TRUE(MatchesServerNames(
      {M(Kind::kExact, "10.0.0.1", false, SanType::kIp)}, names));
  EXPECT_FALSE(MatchesServerNames(
      {M(Kind::kExact, "10.0.0.1", false, SanType::kDns)}, names));
  // kAny looks at all four.
  EXPECT_TRUE(MatchesServerNames({M(Kind::kExact, "10.0.0.1")}, names));
  EXPECT_TRUE(MatchesServerNames({M(Kind::kExact, "ops@example.com")}, names));
}

TEST(ServerNameMatch, EmptyNamesNeverMatch) {
  EXPECT_FALSE(MatchesServerNames({M(Kind::kContains, "x")}, Dns({""})));
  EXPECT_FALSE(MatchesServerNames({M(Kind::kRegex, ".*")}, Dns({""})));
  EXPECT_FALSE(MatchesServerNames({M(Kind::kPrefix, "a")}, PresentedNames{}));
}

TEST(ServerNameMatch, MatchersThatCannotWorkAreRefused) {
  EXPECT_TRUE(ValidateServerNameMatcher(M(Kind::kExact, "a")).ok());
  EXPECT_TRUE(ValidateServerNameMatcher(M(Kind::kRegex, "a.*")).ok());
  absl::Status empty = ValidateServerNameMatcher(M(Kind::kSuffix, ""));
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.message(), HasSubstr("suffix matcher with an empty value"));
  absl::Status bad = ValidateServerNameMatcher(M(Kind::kRegex, "a("));
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("invalid RE2 'a('"));
  EXPECT_THAT(ValidateServerNameMatcher(M(Kind::kRegex, "a", true)).message(),
              HasSubstr("ignore_case does not apply to a regex"));
  // A pattern whose program exceeds the bound (1 MB) is refused, its
  // quote cut after 256 bytes, its size given.
  std::string huge;
  for (int i = 0; i < 40; ++i) huge += "\\pL{1000}";
  ASSERT_EQ(huge.size(), 360u);
  absl::Status big = ValidateServerNameMatcher(M(Kind::kRegex, huge));
  EXPECT_EQ(big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(big.message(), HasSubstr("pattern too large"));
  EXPECT_THAT(big.message(),
              HasSubstr(huge.substr(0, 256) + "... (360 bytes)'"));
  // A regex that does not compile matches nothing.
  EXPECT_FALSE(MatchesServerNames({M(Kind::kRegex, "a(")}, Dns({"a("})));
}

TEST(ServerNameMatch, Descriptions) {
  EXPECT_EQ(DescribeMatchers({}), "any name");
  EXPECT_EQ(
      DescribeMatchers({M(Kind::kExact, "a"),
                        M(Kind::kPrefix, "spiffe://x/", true, SanType::kUri)}),
      "exact 'a' or URI prefix 'spiffe://x/' (any case)");
  PresentedNames names;
  names.dns = {"a"};
  names.ip = {"10.0.0.1"};
  EXPECT_EQ(DescribePresented(names), "DNS:a, IP:10.0.0.1");
  EXPECT_EQ(DescribePresented(PresentedNames{}),
            "no subject alternative names");
}

}  // namespace
}  // namespace mesh::internal

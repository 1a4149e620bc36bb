// Route matching: order, the match tree, regex anchoring and the query, and
// what is dropped.
#include "src/route/route_table.h"

#include <re2/re2.h>

#include <cstdint>
#include <random>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Headers = std::vector<std::pair<std::string, std::string>>;

Route Named(std::string name, RequestMatch condition) {
  Route r;
  r.name = std::move(name);
  r.condition = std::move(condition);
  return r;
}

std::string RouteFor(const RouteTable& t, absl::string_view path,
                     absl::string_view method = "POST",
                     const Headers* headers = nullptr) {
  const CompiledRoute& r = t.Match({method, path, headers});
  return r.is_default ? "(default)" : r.name;
}

TEST(RouteTableTest, FirstMatchWinsThenTheDefault) {
  ServiceConfig c;
  c.routes = {Named("GetBook", RequestMatch::Path("^/books.Library/GetBook$")),
              Named("AnyBook", RequestMatch::Path("/books\\.Library/.*")),
              Named("Never", RequestMatch::Path("/books.Library/GetBook"))};
  c.routes[0].timeout = absl::Milliseconds(300);
  c.routes[0].is_retryable = true;
  auto t = RouteTable::Build(c, nullptr);
  EXPECT_EQ(RouteFor(*t, "/books.Library/GetBook"), "GetBook");
  EXPECT_EQ(RouteFor(*t, "/books.Library/ListBooks"), "AnyBook");
  EXPECT_EQ(RouteFor(*t, "/authors.Registry/Get"), "(default)");
  const CompiledRoute& get = t->Match({"POST", "/books.Library/GetBook"});
  EXPECT_EQ(get.timeout, absl::Milliseconds(300));
  EXPECT_TRUE(get.is_retryable);
  const CompiledRoute& fallback = t->Match({"POST", "/x.Y/Z"});
  EXPECT_EQ(fallback.timeout, absl::InfiniteDuration());
  EXPECT_FALSE(fallback.is_retryable);
}

TEST(RouteTableTest, PathRegexIsAFullMatchWithoutTheQuery) {
  ServiceConfig c;
  c.routes = {Named("Books", RequestMatch::Path("/books/[0-9]+"))};
  auto t = RouteTable::Build(c, nullptr);
  EXPECT_EQ(RouteFor(*t, "/books/42"), "Books");
  EXPECT_EQ(RouteFor(*t, "/books/42?format=json"), "Books");   // query ignored
  EXPECT_EQ(RouteFor(*t, "/books/42/chapters"), "(default)");  // anchored end
  EXPECT_EQ(RouteFor(*t, "/v1/books/42"), "(default)");        // anchored start
  // An alternation is anchored as a whole, not just its ends.
  c.routes = {Named("Alt", RequestMatch::Path("/a|/b"))};
  t = RouteTable::Build(c, nullptr);
  EXPECT_EQ(RouteFor(*t, "/a"), "Alt");
  EXPECT_EQ(RouteFor(*t, "/b"), "Alt");
  EXPECT_EQ(RouteFor(*t, "/ab"), "(default)");
}

TEST(RouteTableTest, QueryParamsMatchDecodedValuesOfAnyOccurrence) {
  HeaderMatch exact{"format", HeaderMatch::Kind::kExact, "a b/c"};
  HeaderMatch regex{"page", HeaderMatch::Kind::kRegex, "[0-9]+"};
  HeaderMatch present{"debug", HeaderMatch::Kind::kPresent, ""};
  ServiceConfig c;
  c.routes = {Named("Exact", RequestMatch::QueryParam(exact)),
              Named("Regex", RequestMatch::QueryParam(regex)),
              Named("Present", RequestMatch::QueryParam(present))};
  auto t = RouteTable::Build(c, nullptr);
  EXPECT_EQ(RouteFor(*t, "/b?format=a+b%2Fc"), "Exact");  // decoded
  EXPECT_EQ(RouteFor(*t, "/b?format=a%20b%2fc"), "Exact");
  EXPECT_EQ(RouteFor(*t, "/b?x=1&format=no&format=a+b/c"), "Exact");
  EXPECT_EQ(RouteFor(*t, "/b?format=a+b%2Fcd"), "(default)");  // whole value
  EXPECT_EQ(RouteFor(*t, "/b?forma=a+b%2Fc"), "(default)");    // whole name
  EXPECT_EQ(RouteFor(*t, "/b?page=12"), "Regex");
  EXPECT_EQ(RouteFor(*t, "/b?page=12a"), "(default)");  // a full match
  EXPECT_EQ(RouteFor(*t, "/b?page"), "(default)");      // no value: ""
  EXPECT_EQ(RouteFor(*t, "/b?debug"), "Present");
  EXPECT_EQ(RouteFor(*t, "/b?de%62ug=1"), "Present");  // a decoded name
  EXPECT_EQ(RouteFor(*t, "/b"), "(default)");
  EXPECT_EQ(RouteFor(*t, "/b?"), "(default)");
  EXPECT_EQ(RouteFor(*t, "/b?%zz=1&%4"), "(default)");  // bad escapes kept
  // The path is matched without the query, and the query only by params.
  c.routes = {
      Named("Both", RequestMatch::All({RequestMatch::PathExact("/b"),
                                       RequestMatch::QueryParam(exact)}))};
  t = RouteTable::Build(c, nullptr);
  EXPECT_EQ(RouteFor(*t, "/b?format=a+b/c"), "Both");
  EXPECT_EQ(RouteFor(*t, "/bb?format=a+b/c"), "(default)");
  // A regex that does not compile drops the route, naming the parameter.
  std::vector<std::string> dropped;
  c.routes = {Named("Bad", RequestMatch::QueryParam(HeaderMatch{
                               "page", HeaderMatch::Kind::kRegex, "(("}))};
  t = RouteTable::Build(c, &dropped);
  EXPECT_EQ(t->size(), 0u);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_THAT(dropped[0], HasSubstr("'(('"));
}

TEST(RouteTableTest, TreeSemanticsAllAnyNotMethodHeaders) {
  ServiceConfig c;
  HeaderMatch canary{"x-canary", HeaderMatch::Kind::kExact, "yes"};
  HeaderMatch tenant{"x-tenant", HeaderMatch::Kind::kPrefix, "acme-"};
  HeaderMatch trace{"x-trace", HeaderMatch::Kind::kPresent, ""};
  HeaderMatch version{"x-version", HeaderMatch::Kind::kRegex, "v[0-9]+"};
  c.routes = {
      Named("Canary", RequestMatch::All({RequestMatch::Method("GET"),
                                         RequestMatch::Header(canary)})),
      Named("Tenant", RequestMatch::Header(tenant)),
      Named("Traced", RequestMatch::All({RequestMatch::Header(trace),
                                         RequestMatch::Header(version)})),
      Named("NotPost", RequestMatch::Not(RequestMatch::Method("POST"))),
      Named("EmptyAny", RequestMatch::Any({})),
      Named("EmptyAll", RequestMatch::All({}))};
  auto t = RouteTable::Build(c, nullptr);
  Headers canary_h = {{"x-canary", "yes"}};
  Headers tenant_h = {{"x-tenant", "acme-eu"}};
  Headers traced_h = {{"x-trace", ""}, {"x-version", "v12"}};
  Headers bad_version = {{"x-trace", ""}, {"x-version", "v12beta"}};
  EXPECT_EQ(RouteFor(*t, "/p", "GET", &canary_h), "Canary");
  EXPECT_EQ(RouteFor(*t, "/p", "POST", &canary_h), "EmptyAll");  // not GET
  EXPECT_EQ(RouteFor(*t, "/p", "POST", &tenant_h), "Tenant");
  EXPECT_EQ(RouteFor(*t, "/p", "POST", &traced_h), "Traced");
  EXPECT_EQ(RouteFor(*t, "/p", "POST", &bad_version), "EmptyAll");
  EXPECT_EQ(RouteFor(*t, "/p", "DELETE"), "NotPost");
  // any [] never matches; all [] always does.
  EXPECT_EQ(RouteFor(*t, "/p", "POST"), "EmptyAll");
}

TEST(RouteTableTest, InvalidConditionsAreDroppedAndNamed) {
  ServiceConfig c;
  RequestMatch bad_not;
  bad_not.kind = RequestMatch::Kind::kNot;  // no child
  HeaderMatch bad_header{"x-v", HeaderMatch::Kind::kRegex, "v("};
  c.routes = {
      Named("Broken", RequestMatch::Path("(unclosed")),
      Named("NoChild", bad_not),
      Named("BadHeader", RequestMatch::Header(bad_header)),
      Named("Huge", RequestMatch::Path("((a{1,1000}){1,1000}){1,1000}")),
      Named("Good", RequestMatch::Path("/ok"))};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  EXPECT_EQ(t->size(), 1u);
  EXPECT_EQ(RouteFor(*t, "/ok"), "Good");
  ASSERT_EQ(dropped.size(), 4u);
  EXPECT_THAT(dropped[0],
              HasSubstr("route 0 'Broken' dropped: regex '(unclosed'"));
  EXPECT_THAT(dropped[1], HasSubstr("'NoChild'"));
  EXPECT_THAT(dropped[2], HasSubstr("'BadHeader'"));
  EXPECT_THAT(dropped[3], HasSubstr("'Huge'"));
}

TEST(RouteTableTest, AttemptLimitsNotAboveZeroAreLeftOutNamed) {
  ServiceConfig c;
  c.routes = {Named("A", RequestMatch::Path("/a")),
              Named("B", RequestMatch::Path("/b"))};
  c.routes[0].response_timeout = absl::Milliseconds(150);
  c.routes[0].idle_timeout = absl::Seconds(2);
  c.routes[1].response_timeout = absl::ZeroDuration();
  c.routes[1].idle_timeout = -absl::Seconds(1);
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  ASSERT_EQ(t->size(), 2u);  // the routes stay
  const CompiledRoute& a = t->Match({"POST", "/a"});
  EXPECT_EQ(a.response_timeout, absl::Milliseconds(150));
  EXPECT_EQ(a.idle_timeout, absl::Seconds(2));
  const CompiledRoute& b = t->Match({"POST", "/b"});
  EXPECT_EQ(b.name, "B");
  EXPECT_EQ(b.response_timeout, absl::InfiniteDuration());
  EXPECT_EQ(b.idle_timeout, absl::InfiniteDuration());
  EXPECT_THAT(
      dropped,
      ElementsAre(HasSubstr("route 1 'B': response_timeout 0 must be > 0"),
                  HasSubstr("route 1 'B': idle_timeout -1s must be > 0")));
}

TEST(RouteTableTest, HostileInputDoesNotBlowUp) {
  ServiceConfig c;
  // A pattern that backtracking engines take exponential time on; RE2 is
  // linear in the input.
  c.routes = {Named("Evil", RequestMatch::Path("(a+)+$"))};
  auto t = RouteTable::Build(c, nullptr);
  std::string input(100000, 'a');
  input += "!";
  EXPECT_EQ(RouteFor(*t, input), "(default)");
}

// A route's condition may be an `any` of 20,000 path regexes (once 7 ms a
// call at p50): the limits drop the piece that exceeds them, with a line
// naming the limit, and keep the rest.
TEST(RouteLimitsTest, ARouteWithTooManyConditionsIsDropped) {
  std::vector<RequestMatch> many;
  for (int i = 0; i < 20000; ++i) {
    many.push_back(RequestMatch::Path(absl::StrCat("/svc", i, "/.*")));
  }
  ServiceConfig c;
  c.routes = {Named("Hostile", RequestMatch::Any(std::move(many))),
              Named("Good", RequestMatch::Path("/svc1/.*"))};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  EXPECT_EQ(t->size(), 1u);
  EXPECT_EQ(RouteFor(*t, "/svc1/Get"), "Good");
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_THAT(dropped[0],
              HasSubstr("route 0 'Hostile' dropped: it has more than 100 "
                        "conditions (RouteLimits::max_conditions_per_route)"));
  // At the limit: kept.
  std::vector<RequestMatch> hundred;
  for (int i = 0; i < 99; ++i) hundred.push_back(RequestMatch::Method("GET"));
  c.routes = {Named("Edge", RequestMatch::Any(std::move(hundred)))};
  EXPECT_EQ(RouteTable::Build(c, nullptr)->size(), 1u);
}

TEST(RouteLimitsTest, ARouteNestedTooDeepIsDropped) {
  auto nested = [](int depth) {
    RequestMatch m = RequestMatch::Method("GET");
    for (int i = 1; i < depth; ++i) m = RequestMatch::Not(std::move(m));
    return m;
  };
  ServiceConfig c;
  c.routes = {Named("Deep", nested(17)), Named("Edge", nested(16))};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  ASSERT_EQ(t->size(), 1u);
  EXPECT_EQ(t->At(0).name, "Edge");
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_THAT(dropped[0], HasSubstr("route 0 'Deep' dropped: its condition is "
                                    "nested deeper than 16 "
                                    "(RouteLimits::max_depth)"));
  // Far deeper than the limit costs no more: compiling stops at 17. (Moved
  // in: a copy of a match this deep recurses once per level, which
  // overflows the stack of an unoptimized ASan build.)
  c.routes.clear();
  c.routes.push_back(Named("Deeper", nested(5000)));
  EXPECT_EQ(RouteTable::Build(c, nullptr)->size(), 0u);
}

TEST(RouteLimitsTest, TheTablesRegexSizeIsBounded) {
  RouteLimits limits;
  limits.max_regex_program_size = 40;
  ServiceConfig c;
  for (int i = 0; i < 20; ++i) {
    c.routes.push_back(
        Named(absl::StrCat("R", i), RequestMatch::Path(absl::StrCat("/r", i))));
  }
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, limits, &dropped);
  // Each small regex is a few instructions: some fit, the rest are dropped
  // one by one with the limit named; the kept ones come first, in order.
  ASSERT_GT(t->size(), 0u);
  ASSERT_LT(t->size(), 20u);
  EXPECT_EQ(dropped.size(), 20u - t->size());
  for (size_t i = 0; i < t->size(); ++i) {
    EXPECT_EQ(t->At(i).name, absl::StrCat("R", i));
  }
  EXPECT_THAT(dropped[0],
              HasSubstr("its regexes would take the table's compiled regex "
                        "size past 40 (RouteLimits::max_regex_program_size)"));
  // Once the budget is spent a regex is not even compiled: a broken one is
  // refused for the budget, not for its syntax.
  c.routes.push_back(Named("Late", RequestMatch::Path("(")));
  dropped.clear();
  t = RouteTable::Build(c, limits, &dropped);
  EXPECT_THAT(dropped.back(), HasSubstr("route 20 'Late' dropped: its regexes "
                                        "would take"));
  // A route without regexes still fits after the budget is spent.
  c.routes.push_back(Named("Method", RequestMatch::Method("PUT")));
  t = RouteTable::Build(c, limits, nullptr);
  EXPECT_EQ(t->At(t->size() - 1).name, "Method");
}

TEST(RouteLimitsTest, RoutesPastMaxRoutesAreDropped) {
  RouteLimits limits;
  limits.max_routes = 3;
  ServiceConfig c;
  for (int i = 0; i < 5; ++i) {
    c.routes.push_back(
        Named(absl::StrCat("R", i), RequestMatch::Method("GET")));
  }
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, limits, &dropped);
  EXPECT_EQ(t->size(), 3u);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_THAT(dropped[0], HasSubstr("routes 3 to 4 dropped: more than 3 "
                                    "routes (RouteLimits::max_routes)"));
  // Dropped routes count too: 3 broken ones leave no room for the good.
  c.routes.insert(c.routes.begin(), 3,
                  Named("Broken", RequestMatch::Path("(")));
  dropped.clear();
  t = RouteTable::Build(c, limits, &dropped);
  EXPECT_EQ(t->size(), 0u);
  EXPECT_EQ(dropped.size(), 4u);
}

// --- xDS path and header match kinds, and the per-call fraction -------------

HeaderMatch Header(std::string name, HeaderMatch::Kind kind, std::string value,
                   bool ignore_case = false) {
  HeaderMatch h;
  h.name = std::move(name);
  h.kind = kind;
  h.value = std::move(value);
  h.ignore_case = ignore_case;
  return h;
}

HeaderMatch Range(std::string name, int64_t start, int64_t end) {
  HeaderMatch h;
  h.name = std::move(name);
  h.kind = HeaderMatch::Kind::kRange;
  h.range_start = start;
  h.range_end = end;
  return h;
}

// Whether a table of the one route `condition` matches `path` with `headers`.
bool OneRouteMatches(const RequestMatch& condition, absl::string_view path,
                     const Headers* headers = nullptr) {
  ServiceConfig c;
  c.routes = {Named("R", condition)};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  EXPECT_TRUE(dropped.empty()) << dropped.front();
  return RouteFor(*t, path, "POST", headers) == "R";
}

bool HeaderMatches(const HeaderMatch& h, absl::string_view value) {
  Headers headers = {{h.name, std::string(value)}};
  return OneRouteMatches(RequestMatch::Header(h), "/p", &headers);
}

TEST(RouteTableTest, PathPrefixIsCaseSensitiveByDefaultAndIgnoresTheQuery) {
  RequestMatch m = RequestMatch::PathPrefix("/api/");
  EXPECT_TRUE(OneRouteMatches(m, "/api/"));
  EXPECT_TRUE(OneRouteMatches(m, "/api/v1/books"));
  EXPECT_TRUE(OneRouteMatches(m, "/api/?x=1"));
  EXPECT_FALSE(OneRouteMatches(m, "/API/v1"));
  EXPECT_FALSE(OneRouteMatches(m, "/api"));
  EXPECT_FALSE(OneRouteMatches(m, "/v1/api/"));
  // The query is not part of the path: "/ap" does not start with "/api/".
  EXPECT_FALSE(OneRouteMatches(m, "/ap?/api/"));
}

TEST(RouteTableTest, PathPrefixWithoutCaseSensitivityIgnoresAsciiCase) {
  RequestMatch m = RequestMatch::PathPrefix("/Api/", false);
  EXPECT_TRUE(OneRouteMatches(m, "/api/v1"));
  EXPECT_TRUE(OneRouteMatches(m, "/API/v1"));
  EXPECT_TRUE(OneRouteMatches(m, "/aPi/?q=1"));
  EXPECT_FALSE(OneRouteMatches(m, "/apx/v1"));
  EXPECT_FALSE(OneRouteMatches(m, "/ap?i/"));
}

TEST(RouteTableTest, PathExactIsCaseSensitiveByDefaultAndIgnoresTheQuery) {
  RequestMatch m = RequestMatch::PathExact("/books.Library/GetBook");
  EXPECT_TRUE(OneRouteMatches(m, "/books.Library/GetBook"));
  EXPECT_TRUE(OneRouteMatches(m, "/books.Library/GetBook?id=7"));
  EXPECT_FALSE(OneRouteMatches(m, "/books.library/getbook"));
  EXPECT_FALSE(OneRouteMatches(m, "/books.Library/GetBook/"));
  EXPECT_FALSE(OneRouteMatches(m, "/books.Library/GetBoo"));
  // Not a regex: the dot is a dot.
  EXPECT_FALSE(OneRouteMatches(m, "/booksXLibrary/GetBook"));
}

TEST(RouteTableTest, PathExactWithoutCaseSensitivityIgnoresAsciiCase) {
  RequestMatch m = RequestMatch::PathExact("/Books/Get", false);
  EXPECT_TRUE(OneRouteMatches(m, "/books/get"));
  EXPECT_TRUE(OneRouteMatches(m, "/BOOKS/GET?x=1"));
  EXPECT_FALSE(OneRouteMatches(m, "/books/gets"));
  EXPECT_FALSE(OneRouteMatches(m, "/books"));
}

TEST(RouteTableTest, HeaderSuffixMatchesTheEndOfTheValue) {
  HeaderMatch h = Header("x-region", HeaderMatch::Kind::kSuffix, ".eu");
  EXPECT_TRUE(HeaderMatches(h, "acme.eu"));
  EXPECT_TRUE(HeaderMatches(h, ".eu"));
  EXPECT_FALSE(HeaderMatches(h, "acme.EU"));
  EXPECT_FALSE(HeaderMatches(h, "acme.eu.us"));
  EXPECT_FALSE(HeaderMatches(h, "eu"));
  EXPECT_FALSE(HeaderMatches(h, ""));
}

TEST(RouteTableTest, HeaderContainsMatchesAnywhereInTheValue) {
  HeaderMatch h = Header("x-build", HeaderMatch::Kind::kContains, "beta");
  EXPECT_TRUE(HeaderMatches(h, "beta"));
  EXPECT_TRUE(HeaderMatches(h, "v2-beta-1"));
  EXPECT_TRUE(HeaderMatches(h, "v2-beta"));
  EXPECT_FALSE(HeaderMatches(h, "v2-BETA-1"));
  EXPECT_FALSE(HeaderMatches(h, "v2-bet-a"));
  EXPECT_FALSE(HeaderMatches(h, ""));
}

TEST(RouteTableTest, HeaderIgnoreCaseAppliesToExactPrefixSuffixAndContains) {
  HeaderMatch exact = Header("x-a", HeaderMatch::Kind::kExact, "Yes", true);
  EXPECT_TRUE(HeaderMatches(exact, "yes"));
  EXPECT_TRUE(HeaderMatches(exact, "YES"));
  EXPECT_FALSE(HeaderMatches(exact, "yess"));
  HeaderMatch prefix = Header("x-a", HeaderMatch::Kind::kPrefix, "Acme-", true);
  EXPECT_TRUE(HeaderMatches(prefix, "ACME-eu"));
  EXPECT_TRUE(HeaderMatches(prefix, "acme-"));
  EXPECT_FALSE(HeaderMatches(prefix, "xacme-eu"));
  HeaderMatch suffix = Header("x-a", HeaderMatch::Kind::kSuffix, ".Eu", true);
  EXPECT_TRUE(HeaderMatches(suffix, "ACME.EU"));
  EXPECT_TRUE(HeaderMatches(suffix, "acme.eu"));
  EXPECT_FALSE(HeaderMatches(suffix, "acme.eux"));
  HeaderMatch contains =
      Header("x-a", HeaderMatch::Kind::kContains, "BeTa", true);
  EXPECT_TRUE(HeaderMatches(contains, "v2-beta-1"));
  EXPECT_TRUE(HeaderMatches(contains, "V2-BETA-1"));
  EXPECT_FALSE(HeaderMatches(contains, "v2-bet-a"));
  EXPECT_TRUE(HeaderMatches(contains, "BETA"));   // the whole value
  EXPECT_TRUE(HeaderMatches(contains, "xbEtA"));  // at the end
  EXPECT_FALSE(HeaderMatches(contains, "bet"));   // shorter than it
  EXPECT_FALSE(HeaderMatches(contains, ""));
  // Without ignore_case the same patterns are case-sensitive.
  EXPECT_FALSE(
      HeaderMatches(Header("x-a", HeaderMatch::Kind::kExact, "Yes"), "yes"));
  EXPECT_FALSE(HeaderMatches(Header("x-a", HeaderMatch::Kind::kPrefix, "Acme-"),
                             "acme-eu"));
}

TEST(RouteTableTest, HeaderRangeIncludesItsStartAndExcludesItsEnd) {
  HeaderMatch h = Range("x-n", 10, 20);
  EXPECT_TRUE(HeaderMatches(h, "10"));
  EXPECT_TRUE(HeaderMatches(h, "15"));
  EXPECT_TRUE(HeaderMatches(h, "19"));
  EXPECT_FALSE(HeaderMatches(h, "20"));
  EXPECT_FALSE(HeaderMatches(h, "9"));
  EXPECT_FALSE(HeaderMatches(h, "-15"));
  HeaderMatch negative = Range("x-n", -10, 0);
  EXPECT_TRUE(HeaderMatches(negative, "-10"));
  EXPECT_TRUE(HeaderMatches(negative, "-1"));
  EXPECT_FALSE(HeaderMatches(negative, "0"));
  EXPECT_FALSE(HeaderMatches(negative, "-11"));
  // The int64 extremes: the end stays exclusive.
  HeaderMatch whole = Range("x-n", INT64_MIN, INT64_MAX);
  EXPECT_TRUE(HeaderMatches(whole, "-9223372036854775808"));
  EXPECT_TRUE(HeaderMatches(whole, "9223372036854775806"));
  EXPECT_FALSE(HeaderMatches(whole, "9223372036854775807"));
}

TEST(RouteTableTest, HeaderRangeNeverMatchesANonNumericValue) {
  HeaderMatch h = Range("x-n", INT64_MIN, INT64_MAX);
  for (const char* bad : {"", "abc", "15abc", "1.5", "1e3", "0x10", "--1",
                          "99999999999999999999", "-99999999999999999999"}) {
    EXPECT_FALSE(HeaderMatches(h, bad)) << bad;
  }
  // Without the header at all.
  EXPECT_FALSE(OneRouteMatches(RequestMatch::Header(h), "/p"));
  Headers other = {{"x-m", "5"}};
  EXPECT_FALSE(OneRouteMatches(RequestMatch::Header(h), "/p", &other));
}

TEST(RouteTableTest, ARepeatedHeaderMatchesIfOneOfItsValuesDoes) {
  Headers repeated = {
      {"x-n", "abc"}, {"x-other", "15"}, {"x-n", "15"}, {"x-n", "99"}};
  EXPECT_TRUE(OneRouteMatches(RequestMatch::Header(Range("x-n", 10, 20)), "/p",
                              &repeated));
  EXPECT_TRUE(OneRouteMatches(
      RequestMatch::Header(Header("x-n", HeaderMatch::Kind::kSuffix, "9")),
      "/p", &repeated));
  EXPECT_TRUE(OneRouteMatches(
      RequestMatch::Header(Header("x-n", HeaderMatch::Kind::kContains, "B",
                                  /*ignore_case=*/true)),
      "/p", &repeated));
  EXPECT_FALSE(OneRouteMatches(RequestMatch::Header(Range("x-n", 20, 30)), "/p",
                               &repeated));
  // Another header's value does not count.
  EXPECT_FALSE(OneRouteMatches(
      RequestMatch::Header(Header("x-n", HeaderMatch::Kind::kExact, "150")),
      "/p", &repeated));
}

TEST(RouteTableTest, AnEmptyHeaderRangeDropsTheRouteNamingTheHeader) {
  ServiceConfig c;
  c.routes = {Named("Empty", RequestMatch::Header(Range("x-n", 5, 5))),
              Named("Backwards", RequestMatch::All({RequestMatch::Header(
                                     Range("x-version", 7, -3))})),
              Named("One", RequestMatch::Header(Range("x-n", 5, 6)))};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  ASSERT_EQ(t->size(), 1u);
  EXPECT_EQ(t->At(0).name, "One");
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_THAT(dropped[0], HasSubstr("route 0 'Empty' dropped: header 'x-n' "
                                    "range [5, 5) is empty"));
  EXPECT_THAT(dropped[1],
              HasSubstr("route 1 'Backwards' dropped: header 'x-version' "
                        "range [7, -3) is empty"));
  Headers five = {{"x-n", "5"}};
  EXPECT_EQ(RouteFor(*t, "/p", "POST", &five), "One");
}

// How many of `n` requests a one-route table of Fraction(per_million) sends
// to its route.
int FractionMatches(uint32_t per_million, int n) {
  ServiceConfig c;
  c.routes = {Named("Sampled", RequestMatch::Fraction(per_million))};
  auto t = RouteTable::Build(c, nullptr);
  int matched = 0;
  for (int i = 0; i < n; ++i) matched += RouteFor(*t, "/p") == "Sampled";
  return matched;
}

TEST(RouteTableTest, FractionZeroNeverMatchesAndAMillionAlwaysDoes) {
  EXPECT_EQ(FractionMatches(0, 20000), 0);
  EXPECT_EQ(FractionMatches(1'000'000, 20000), 20000);
  EXPECT_EQ(FractionMatches(2'000'000, 20000), 20000);  // more is always too
  EXPECT_EQ(FractionMatches(UINT32_MAX, 1000), 1000);
}

TEST(RouteTableTest, FractionMatchesItsShareOfRequests) {
  // 250,000 per million of 20,000 requests: binomial with mean 5,000 and
  // σ = sqrt(20,000 × 0.25 × 0.75) ≈ 61.2; 6σ ≈ 367 (the test fails by
  // chance about once in 500 million runs).
  const int kRequests = 20000;
  EXPECT_NEAR(FractionMatches(250'000, kRequests), 5000, 367);
  // Drawn per call: a table's later routes see the rest.
  ServiceConfig c;
  c.routes = {Named("Sampled", RequestMatch::Fraction(250'000)),
              Named("Rest", RequestMatch::All({}))};
  auto t = RouteTable::Build(c, nullptr);
  int rest = 0;
  for (int i = 0; i < kRequests; ++i) rest += RouteFor(*t, "/p") == "Rest";
  EXPECT_NEAR(rest, 15000, 367);
}

// A path regex that is a literal is matched by comparing the path; RE2 is
// the judge of what each pattern matches.
TEST(RouteTableTest, LiteralPathRegexesMatchWhatRe2Matches) {
  const std::vector<std::string> patterns = {
      "/books\\.Library/GetBook",    // GrpcMethod's escaping
      "^/books\\.Library/GetBook$",  // anchors are no-ops in a full match
      "/books.Library/GetBook",      // '.' is any character
      "/a\\$b",                      // an escaped '$' is itself
      "/a$b",                        // '$' inside: no literal
      "^^/a",                        // a second '^'
      "/a\\\\b",                     // an escaped backslash
      "/a\\d",                       // \d is a class
      "/a\\Q.\\E",                   // \Q...\E quotes
      "/x(y)?",
      "/x|/y",
      "/[ab]",
      "/a{2}",
      "/a+",
      "/a*",
      "(?i)/ab",
      "/é\\.x",  // UTF-8 text
      "",        // matches only the empty path
  };
  const std::vector<std::string> paths = {"/books.Library/GetBook",
                                          "/booksXLibrary/GetBook",
                                          "/books.Library/Get",
                                          "/a$b",
                                          "/ab",
                                          "/a",
                                          "/a\\b",
                                          "/a1",
                                          "/a.",
                                          "/aQ.E",
                                          "/xy",
                                          "/x",
                                          "/y",
                                          "/a",
                                          "/b",
                                          "/aa",
                                          "/AB",
                                          "/é.x",
                                          "/éXx",
                                          "",
                                          "/"};
  for (const std::string& pattern : patterns) {
    re2::RE2 oracle(pattern);
    ASSERT_TRUE(oracle.ok()) << pattern;
    ServiceConfig c;
    c.routes = {Named("R", RequestMatch::Path(pattern))};
    auto t = RouteTable::Build(c, nullptr);
    for (const std::string& path : paths) {
      EXPECT_EQ(RouteFor(*t, path) == "R", re2::RE2::FullMatch(path, oracle))
          << "pattern '" << pattern << "', path '" << path << "'";
    }
  }
}

TEST(RouteTableTest, PathRegexLiteralTellsWhichPatternsAreOneString) {
  EXPECT_EQ(PathRegexLiteral("/books\\.Library/GetBook"),
            "/books.Library/GetBook");
  EXPECT_EQ(PathRegexLiteral("^/a\\$b$"), "/a$b");
  EXPECT_EQ(PathRegexLiteral("/a\\\\b"), "/a\\b");
  EXPECT_EQ(PathRegexLiteral(""), "");
  for (const char* pattern :
       {"/books.Library/Get", "/a\\d", "/a\\", "/x(y)?", "/x|/y", "/[ab]",
        "/a{2}", "/a+", "/a*", "^^/a", "/a$b", "(?i)/ab", "/a\\Q.\\E"}) {
    EXPECT_FALSE(PathRegexLiteral(pattern).has_value()) << pattern;
  }
}

// A literal pattern still counts against the table's regex budget, and an
// invalid one is still refused: what a table accepts does not depend on how
// its routes are matched.
TEST(RouteTableTest, LiteralPathRegexesAreCheckedAsRegexes) {
  ServiceConfig c;
  c.routes = {Named("Bad", RequestMatch::Path("/a\\")),  // a trailing escape
              Named("Good", RequestMatch::Path("/b\\.c"))};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_THAT(dropped[0], HasSubstr("Bad"));
  EXPECT_EQ(RouteFor(*t, "/b.c"), "Good");
  EXPECT_EQ(RouteFor(*t, "/bxc"), "(default)");
}

// A gRPC method's route in a profile: its path as an escaped literal.
RequestMatch MethodPath(int m) {
  return RequestMatch::Path(absl::StrCat("/svc\\.S/M", m));
}

RequestMatch PathAndHeader(int m, const std::string& header) {
  HeaderMatch h;
  h.name = header;
  h.kind = HeaderMatch::Kind::kPresent;
  return RequestMatch::All({MethodPath(m), RequestMatch::Header(h)});
}

// Many exact-path routes are looked up, not compared in turn; routes of
// other kinds still match in their place in the order.
TEST(RouteTableTest, ExactPathRoutesKeepFirstMatchOrder) {
  ServiceConfig c;
  for (int m = 0; m < 10; ++m) {
    if (m == 2) c.routes.push_back(Named("Hdr", PathAndHeader(2, "x-a")));
    c.routes.push_back(Named(absl::StrCat("L", m), MethodPath(m)));
  }
  c.routes.push_back(
      Named("Wild", RequestMatch::Path("/svc\\.S/M1[0-9]")));  // M10..M19
  for (int m = 10; m < 20; ++m) {
    c.routes.push_back(Named(absl::StrCat("L", m), MethodPath(m)));
  }
  c.routes.push_back(Named("Dup", MethodPath(3)));  // never: L3 is first
  auto t = RouteTable::Build(c, nullptr);
  EXPECT_EQ(RouteFor(*t, "/svc.S/M0"), "L0");
  EXPECT_EQ(RouteFor(*t, "/svc.S/M1"), "L1");
  EXPECT_EQ(RouteFor(*t, "/svc.S/M15"), "Wild");  // before L15
  EXPECT_EQ(RouteFor(*t, "/svc.S/M3"), "L3");
  EXPECT_EQ(RouteFor(*t, "/svc.S/M9?x=1"), "L9");  // the query is no part
  const Headers with_a = {{"x-a", "1"}};
  EXPECT_EQ(RouteFor(*t, "/svc.S/M2", "POST", &with_a), "Hdr");
  EXPECT_EQ(RouteFor(*t, "/svc.S/M2"), "L2");
  EXPECT_EQ(RouteFor(*t, "/svc.S/M20"), "(default)");
  EXPECT_EQ(RouteFor(*t, "/svc.S/m0"), "(default)");  // case-sensitive
}

// Against the same tables with each literal written so that it is no
// literal ("(?:...)": the same language, matched by RE2 in turn), over
// random mixes of exact, prefix, regex and header-guarded routes.
TEST(RouteTableTest, ExactPathIndexAnswersAsMatchingInTurnDoes) {
  std::mt19937 gen(2026);
  auto draw = [&gen](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(gen);
  };
  for (int table = 0; table < 60; ++table) {
    ServiceConfig indexed, in_turn;
    const int routes = 1 + draw(60);
    for (int r = 0; r < routes; ++r) {
      const std::string name = absl::StrCat("R", r);
      const int m = draw(30);
      switch (draw(6)) {
        case 0:
          indexed.routes.push_back(Named(
              name,
              RequestMatch::PathPrefix(absl::StrCat("/svc.S/M", m % 10))));
          break;
        case 1:
          indexed.routes.push_back(Named(
              name,
              RequestMatch::Path(absl::StrCat("/svc\\.S/M", m % 3, "[0-9]*"))));
          break;
        case 2:
          indexed.routes.push_back(Named(name, PathAndHeader(m, "x-a")));
          break;
        default:
          indexed.routes.push_back(Named(name, MethodPath(m)));
          in_turn.routes.push_back(Named(
              name, RequestMatch::Path(absl::StrCat("(?:/svc\\.S/M", m, ")"))));
          continue;
      }
      in_turn.routes.push_back(indexed.routes.back());
    }
    auto a = RouteTable::Build(indexed, nullptr);
    auto b = RouteTable::Build(in_turn, nullptr);
    ASSERT_EQ(a->size(), b->size());
    const Headers with_a = {{"x-a", "1"}};
    for (int m = 0; m < 35; ++m) {
      const std::string path = absl::StrCat("/svc.S/M", m);
      for (const Headers* h : {static_cast<const Headers*>(nullptr), &with_a}) {
        EXPECT_EQ(a->Match({"POST", path, h}).index,
                  b->Match({"POST", path, h}).index)
            << "table " << table << ", " << path << (h ? " with x-a" : "");
      }
    }
  }
}

}  // namespace
}  // namespace mesh::internal

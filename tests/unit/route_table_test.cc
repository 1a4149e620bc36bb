// Route matching: order, the match tree, regex anchoring and the query, and
// what is dropped.
#include "src/route/route_table.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

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
  // Far deeper than the limit costs no more: compiling stops at 17.
  c.routes = {Named("Deeper", nested(5000))};
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

}  // namespace
}  // namespace mesh::internal

// Route matching: order, the match tree, regex anchoring and the query, and
// what is dropped.
#include "src/route/route_table.h"

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

}  // namespace
}  // namespace mesh::internal

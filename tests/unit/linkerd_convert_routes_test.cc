// Destination.GetProfile routes → mesh::Route (src/discovery/linkerd/): the
// request match tree, method names, timeouts, and which routes are dropped.
// Expected values are written out by hand from docs/wire-linkerd.md and
// upstream's protos and compared through the printers in
// linkerd_convert_test_util.h.
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "linkerd/destination.pb.h"
#include "src/discovery/linkerd/convert.h"
#include "tests/unit/linkerd_convert_test_util.h"

namespace mesh::internal::linkerd {
namespace {

namespace dst = ::io::linkerd::proxy::destination;
namespace http = ::io::linkerd::proxy::http_types;

using ::mesh::testing_util::Describe;
using ::mesh::testing_util::GoodRoute;
using ::mesh::testing_util::MethodIs;
using ::mesh::testing_util::OneRoute;
using ::mesh::testing_util::PathIs;
using ::mesh::testing_util::StatusIn;
using ::mesh::testing_util::WantRoute;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ConvertRouteTest, RouteConvertsEveryField) {
  dst::Route r;
  dst::RequestMatch::Seq* all = r.mutable_condition()->mutable_all();
  *all->add_matches() = PathIs("/books.Library/[A-Z][a-z]+");
  *all->add_matches() = MethodIs(http::HttpMethod::POST);
  all->add_matches()->mutable_not_()->mutable_any();  // not(any []) is true
  dst::RequestMatch::Seq* any = all->add_matches()->mutable_any();
  any->add_matches()->mutable_method()->set_unregistered("PURGE");
  *any->add_matches()->mutable_not_() = MethodIs(http::HttpMethod::GET);
  dst::ResponseClass* failure = r.add_response_classes();
  *failure->mutable_condition() = StatusIn(500, 599);
  failure->set_is_failure(true);
  dst::ResponseClass* success = r.add_response_classes();
  dst::ResponseMatch::Seq* both = success->mutable_condition()->mutable_all();
  *both->add_matches() = StatusIn(100, 499);
  *both->add_matches()->mutable_not_() = StatusIn(429, 429);
  (*r.mutable_metrics_labels())["route"] = "POST /books.Library/*";
  (*r.mutable_metrics_labels())["team"] = "shelf";
  r.set_is_retryable(true);
  r.mutable_timeout()->set_seconds(1);
  r.mutable_timeout()->set_nanos(500'000'000);

  Route want;
  want.name = "POST /books.Library/*";
  want.condition = RequestMatch::All(
      {RequestMatch::Path("/books.Library/[A-Z][a-z]+"),
       RequestMatch::Method("POST"), RequestMatch::Not(RequestMatch::Any({})),
       RequestMatch::Any({RequestMatch::Method("PURGE"),
                          RequestMatch::Not(RequestMatch::Method("GET"))})});
  want.response_classes = {
      {ResponseMatch::Status(500, 599), true},
      {ResponseMatch::All(
           {ResponseMatch::Status(100, 499),
            ResponseMatch::Not(ResponseMatch::Status(429, 429))}),
       false}};
  want.metrics_labels = {{"route", "POST /books.Library/*"}, {"team", "shelf"}};
  want.is_retryable = true;
  want.timeout = absl::Milliseconds(1500);

  ProfileConversion got = ConvertProfile(OneRoute(r));
  EXPECT_THAT(got.dropped, IsEmpty());
  EXPECT_THAT(Describe(got.config.routes), ElementsAre(Describe(want)));
}

TEST(ConvertRouteTest, RoutesKeepTheirOrderAndUnnamedRoutesHaveNoName) {
  dst::DestinationProfile p;
  *p.add_routes() = GoodRoute("b", "/b");
  *p.add_routes() = GoodRoute("a", "/a");
  dst::Route* unnamed = p.add_routes();
  *unnamed->mutable_condition() = PathIs("/c");
  (*unnamed->mutable_metrics_labels())["team"] = "x";

  Route c;
  c.condition = RequestMatch::Path("/c");
  c.metrics_labels = {{"team", "x"}};
  ProfileConversion got = ConvertProfile(p);
  EXPECT_THAT(got.dropped, IsEmpty());
  EXPECT_THAT(Describe(got.config.routes),
              ElementsAre(Describe(WantRoute("b", "/b")),
                          Describe(WantRoute("a", "/a")), Describe(c)));
}

TEST(ConvertRouteTest, EveryRegisteredMethodHasItsName) {
  const std::vector<std::pair<http::HttpMethod::Registered, std::string>>
      methods = {{http::HttpMethod::GET, "GET"},
                 {http::HttpMethod::POST, "POST"},
                 {http::HttpMethod::PUT, "PUT"},
                 {http::HttpMethod::DELETE, "DELETE"},
                 {http::HttpMethod::PATCH, "PATCH"},
                 {http::HttpMethod::OPTIONS, "OPTIONS"},
                 {http::HttpMethod::CONNECT, "CONNECT"},
                 {http::HttpMethod::HEAD, "HEAD"},
                 {http::HttpMethod::TRACE, "TRACE"}};
  for (const auto& [wire, name] : methods) {
    dst::Route r;
    *r.mutable_condition() = MethodIs(wire);
    ProfileConversion got = ConvertProfile(OneRoute(r));
    ASSERT_EQ(got.config.routes.size(), 1u) << name;
    EXPECT_EQ(got.config.routes[0].condition.kind, RequestMatch::Kind::kMethod);
    EXPECT_EQ(got.config.routes[0].condition.method, name);
  }
}

TEST(ConvertRouteTest, PathRegexIsTrimmed) {
  dst::Route r = GoodRoute("trim", " \t/books/[0-9]+\n ");
  ProfileConversion got = ConvertProfile(OneRoute(r));
  EXPECT_THAT(got.dropped, IsEmpty());
  EXPECT_THAT(Describe(got.config.routes),
              ElementsAre(Describe(WantRoute("trim", "/books/[0-9]+"))));
}

TEST(ConvertRouteTest, TimeoutZeroOrAbsentIsInfinite) {
  dst::Route absent = GoodRoute("r", "/r");
  dst::Route zero = GoodRoute("r", "/r");
  zero.mutable_timeout();
  dst::Route tiny = GoodRoute("r", "/r");
  tiny.mutable_timeout()->set_nanos(1);
  dst::DestinationProfile p;
  *p.add_routes() = absent;
  *p.add_routes() = zero;
  *p.add_routes() = tiny;
  ProfileConversion got = ConvertProfile(p);
  ASSERT_EQ(got.config.routes.size(), 3u);
  EXPECT_EQ(got.config.routes[0].timeout, absl::InfiniteDuration());
  EXPECT_EQ(got.config.routes[1].timeout, absl::InfiniteDuration());
  EXPECT_EQ(got.config.routes[2].timeout, absl::Nanoseconds(1));
}

// --- routes that are dropped ------------------------------------------------

// Builds [good "first", bad, good "last"] and checks that only the bad one
// went, with one line naming it and the reason.
void ExpectOnlyMiddleDropped(const dst::Route& bad,
                             const std::vector<std::string>& line_parts) {
  dst::DestinationProfile p;
  *p.add_routes() = GoodRoute("first", "/first");
  *p.add_routes() = bad;
  *p.add_routes() = GoodRoute("last", "/last");
  ProfileConversion got = ConvertProfile(p);
  EXPECT_THAT(Describe(got.config.routes),
              ElementsAre(Describe(WantRoute("first", "/first")),
                          Describe(WantRoute("last", "/last"))));
  ASSERT_EQ(got.dropped.size(), 1u);
  for (const std::string& part : line_parts) {
    EXPECT_THAT(got.dropped[0], HasSubstr(part));
  }
}

TEST(ConvertRouteTest, DropsRouteWithoutCondition) {
  dst::Route r;
  (*r.mutable_metrics_labels())["route"] = "nocond";
  ExpectOnlyMiddleDropped(r, {"route #1 ('nocond') dropped", "no condition"});
}

TEST(ConvertRouteTest, DropsRouteWithAnEmptyNode) {
  dst::Route r;
  r.mutable_condition();
  ExpectOnlyMiddleDropped(r, {"route #1 dropped", "none of all, any, not"});

  dst::Route nested = GoodRoute("nested", "/x");
  dst::RequestMatch::Seq* all = nested.mutable_condition()->mutable_all();
  *all->add_matches() = PathIs("/ok");
  all->add_matches()->mutable_any()->add_matches();  // any [ {} ]
  ExpectOnlyMiddleDropped(nested,
                          {"route #1 ('nested') dropped", "none of all"});
}

TEST(ConvertRouteTest, DropsRouteWithNotWithoutInner) {
  dst::Route r = GoodRoute("not", "/x");
  r.mutable_condition()->mutable_not_();
  ExpectOnlyMiddleDropped(
      r, {"route #1 ('not') dropped", "'not'", "no inner match"});
}

TEST(ConvertRouteTest, DropsRouteWithARegexRe2Rejects) {
  // Unbalanced, a bad repetition, and valid PCRE that RE2 does not support
  // (a backreference, a lookahead).
  for (const std::string regex : {"/books/(", "a{2,1}", "(a)\\1", "(?=x)y"}) {
    ExpectOnlyMiddleDropped(
        GoodRoute("bad-re", regex),
        {"route #1 ('bad-re') dropped", "path regex", "does not compile"});
  }
  dst::Route nested = GoodRoute("deep", "/x");
  *nested.mutable_condition()->mutable_not_()->mutable_any()->add_matches() =
      PathIs("[z-a]");
  ExpectOnlyMiddleDropped(nested, {"route #1 ('deep')", "'[z-a]'"});
}

TEST(ConvertRouteTest, DropsRouteWithABadMethod) {
  dst::Route unknown = GoodRoute("m", "/x");
  unknown.mutable_condition()->mutable_method()->set_registered(
      static_cast<http::HttpMethod::Registered>(42));
  ExpectOnlyMiddleDropped(
      unknown, {"route #1 ('m') dropped", "unknown registered method 42"});

  dst::Route none = GoodRoute("m", "/x");
  none.mutable_condition()->mutable_method();
  ExpectOnlyMiddleDropped(none, {"neither registered nor unregistered"});

  for (const std::string bad : {"", "GET /", "G\tT", "(GET)"}) {
    dst::Route r = GoodRoute("m", "/x");
    r.mutable_condition()->mutable_method()->set_unregistered(bad);
    ExpectOnlyMiddleDropped(r, {"route #1 ('m') dropped", "not an HTTP"});
  }
}

TEST(ConvertRouteTest, DropsRouteWithANegativeOrMalformedTimeout) {
  dst::Route negative = GoodRoute("neg", "/x");
  negative.mutable_timeout()->set_seconds(-1);
  ExpectOnlyMiddleDropped(
      negative, {"route #1 ('neg') dropped", "timeout -1s is negative"});

  dst::Route negative_nanos = GoodRoute("neg", "/x");
  negative_nanos.mutable_timeout()->set_nanos(-5);
  ExpectOnlyMiddleDropped(negative_nanos, {"timeout -5ns is negative"});

  dst::Route mixed_signs = GoodRoute("mixed", "/x");
  mixed_signs.mutable_timeout()->set_seconds(1);
  mixed_signs.mutable_timeout()->set_nanos(-1);
  ExpectOnlyMiddleDropped(
      mixed_signs, {"route #1 ('mixed') dropped", "not a valid Duration"});

  dst::Route big_nanos = GoodRoute("nanos", "/x");
  big_nanos.mutable_timeout()->set_nanos(1'000'000'000);
  ExpectOnlyMiddleDropped(big_nanos, {"not a valid Duration"});

  dst::Route huge = GoodRoute("huge", "/x");
  huge.mutable_timeout()->set_seconds(315'576'000'001);
  ExpectOnlyMiddleDropped(huge, {"not a valid Duration"});
}

}  // namespace
}  // namespace mesh::internal::linkerd

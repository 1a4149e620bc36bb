// Destination.GetProfile wire messages → ServiceConfig
// (src/discovery/linkerd/): whole profiles, response classes, the retry
// budget, the traffic split and the direct endpoint. Expected values are
// written out by hand from docs/wire-linkerd.md and upstream's protos.
#include <cstdint>
#include <limits>
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

using ::mesh::testing_util::Describe;
using ::mesh::testing_util::GoodRoute;
using ::mesh::testing_util::OneRoute;
using ::mesh::testing_util::StatusIn;
using ::mesh::testing_util::WantRoute;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// --- whole profiles ---------------------------------------------------------

TEST(ConvertProfileTest, EmptyProfileIsAnEmptyConfig) {
  ProfileConversion got = ConvertProfile(dst::DestinationProfile());
  EXPECT_THAT(got.dropped, IsEmpty());
  EXPECT_THAT(got.config.routes, IsEmpty());
  EXPECT_FALSE(got.config.retry_budget.has_value());
  EXPECT_THAT(got.config.backends, IsEmpty());
  EXPECT_EQ(got.config.fully_qualified_name, "");
  EXPECT_FALSE(got.config.opaque_protocol);
  EXPECT_FALSE(got.config.endpoint.has_value());
}

// What the controller sends when there is no ServiceProfile.
TEST(ConvertProfileTest, ControllerDefaultProfile) {
  dst::DestinationProfile p;
  p.mutable_retry_budget()->set_retry_ratio(0.2f);
  p.mutable_retry_budget()->set_min_retries_per_second(10);
  p.mutable_retry_budget()->mutable_ttl()->set_seconds(10);
  p.set_fully_qualified_name("books.default.svc.cluster.local");
  p.set_opaque_protocol(true);

  ProfileConversion got = ConvertProfile(p);
  EXPECT_THAT(got.dropped, IsEmpty());
  EXPECT_THAT(got.config.routes, IsEmpty());
  ASSERT_TRUE(got.config.retry_budget.has_value());
  EXPECT_EQ(got.config.retry_budget->retry_ratio, static_cast<double>(0.2f));
  EXPECT_EQ(got.config.retry_budget->min_retries_per_second, 10u);
  EXPECT_EQ(got.config.retry_budget->ttl, absl::Seconds(10));
  EXPECT_EQ(got.config.fully_qualified_name, "books.default.svc.cluster.local");
  EXPECT_TRUE(got.config.opaque_protocol);
}

// --- response classes -------------------------------------------------------

TEST(ConvertProfileTest, DropsOnlyTheBadResponseClass) {
  struct Case {
    dst::ResponseMatch condition;
    bool has_condition;
    std::string reason;
  };
  dst::ResponseMatch empty;
  dst::ResponseMatch nested_bad;
  *nested_bad.mutable_any()->add_matches() = StatusIn(200, 299);
  *nested_bad.mutable_any()->add_matches() = StatusIn(0, 200);
  dst::ResponseMatch not_without_inner;
  not_without_inner.mutable_not_();
  dst::ResponseMatch empty_all;
  empty_all.mutable_all();
  dst::ResponseMatch empty_any_inside;
  *empty_any_inside.mutable_all()->add_matches() = StatusIn(500, 599);
  empty_any_inside.mutable_all()->add_matches()->mutable_any();
  const std::vector<Case> cases = {
      {StatusIn(0, 200), true, "status range 0..200 has a bound outside"},
      {StatusIn(99, 200), true, "outside 100..999"},
      {StatusIn(500, 1000), true, "status range 500..1000"},
      {StatusIn(500, 400), true, "status range 500..400 has min > max"},
      {empty, true, "none of all, any, not or status"},
      {nested_bad, true, "0..200"},
      {not_without_inner, true, "no inner match"},
      {empty_all, true, "an empty 'all' in a response match"},
      {empty_any_inside, true, "an empty 'any'"},
      {dst::ResponseMatch(), false, "no condition"},
  };
  for (const Case& c : cases) {
    dst::Route r = GoodRoute("classes", "/x");
    dst::ResponseClass* first = r.add_response_classes();
    *first->mutable_condition() = StatusIn(100, 999);  // both bounds allowed
    dst::ResponseClass* bad = r.add_response_classes();
    if (c.has_condition) *bad->mutable_condition() = c.condition;
    bad->set_is_failure(true);
    dst::ResponseClass* last = r.add_response_classes();
    *last->mutable_condition() = StatusIn(503, 503);
    last->set_is_failure(true);

    Route want = WantRoute("classes", "/x");
    want.response_classes = {{ResponseMatch::Status(100, 999), false},
                             {ResponseMatch::Status(503, 503), true}};
    ProfileConversion got = ConvertProfile(OneRoute(r));
    EXPECT_THAT(Describe(got.config.routes), ElementsAre(Describe(want)))
        << c.reason;
    EXPECT_THAT(
        got.dropped,
        ElementsAre(AllOf(HasSubstr("route #0 ('classes'): response class #1 "
                                    "dropped"),
                          HasSubstr(c.reason))));
  }
}

// --- retry budget -----------------------------------------------------------

dst::DestinationProfile WithBudget(float ratio, int64_t ttl_seconds,
                                   int32_t ttl_nanos) {
  dst::DestinationProfile p;
  p.mutable_retry_budget()->set_retry_ratio(ratio);
  p.mutable_retry_budget()->set_min_retries_per_second(7);
  p.mutable_retry_budget()->mutable_ttl()->set_seconds(ttl_seconds);
  p.mutable_retry_budget()->mutable_ttl()->set_nanos(ttl_nanos);
  return p;
}

TEST(ConvertProfileTest, RetryBudgetAtItsBounds) {
  ProfileConversion low = ConvertProfile(WithBudget(0, 1, 0));
  EXPECT_THAT(low.dropped, IsEmpty());
  ASSERT_TRUE(low.config.retry_budget.has_value());
  EXPECT_EQ(low.config.retry_budget->retry_ratio, 0.0);
  EXPECT_EQ(low.config.retry_budget->min_retries_per_second, 7u);
  EXPECT_EQ(low.config.retry_budget->ttl, absl::Seconds(1));

  dst::DestinationProfile p = WithBudget(1000, 60, 0);
  p.mutable_retry_budget()->set_min_retries_per_second(2147483647);
  ProfileConversion high = ConvertProfile(p);
  EXPECT_THAT(high.dropped, IsEmpty());
  ASSERT_TRUE(high.config.retry_budget.has_value());
  EXPECT_EQ(high.config.retry_budget->retry_ratio, 1000.0);
  EXPECT_EQ(high.config.retry_budget->min_retries_per_second, 2147483647u);
  EXPECT_EQ(high.config.retry_budget->ttl, absl::Seconds(60));
}

TEST(ConvertProfileTest, InvalidRetryBudgetIsDroppedWithALine) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const struct {
    float ratio;
    int64_t seconds;
    int32_t nanos;
    std::string reason;
  } cases[] = {
      {-0.1f, 10, 0, "retry_ratio -0.1 is outside [0, 1000]"},
      {1000.5f, 10, 0, "retry_ratio 1000.5 is outside"},
      {nan, 10, 0, "retry_ratio nan is outside"},
      {inf, 10, 0, "retry_ratio inf is outside"},
      {0.2f, 0, 0, "ttl 0 is outside [1s, 60s]"},
      {0.2f, 0, 999'999'999, "ttl 999.999999ms is outside"},
      {0.2f, 60, 1, "ttl 1m0.000000001s is outside"},
      {0.2f, 10, -1, "ttl {seconds: 10, nanos: -1} is not a valid Duration"},
  };
  std::vector<std::pair<dst::DestinationProfile, std::string>> profiles;
  for (const auto& c : cases) {
    profiles.emplace_back(WithBudget(c.ratio, c.seconds, c.nanos), c.reason);
  }
  dst::DestinationProfile no_ttl = WithBudget(0.2f, 10, 0);
  no_ttl.mutable_retry_budget()->clear_ttl();
  profiles.emplace_back(no_ttl, "ttl is missing");
  dst::DestinationProfile too_many = WithBudget(0.2f, 10, 0);
  too_many.mutable_retry_budget()->set_min_retries_per_second(2147483648u);
  profiles.emplace_back(too_many, "min_retries_per_second 2147483648 is above");
  for (auto& [p, reason] : profiles) {
    *p.add_routes() = GoodRoute("kept", "/kept");
    ProfileConversion got = ConvertProfile(p);
    EXPECT_FALSE(got.config.retry_budget.has_value()) << reason;
    // The line says what happens: the destination's default budget.
    EXPECT_THAT(got.dropped,
                ElementsAre(AllOf(HasSubstr("retry budget dropped, the default "
                                            "applies (retry_ratio 0.2, "
                                            "min_retries_per_second 10, ttl "
                                            "10s)"),
                                  HasSubstr(reason))));
    EXPECT_THAT(Describe(got.config.routes),
                ElementsAre(Describe(WantRoute("kept", "/kept"))));
  }
}

// --- traffic split ----------------------------------------------------------

TEST(ConvertProfileTest, DstOverridesBecomeBackendsAndBadOnesAreDropped) {
  dst::DestinationProfile p;
  const std::pair<std::string, uint32_t> overrides[] = {
      {"books.default.svc.cluster.local:7001", 9000},
      {"books-v2.default.svc.cluster.local:7001", 0},
      {"books-v3.default.svc.cluster.local", 500},
      {"", 500},
      {"books-v4:0", 500},
      {"books-v5:70000", 500},
      {"10.0.0.9:8080", 1000},
  };
  for (const auto& [authority, weight] : overrides) {
    dst::WeightedDst* d = p.add_dst_overrides();
    d->set_authority(authority);
    d->set_weight(weight);
    d->mutable_backend_ref()->set_default_("ignored");
  }
  ProfileConversion got = ConvertProfile(p);
  EXPECT_THAT(Describe(got.config.backends),
              ElementsAre("books.default.svc.cluster.local:7001*9000",
                          "10.0.0.9:8080*1000"));
  EXPECT_THAT(
      got.dropped,
      ElementsAre(
          AllOf(HasSubstr("traffic split backend #1"),
                HasSubstr("'books-v2.default.svc.cluster.local:7001'"),
                HasSubstr("weight 0")),
          AllOf(HasSubstr("backend #2"),
                HasSubstr("'books-v3.default.svc.cluster.local'"),
                HasSubstr("name:port")),
          AllOf(HasSubstr("backend #3 ('')"), HasSubstr("empty")),
          AllOf(HasSubstr("backend #4 ('books-v4:0')"), HasSubstr("1..65535")),
          AllOf(HasSubstr("backend #5 ('books-v5:70000')"),
                HasSubstr("1..65535"))));
}

// --- direct endpoint --------------------------------------------------------

TEST(ConvertProfileTest, EndpointIsConvertedOrDroppedWithALine) {
  dst::DestinationProfile p;
  dst::WeightedAddr* e = p.mutable_endpoint();
  e->mutable_addr()->mutable_ip()->set_ipv4(0x0A000005);
  e->mutable_addr()->set_port(8080);
  (*e->mutable_metric_labels())["pod"] = "books-5";
  e->mutable_tls_identity()->mutable_dns_like_identity()->set_name("books");
  e->mutable_protocol_hint()->mutable_opaque();
  *p.add_routes() = GoodRoute("kept", "/kept");

  Endpoint want("10.0.0.5:8080", 1);
  want.labels = {{"pod", "books-5"}};
  want.tls_identity = "books";
  want.protocol_hint = ProtocolHint::kOpaque;
  ProfileConversion got = ConvertProfile(p);
  EXPECT_THAT(got.dropped, IsEmpty());
  ASSERT_TRUE(got.config.endpoint.has_value());
  EXPECT_EQ(*got.config.endpoint, want);

  e->mutable_addr()->set_port(0);
  got = ConvertProfile(p);
  EXPECT_FALSE(got.config.endpoint.has_value());
  EXPECT_THAT(got.dropped,
              ElementsAre(AllOf(HasSubstr("endpoint dropped"),
                                HasSubstr("10.0.0.5"), HasSubstr("port 0"))));
  EXPECT_THAT(Describe(got.config.routes),
              ElementsAre(Describe(WantRoute("kept", "/kept"))));
}

// Bytes written out by hand from the field numbers in wire-linkerd.md.
TEST(ConvertProfileTest, HandEncodedWireBytes) {
  const std::string bytes(
      "\x0a\x0e"              // DestinationProfile.routes = 1
      "\x0a\x06"              // Route.condition = 1
      "\x22\x04"              // RequestMatch.path = 4
      "\x0a\x02/x"            // PathMatch.regex = 1
      "\x20\x01"              // Route.is_retryable = 4
      "\x2a\x02\x08\x01"      // Route.timeout = 5 {seconds = 1}
      "\x12\x0b"              // DestinationProfile.retry_budget = 2
      "\x0d\xcd\xcc\x4c\x3e"  // RetryBudget.retry_ratio = 1: 0.2f
      "\x10\x0a"              // RetryBudget.min_retries_per_second = 2: 10
      "\x1a\x02\x08\x0a"      // RetryBudget.ttl = 3 {seconds = 10}
      "\x1a\x09"              // DestinationProfile.dst_overrides = 3
      "\x0a\x04"
      "b:80"          // WeightedDst.authority = 1
      "\x10\x90\x4e"  // WeightedDst.weight = 2: 10000
      "\x20\x01"      // DestinationProfile.opaque_protocol = 4
      "\x2a\x01"
      "a",  // DestinationProfile.fully_qualified_name = 5
      45);
  dst::DestinationProfile p;
  ASSERT_TRUE(p.ParseFromString(bytes));
  ProfileConversion got = ConvertProfile(p);
  EXPECT_THAT(got.dropped, IsEmpty());
  Route want;
  want.condition = RequestMatch::Path("/x");
  want.is_retryable = true;
  want.timeout = absl::Seconds(1);
  EXPECT_THAT(Describe(got.config.routes), ElementsAre(Describe(want)));
  ASSERT_TRUE(got.config.retry_budget.has_value());
  EXPECT_EQ(got.config.retry_budget->retry_ratio, static_cast<double>(0.2f));
  EXPECT_EQ(got.config.retry_budget->min_retries_per_second, 10u);
  EXPECT_EQ(got.config.retry_budget->ttl, absl::Seconds(10));
  EXPECT_THAT(Describe(got.config.backends), ElementsAre("b:80*10000"));
  EXPECT_TRUE(got.config.opaque_protocol);
  EXPECT_EQ(got.config.fully_qualified_name, "a");
}

}  // namespace
}  // namespace mesh::internal::linkerd

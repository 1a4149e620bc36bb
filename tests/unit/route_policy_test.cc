// The per-route policies: response classification, retry backoff and its
// validity, the traffic split draw, and the RouteBuilder.
#include <map>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/route/classify.h"
#include "src/route/retry_policy.h"
#include "src/route/route_table.h"
#include "src/route/traffic_split.h"

namespace mesh::internal {
namespace {

using ::testing::HasSubstr;

TEST(ClassifyTest, DefaultClassesAreLinkerds) {
  for (absl::StatusCode code :
       {absl::StatusCode::kDataLoss, absl::StatusCode::kDeadlineExceeded,
        absl::StatusCode::kInternal, absl::StatusCode::kPermissionDenied,
        absl::StatusCode::kUnavailable, absl::StatusCode::kUnknown}) {
    EXPECT_TRUE(IsFailure({}, absl::Status(code, "x"), 200)) << code;
  }
  for (absl::StatusCode code :
       {absl::StatusCode::kOk, absl::StatusCode::kNotFound,
        absl::StatusCode::kInvalidArgument, absl::StatusCode::kCancelled,
        absl::StatusCode::kResourceExhausted,
        absl::StatusCode::kUnauthenticated}) {
    EXPECT_FALSE(IsFailure({}, absl::Status(code, "x"), 200)) << code;
  }
  // HTTP 5xx without a failing gRPC status.
  EXPECT_TRUE(IsFailure({}, absl::OkStatus(), 503));
  EXPECT_FALSE(IsFailure({}, absl::OkStatus(), 404));
  EXPECT_FALSE(IsFailure({}, absl::OkStatus(), 0));
}

TEST(ClassifyTest, FirstMatchingClassDecides) {
  std::vector<ResponseClass> classes = {
      {ResponseMatch::Status(200, 299), false},
      {ResponseMatch::Status(200, 200), true},  // never reached for 200
      {ResponseMatch::Any(
           {ResponseMatch::Status(404, 404), ResponseMatch::Status(429, 429)}),
       true},
  };
  // 200 with INTERNAL: the first class says success, whatever gRPC says.
  EXPECT_FALSE(IsFailure(classes, absl::InternalError("x"), 200));
  EXPECT_TRUE(IsFailure(classes, absl::OkStatus(), 404));
  EXPECT_TRUE(IsFailure(classes, absl::OkStatus(), 429));
  // No class matches: the default.
  EXPECT_TRUE(IsFailure(classes, absl::OkStatus(), 500));
  EXPECT_FALSE(IsFailure(classes, absl::OkStatus(), 302));
  // No HTTP status (the connection failed): no range matches.
  EXPECT_TRUE(IsFailure(classes, absl::UnavailableError("x"), 0));
}

TEST(ClassifyTest, NotAllAndEmptyTrees) {
  EXPECT_TRUE(MatchesResponse(ResponseMatch::All({}), 200));
  EXPECT_FALSE(MatchesResponse(ResponseMatch::Any({}), 200));
  auto not_2xx = ResponseMatch::Not(ResponseMatch::Status(200, 299));
  EXPECT_FALSE(MatchesResponse(not_2xx, 204));
  EXPECT_TRUE(MatchesResponse(not_2xx, 500));
  EXPECT_TRUE(MatchesResponse(
      ResponseMatch::All({ResponseMatch::Status(500, 599), not_2xx}), 502));
}

TEST(RouteTableTest, InvalidResponseClassesAndPoliciesAreDroppedNotTheRoute) {
  Route r;
  r.name = "R";
  r.condition = RequestMatch::All({});
  r.response_classes = {{ResponseMatch::Status(99, 200), true},
                        {ResponseMatch::Status(500, 599), true},
                        {ResponseMatch::Status(300, 200), true}};
  r.is_retryable = true;
  r.retry_policy.backoff_base = absl::Seconds(1);
  r.retry_policy.backoff_max = absl::Milliseconds(10);
  ServiceConfig c;
  c.routes = {r};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  ASSERT_EQ(t->size(), 1u);
  const CompiledRoute& route = t->Match({"POST", "/a.B/C"});
  EXPECT_EQ(route.name, "R");
  ASSERT_EQ(route.response_classes.size(), 1u);
  EXPECT_EQ(route.response_classes[0].condition.min, 500u);
  EXPECT_EQ(route.retry_policy.backoff_base, absl::ZeroDuration());
  ASSERT_EQ(dropped.size(), 3u);
  EXPECT_THAT(dropped[0], HasSubstr("backoff_max"));
  EXPECT_THAT(dropped[1], HasSubstr("99-200"));
  EXPECT_THAT(dropped[2], HasSubstr("300-200"));
}

TEST(RetryPolicyTest, ValidationNamesTheField) {
  RetryPolicy p;
  EXPECT_TRUE(ValidateRetryPolicy(p).ok());
  p.backoff_base = absl::Milliseconds(-1);
  EXPECT_THAT(ValidateRetryPolicy(p).message(), HasSubstr("backoff_base"));
  p.backoff_base = absl::Milliseconds(25);
  p.backoff_max = absl::InfiniteDuration();
  EXPECT_THAT(ValidateRetryPolicy(p).message(), HasSubstr("backoff_max"));
  p.backoff_max = absl::Milliseconds(10);
  EXPECT_THAT(ValidateRetryPolicy(p).message(), HasSubstr("below"));
  p.backoff_max = absl::Milliseconds(25);
  EXPECT_TRUE(ValidateRetryPolicy(p).ok());
  p.retry_on_http_status = {{500, 504}, {429, 429}};
  EXPECT_TRUE(ValidateRetryPolicy(p).ok());
  p.retry_on_http_status = {{500, 504}, {99, 200}};
  EXPECT_THAT(ValidateRetryPolicy(p).message(),
              HasSubstr("retry_on_http_status range 99-200"));
  p.retry_on_http_status = {{504, 500}};
  EXPECT_THAT(ValidateRetryPolicy(p).message(), HasSubstr("504-500"));
  p.retry_on_http_status.clear();
  p.per_try_timeout = absl::ZeroDuration();
  EXPECT_THAT(ValidateRetryPolicy(p).message(),
              HasSubstr("retry_policy.per_try_timeout 0 must be > 0"));
  p.per_try_timeout = absl::Milliseconds(100);
  EXPECT_TRUE(ValidateRetryPolicy(p).ok());
}

TEST(RetryPolicyTest, BackoffIsFullJitterUnderADoublingCeiling) {
  RetryPolicy p;
  p.backoff_base = absl::Milliseconds(10);
  p.backoff_max = absl::Milliseconds(50);
  absl::BitGen gen;
  // Retry n waits within [0, min(10 ms × 2^(n-1), 50 ms)]; over many draws
  // the largest comes close to the ceiling and the smallest close to 0.
  const absl::Duration ceilings[] = {
      absl::Milliseconds(10), absl::Milliseconds(20), absl::Milliseconds(40),
      absl::Milliseconds(50), absl::Milliseconds(50)};
  for (int retry = 1; retry <= 5; ++retry) {
    absl::Duration lo = absl::InfiniteDuration(), hi = absl::ZeroDuration();
    for (int i = 0; i < 2000; ++i) {
      absl::Duration d = RetryBackoff(p, retry, gen);
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
    absl::Duration ceiling = ceilings[retry - 1];
    EXPECT_GE(lo, absl::ZeroDuration());
    EXPECT_LE(hi, ceiling) << "retry " << retry;
    EXPECT_GT(hi, ceiling * 0.95) << "retry " << retry;
    EXPECT_LT(lo, ceiling * 0.05) << "retry " << retry;
  }
}

TEST(RetryPolicyTest, ZeroBaseMeansNoWaitAndZeroMaxMeansTenTimesBase) {
  absl::BitGen gen;
  RetryPolicy none;
  EXPECT_EQ(RetryBackoff(none, 3, gen), absl::ZeroDuration());
  RetryPolicy p;
  p.backoff_base = absl::Milliseconds(25);  // xDS default max: 250 ms
  absl::Duration hi = absl::ZeroDuration();
  for (int i = 0; i < 2000; ++i) hi = std::max(hi, RetryBackoff(p, 20, gen));
  EXPECT_LE(hi, absl::Milliseconds(250));
  EXPECT_GT(hi, absl::Milliseconds(240));
}

TEST(TrafficSplitTest, DrawFollowsWeightsAndSkipsExcluded) {
  std::vector<std::string> dropped;
  auto split = TrafficSplit::Build({{"v1.books:80", 9000},
                                    {"v2.books:80", 1000},
                                    {"bad", 5},
                                    {"v3.books:80", 0},
                                    {"v1.books:80", 0}},
                                   &dropped);
  ASSERT_NE(split, nullptr);
  ASSERT_EQ(split->size(), 2u);
  EXPECT_EQ(dropped.size(), 3u);
  absl::BitGen gen;
  int counts[2] = {0, 0};
  const int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) ++counts[split->Draw(gen, 0)];
  // 10% ± 6σ (σ = sqrt(n·p·(1-p)) ≈ 95).
  EXPECT_NEAR(counts[1], kDraws / 10, 570);
  EXPECT_EQ(split->Draw(gen, 0b01), 1u);  // v1 excluded: always v2
  EXPECT_EQ(split->Draw(gen, 0b11), split->size());
}

TEST(HeaderModifierTest, AddThenSetThenRemove) {
  HeaderModifier m;
  m.add = {{"x-a", "1"}, {"x-b", "new"}};
  m.set = {{"x-b", "only"}, {"x-c", "3"}};
  m.remove = {"x-gone"};
  Metadata headers = {{"x-b", "old1"},
                      {"x-gone", "1"},
                      {"x-b", "old2"},
                      {"x-keep", "k"},
                      {"x-gone", "2"}};
  ApplyHeaderModifier(m, &headers);
  // set replaces every value of its name (the added one too) with one; a
  // name not sent is added; remove drops every value.
  EXPECT_THAT(headers, ::testing::ElementsAre(std::make_pair("x-b", "only"),
                                              std::make_pair("x-keep", "k"),
                                              std::make_pair("x-a", "1"),
                                              std::make_pair("x-c", "3")));
  // Removing what add added: remove comes last.
  HeaderModifier r;
  r.add = {{"x-a", "1"}};
  r.remove = {"x-a"};
  Metadata none;
  ApplyHeaderModifier(r, &none);
  EXPECT_TRUE(none.empty());
}

TEST(HeaderModifierTest, BadNamesAndValuesAreNamedAndDroppedFromTheRoute) {
  HeaderModifier m;
  m.add = {{"X-Upper", "1"}};
  EXPECT_THAT(ValidateHeaderModifier(m).message(), HasSubstr("add: "));
  m.add = {{"grpc-timeout", "1S"}};  // gRPC's own
  EXPECT_FALSE(ValidateHeaderModifier(m).ok());
  m.add.clear();
  m.set = {{"x-a", "line\nbreak"}};
  EXPECT_THAT(ValidateHeaderModifier(m).message(), HasSubstr("set: "));
  m.set.clear();
  m.remove = {":path"};
  EXPECT_THAT(ValidateHeaderModifier(m).message(),
              HasSubstr("':path' is not a metadata name"));
  ServiceConfig c;
  Route route;
  route.name = "r";
  route.request_headers = m;
  route.response_headers.add = {{"x-ok", "1"}};
  c.routes.push_back(route);
  std::vector<std::string> dropped;
  auto table = RouteTable::Build(c, &dropped);
  ASSERT_EQ(table->size(), 1u);
  EXPECT_TRUE(table->At(0).request_headers.empty());
  EXPECT_EQ(table->At(0).response_headers.add.size(), 1u);
  EXPECT_THAT(dropped, ::testing::ElementsAre(
                           HasSubstr("request header modifier dropped")));
}

TEST(TrafficSplitTest, FirstAvailableDrawsTheFirstNotExcludedInOrder) {
  auto split = TrafficSplit::Build(
      {{"a.b:1", 1}, {"c.d:1", 1000}, {"e.f:1", 1}}, nullptr,
      /*first_available=*/true);
  ASSERT_NE(split, nullptr);
  absl::BitGen gen;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(split->Draw(gen, 0), 0u);
  EXPECT_EQ(split->Draw(gen, 0b001), 1u);
  EXPECT_EQ(split->Draw(gen, 0b011), 2u);
  EXPECT_EQ(split->Draw(gen, 0b101), 1u);
  EXPECT_EQ(split->Draw(gen, 0b111), split->size());
}

TEST(TrafficSplitTest, ARoutesFirstAvailableBackendsCompileSo) {
  ServiceConfig c;
  Route r;
  r.name = "failover";
  r.backends = {{"a.b:1", 1}, {"c.d:1", 1000}};
  r.backends_first_available = true;
  c.routes.push_back(r);
  auto table = RouteTable::Build(c, nullptr);
  ASSERT_NE(table->At(0).split, nullptr);
  absl::BitGen gen;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(table->At(0).split->Draw(gen, 0), 0u);
  EXPECT_EQ(table->At(0).split->Draw(gen, 0b01), 1u);
}

TEST(TrafficSplitTest, ABackendWithAnInvalidFilterIsDroppedNamingIt) {
  WeightedBackend good("a.b:1", 1);
  good.request_headers.set = {{"x-ok", "1"}};
  WeightedBackend bad("c.d:1", 1);
  bad.response_headers.add = {{"bad name", "1"}};
  std::vector<std::string> dropped;
  auto split = TrafficSplit::Build({good, bad}, &dropped);
  ASSERT_NE(split, nullptr);
  ASSERT_EQ(split->size(), 1u);
  EXPECT_EQ(split->backends()[0].request_headers.set, good.request_headers.set);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_THAT(dropped[0], HasSubstr("backend 'c.d:1' dropped: its filters:"));
}

TEST(TrafficSplitTest, RepeatsMergeAndNothingLeftIsNull) {
  auto merged = TrafficSplit::Build({{"a.b:1", 1}, {"a.b:1", 2}}, nullptr);
  ASSERT_NE(merged, nullptr);
  ASSERT_EQ(merged->size(), 1u);
  EXPECT_EQ(merged->backends()[0].weight, 3u);
  EXPECT_EQ(TrafficSplit::Build({{"a.b:1", 0}}, nullptr), nullptr);
  EXPECT_EQ(TrafficSplit::Build({}, nullptr), nullptr);
}

// Weights whose sum passes 32 bits once wrapped: four entries of 2^30 for
// one authority summed to 0 (every call failed), and 4294967295 + 2 against
// 1 to a 50/50 split.
TEST(TrafficSplitTest, MergedWeightsAreSummedWideAndNormalised) {
  auto four = TrafficSplit::Build({{"a.b:1", 1u << 30},
                                   {"a.b:1", 1u << 30},
                                   {"a.b:1", 1u << 30},
                                   {"a.b:1", 1u << 30}},
                                  nullptr);
  ASSERT_NE(four, nullptr);
  ASSERT_EQ(four->size(), 1u);
  EXPECT_GT(four->backends()[0].weight, 0u);
  absl::BitGen gen;
  EXPECT_EQ(four->Draw(gen, 0), 0u);

  auto lopsided = TrafficSplit::Build(
      {{"a.b:1", 4294967295u}, {"a.b:1", 2}, {"c.d:1", 1}}, nullptr);
  ASSERT_NE(lopsided, nullptr);
  ASSERT_EQ(lopsided->size(), 2u);
  // 4294967297 : 1 scaled into 32 bits, the small one kept at 1.
  EXPECT_EQ(lopsided->backends()[0].weight, 4294967295u);
  EXPECT_EQ(lopsided->backends()[1].weight, 1u);
  int second = 0;
  for (int i = 0; i < 100000; ++i) second += lopsided->Draw(gen, 0) == 1;
  EXPECT_LE(second, 5);  // expected 2.3e-5 of draws

  // Proportions survive the scaling: 3 × 2^32 against 2^32.
  auto scaled = TrafficSplit::Build({{"a.b:1", 4294967295u},
                                     {"a.b:1", 4294967295u},
                                     {"a.b:1", 4294967295u},
                                     {"c.d:1", 4294967295u}},
                                    nullptr);
  ASSERT_NE(scaled, nullptr);
  EXPECT_EQ(scaled->backends()[0].weight, 4294967295u);
  EXPECT_NEAR(scaled->backends()[1].weight, 4294967295.0 / 3, 1);
  // 64 backends of the largest weight: the draw's total is 64 × 2^32.
  std::vector<WeightedBackend> many;
  for (int i = 0; i < 64; ++i) {
    many.push_back({absl::StrCat("b", i, ".x:1"), 4294967295u});
  }
  auto wide = TrafficSplit::Build(many, nullptr);
  ASSERT_EQ(wide->size(), 64u);
  std::vector<int> counts(64);
  for (int i = 0; i < 64000; ++i) ++counts[wide->Draw(gen, 0)];
  for (int c : counts) EXPECT_NEAR(c, 1000, 200);
}

TEST(RouteBuilderTest, BuildsARouteThatMatchesItsGrpcMethodOnly) {
  RetryPolicy policy;
  policy.max_attempts = 3;
  ServiceConfig c;
  c.routes = {RouteBuilder("GetBook")
                  .GrpcMethod("books.Library", "GetBook")
                  .Timeout(absl::Milliseconds(300))
                  .Retryable(policy)
                  .Classify(ResponseMatch::Status(500, 599), true)
                  .Label("team", "books")
                  .Build(),
              RouteBuilder("Posts").HttpMethod("POST").Build()};
  EXPECT_EQ(c.routes[0].condition.kind, RequestMatch::Kind::kPath);
  EXPECT_EQ(c.routes[0].condition.path_regex, "/books\\.Library/GetBook");
  auto t = RouteTable::Build(c, nullptr);
  ASSERT_EQ(t->size(), 2u);
  const CompiledRoute& get = t->Match({"POST", "/books.Library/GetBook"});
  EXPECT_EQ(get.name, "GetBook");
  EXPECT_EQ(get.timeout, absl::Milliseconds(300));
  EXPECT_TRUE(get.is_retryable);
  EXPECT_EQ(get.retry_policy.max_attempts, 3u);
  EXPECT_EQ(get.metrics_labels.at("team"), "books");
  // The dot is escaped: "booksXLibrary" is not the same service.
  EXPECT_EQ(t->Match({"POST", "/booksXLibrary/GetBook"}).name, "Posts");
  EXPECT_TRUE(t->Match({"GET", "/booksXLibrary/GetBook"}).is_default);
  // No condition at all: every request.
  EXPECT_EQ(RouteBuilder("All").Build().condition.kind,
            RequestMatch::Kind::kAll);
  EXPECT_TRUE(RouteBuilder("All").Build().condition.children.empty());
}

TEST(RouteTableTest, MetricsNamesAndTapLabels) {
  ServiceConfig c;
  Route named = RouteBuilder("GetBook").Label("team", "books").Build();
  Route labelled;
  labelled.metrics_labels = {{"route", "FromLabel"}};
  labelled.condition = RequestMatch::Method("GET");
  Route anonymous;
  anonymous.condition = RequestMatch::Method("PUT");
  named.condition = RequestMatch::Method("POST");
  c.routes = {named, labelled, anonymous};
  auto t = RouteTable::Build(c, nullptr);
  EXPECT_EQ(t->Match({"POST", "/a.B/C"}).metrics_name, "GetBook");
  EXPECT_EQ(t->Match({"GET", "/a.B/C"}).metrics_name, "FromLabel");
  EXPECT_EQ(t->Match({"PUT", "/a.B/C"}).metrics_name, "#2");
  EXPECT_EQ(t->Match({"HEAD", "/a.B/C"}).metrics_name, "[default]");
  using Labels = std::map<std::string, std::string>;
  EXPECT_EQ(t->Match({"POST", "/a.B/C"}).labels,
            (Labels{{"route", "GetBook"}, {"team", "books"}}));
  EXPECT_EQ(t->Match({"HEAD", "/a.B/C"}).labels,
            (Labels{{"route", "[default]"}}));
  EXPECT_EQ(&t->At(t->size()), &t->Match({"HEAD", "/a.B/C"}));
}

// --- a route's own traffic split ---------------------------------------------

Route WithBackends(std::string name, std::vector<WeightedBackend> backends) {
  Route r;
  r.name = std::move(name);
  r.condition = RequestMatch::Method("POST");
  r.backends = std::move(backends);
  return r;
}

TEST(RouteSplitTest, ARoutesBackendsAreCompiledIntoItsOwnSplit) {
  ServiceConfig c;
  c.routes = {WithBackends("Split", {{"v1.books:80", 9}, {"v2.books:80", 1}})};
  c.routes.push_back(RouteBuilder("Plain").HttpMethod("GET").Build());
  c.backends = {{"other.books:80", 1}};  // the config's, not the route's
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  EXPECT_TRUE(dropped.empty());
  ASSERT_EQ(t->size(), 2u);
  const CompiledRoute& split = t->Match({"POST", "/a.B/C"});
  ASSERT_NE(split.split, nullptr);
  ASSERT_EQ(split.split->size(), 2u);
  EXPECT_EQ(split.split->backends()[0].authority, "v1.books:80");
  EXPECT_EQ(split.split->backends()[0].weight, 9u);
  EXPECT_TRUE(split.split->backends()[0].cluster.empty());
  EXPECT_EQ(split.split->backends()[1].authority, "v2.books:80");
  EXPECT_EQ(split.split->backends()[1].weight, 1u);
  // Without backends of its own a route has no split: the config's applies.
  EXPECT_EQ(t->Match({"GET", "/a.B/C"}).split, nullptr);
  EXPECT_EQ(t->Match({"PUT", "/a.B/C"}).split, nullptr);  // the default route
}

TEST(RouteSplitTest, ClusterBackendsAreAccepted) {
  ServiceConfig c;
  c.routes = {
      WithBackends("Clusters", {WeightedBackend::Cluster("books-v1", 3),
                                WeightedBackend::Cluster("books-v2", 1)})};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  EXPECT_TRUE(dropped.empty());
  const CompiledRoute& r = t->Match({"POST", "/a.B/C"});
  ASSERT_NE(r.split, nullptr);
  ASSERT_EQ(r.split->size(), 2u);
  EXPECT_EQ(r.split->backends()[0].cluster, "books-v1");
  EXPECT_TRUE(r.split->backends()[0].authority.empty());
  EXPECT_EQ(r.split->backends()[0].weight, 3u);
  EXPECT_EQ(r.split->backends()[1].cluster, "books-v2");
  EXPECT_EQ(r.split->backends()[1].weight, 1u);
  EXPECT_EQ(TrafficSplit::NameOf(r.split->backends()[0]), "books-v1");
  // A cluster name need not be name:port.
  EXPECT_NE(TrafficSplit::Build({WeightedBackend::Cluster("outbound|80||x", 1)},
                                nullptr),
            nullptr);
}

TEST(RouteSplitTest, InvalidBackendsAreDroppedWithALineNamingTheRoute) {
  WeightedBackend both = WeightedBackend::Cluster("books-v1", 5);
  both.authority = "books.default:80";
  const std::string longest(TrafficSplit::kMaxClusterName, 'c');
  const std::string too_long(TrafficSplit::kMaxClusterName + 1, 'd');
  ServiceConfig c;
  c.routes = {WithBackends("R", {both,
                                 WeightedBackend::Cluster(too_long, 1),
                                 WeightedBackend::Cluster("zero", 0),
                                 WeightedBackend::Cluster(longest, 2),
                                 {"v2.books:80", 1}})};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  ASSERT_EQ(t->size(), 1u);  // the route is kept
  const CompiledRoute& r = t->At(0);
  ASSERT_NE(r.split, nullptr);
  ASSERT_EQ(r.split->size(), 2u);
  EXPECT_EQ(r.split->backends()[0].cluster, longest);  // at the limit: kept
  EXPECT_EQ(r.split->backends()[1].authority, "v2.books:80");
  ASSERT_EQ(dropped.size(), 3u);
  EXPECT_THAT(dropped[0],
              HasSubstr("route 0 'R': backend 'books.default:80' dropped: it "
                        "names cluster 'books-v1' too"));
  EXPECT_THAT(dropped[1], HasSubstr("route 0 'R': backend cluster '"));
  EXPECT_THAT(dropped[1], HasSubstr("dropped: its name is longer than 1024 "
                                    "bytes"));
  EXPECT_THAT(dropped[1], HasSubstr(std::string(64, 'd')));
  EXPECT_THAT(dropped[1], ::testing::Not(HasSubstr(std::string(65, 'd'))));
  EXPECT_THAT(dropped[2],
              HasSubstr("route 0 'R': backend 'zero' dropped: weight 0"));
}

TEST(RouteSplitTest, AllBackendsDroppedLeavesNoSplit) {
  ServiceConfig c;
  c.routes = {WithBackends("R", {{"no-port", 1}, {"a.b:1", 0}})};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  ASSERT_EQ(t->size(), 1u);
  EXPECT_EQ(t->At(0).split, nullptr);
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_THAT(dropped[0], HasSubstr("route 0 'R': backend 'no-port' dropped"));
  EXPECT_THAT(dropped[1], HasSubstr("route 0 'R': backend 'a.b:1' dropped: "
                                    "weight 0"));
}

TEST(RouteSplitTest, RepeatedClustersMergeButAClusterIsNotAnAuthority) {
  auto split = TrafficSplit::Build({WeightedBackend::Cluster("a.b:1", 1),
                                    {"a.b:1", 4},
                                    WeightedBackend::Cluster("a.b:1", 2),
                                    {"a.b:1", 8}},
                                   nullptr);
  ASSERT_NE(split, nullptr);
  ASSERT_EQ(split->size(), 2u);
  EXPECT_EQ(split->backends()[0].cluster, "a.b:1");
  EXPECT_TRUE(split->backends()[0].authority.empty());
  EXPECT_EQ(split->backends()[0].weight, 3u);
  EXPECT_EQ(split->backends()[1].authority, "a.b:1");
  EXPECT_TRUE(split->backends()[1].cluster.empty());
  EXPECT_EQ(split->backends()[1].weight, 12u);
}

// --- a route's fault injection ----------------------------------------------

TEST(RouteFaultTest, TheDefaultFaultInjectionIsNone) {
  ServiceConfig c;
  c.routes = {RouteBuilder("R").Build()};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  EXPECT_TRUE(dropped.empty());
  ASSERT_EQ(t->size(), 1u);
  EXPECT_FALSE(t->At(0).has_fault);
  EXPECT_FALSE(t->At(t->size()).has_fault);  // the default route
}

TEST(RouteFaultTest, AValidFaultIsCompiledIntoTheRoute) {
  Route r = RouteBuilder("R").Build();
  r.fault.delay_per_million = 1'000'000;
  r.fault.delay = absl::Milliseconds(20);
  r.fault.abort_per_million = 250'000;
  r.fault.abort_code = absl::StatusCode::kUnavailable;
  r.fault.abort_message = "chaos";
  r.fault.max_active_faults = 3;
  Route headers_only = RouteBuilder("H").HttpMethod("GET").Build();
  headers_only.fault.delay_from_header = true;
  ServiceConfig c;
  c.routes = {r, headers_only};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  EXPECT_TRUE(dropped.empty());
  ASSERT_EQ(t->size(), 2u);
  const CompiledRoute& route = t->At(0);
  ASSERT_TRUE(route.has_fault);
  EXPECT_EQ(route.fault.delay_per_million, 1'000'000u);
  EXPECT_EQ(route.fault.delay, absl::Milliseconds(20));
  EXPECT_EQ(route.fault.abort_per_million, 250'000u);
  EXPECT_EQ(route.fault.abort_code, absl::StatusCode::kUnavailable);
  EXPECT_EQ(route.fault.abort_message, "chaos");
  EXPECT_EQ(route.fault.max_active_faults, 3u);
  // A header delay alone, with no share configured, is a fault too.
  EXPECT_TRUE(t->At(1).has_fault);
  EXPECT_TRUE(t->At(1).fault.delay_from_header);
}

TEST(RouteFaultTest, AnInvalidFaultIsDroppedWithALineAndTheRouteKept) {
  std::vector<FaultInjection> bad(7);
  bad[0].delay_per_million = 1'000'001;
  bad[0].delay = absl::Milliseconds(1);
  bad[1].abort_per_million = 1'000'001;
  bad[1].abort_code = absl::StatusCode::kUnavailable;
  bad[2].delay_per_million = 1;
  bad[2].delay = absl::Milliseconds(-1);
  bad[3].delay_per_million = 1;
  bad[3].delay = absl::InfiniteDuration();
  bad[4].abort_per_million = 1;  // an abort with OK
  bad[5].abort_per_million = 1;
  bad[5].abort_code = static_cast<absl::StatusCode>(17);
  bad[6].abort_code = static_cast<absl::StatusCode>(-1);
  ServiceConfig c;
  for (size_t i = 0; i < bad.size(); ++i) {
    Route r = RouteBuilder(absl::StrCat("F", i)).Build();
    r.timeout = absl::Milliseconds(100 + i);
    r.fault = bad[i];
    c.routes.push_back(r);
  }
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  ASSERT_EQ(t->size(), bad.size());
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(t->At(i).name, absl::StrCat("F", i));
    EXPECT_EQ(t->At(i).timeout, absl::Milliseconds(100 + i));  // kept as is
    EXPECT_FALSE(t->At(i).has_fault) << i;
  }
  ASSERT_EQ(dropped.size(), bad.size());
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_THAT(dropped[i], HasSubstr(absl::StrCat("route ", i, " 'F", i,
                                                   "': fault dropped: ")));
  }
  EXPECT_THAT(dropped[0], HasSubstr("above 1,000,000 per million"));
  EXPECT_THAT(dropped[1], HasSubstr("above 1,000,000 per million"));
  EXPECT_THAT(dropped[2], HasSubstr("delay -1ms is not a finite duration"));
  EXPECT_THAT(dropped[3], HasSubstr("delay inf is not a finite duration"));
  EXPECT_THAT(dropped[4], HasSubstr("an abort with the code OK"));
  EXPECT_THAT(dropped[5], HasSubstr("abort code 17 is not a gRPC status"));
  EXPECT_THAT(dropped[6], HasSubstr("abort code -1 is not a gRPC status"));
}

TEST(RouteFaultTest, SharesOfExactlyAMillionAndCode16AreValid) {
  Route r = RouteBuilder("R").Build();
  r.fault.delay_per_million = 1'000'000;
  r.fault.abort_per_million = 1'000'000;
  r.fault.abort_code = absl::StatusCode::kUnauthenticated;  // 16
  ServiceConfig c;
  c.routes = {r};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  EXPECT_TRUE(dropped.empty());
  EXPECT_TRUE(t->At(0).has_fault);
}

// xDS's header_abort (src/discovery/xds/xds_convert.cc) sets
// abort_from_header and the abort share, and no code: the code comes from
// the request's x-envoy-fault-abort-grpc-request header.
TEST(RouteFaultTest, AHeaderAbortNeedsNoConfiguredCode) {
  Route r = RouteBuilder("R").Build();
  r.fault.abort_from_header = true;
  r.fault.abort_per_million = 1'000'000;
  ServiceConfig c;
  c.routes = {r};
  std::vector<std::string> dropped;
  auto t = RouteTable::Build(c, &dropped);
  EXPECT_TRUE(dropped.empty()) << (dropped.empty() ? "" : dropped.front());
  EXPECT_TRUE(t->At(0).has_fault);
  EXPECT_TRUE(t->At(0).fault.abort_from_header);
  EXPECT_EQ(t->At(0).fault.abort_per_million, 1'000'000u);
}

}  // namespace
}  // namespace mesh::internal

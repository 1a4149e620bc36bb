// Metrics: histogram buckets, response cells, the registry's lifetimes, and
// the exposition read back by the independent test parser.
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/balancer.h"
#include "mesh/transport.h"
#include "src/balance/balancer.h"
#include "src/base/mutex.h"
#include "src/channel/destination.h"
#include "src/metrics/endpoint_metrics.h"
#include "src/metrics/latency_histogram.h"
#include "src/metrics/metrics_registry.h"
#include "src/metrics/response_counters.h"
#include "src/metrics/route_metrics.h"
#include "src/model/endpoint_tls.h"
#include "src/tap/tap_hub.h"
#include "tests/support/fake_transports.h"
#include "tests/support/prometheus_text.h"

namespace mesh::internal {
namespace {

using ::mesh::testing::FakeTransport;
using ::mesh::testing::FakeWire;
using ::mesh::testing::ParsePrometheusText;
using ::mesh::testing::PrometheusLabels;
using ::mesh::testing::PrometheusText;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Index of the bucket bounded by `le_ms` (kLatencyBoundsMs.size() for +Inf).
size_t BucketIndex(int64_t le_ms) {
  return static_cast<size_t>(
      std::find(kLatencyBoundsMs.begin(), kLatencyBoundsMs.end(), le_ms) -
      kLatencyBoundsMs.begin());
}
constexpr size_t kInf = kLatencyBoundsMs.size();

PrometheusText ParseOrDie(const std::string& text) {
  absl::StatusOr<PrometheusText> parsed = ParsePrometheusText(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  return parsed.ok() ? *std::move(parsed) : PrometheusText();
}

TEST(LatencyHistogramTest, OneMillisecondIsInTheFirstBucket) {
  LatencyHistogram h;
  h.Observe(absl::Milliseconds(1));
  HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.cumulative_counts[BucketIndex(1)], 1u);
  EXPECT_EQ(s.count, 1u);
  EXPECT_EQ(s.sum_ms, 1.0);
}

TEST(LatencyHistogramTest, AFractionGoesToTheNextBound) {
  LatencyHistogram h;
  h.Observe(absl::Microseconds(1500));
  HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.cumulative_counts[BucketIndex(1)], 0u);
  EXPECT_EQ(s.cumulative_counts[BucketIndex(2)], 1u);
  EXPECT_EQ(s.sum_ms, 1.5);
}

TEST(LatencyHistogramTest, PastTheLastBoundOnlyInInf) {
  LatencyHistogram h;
  h.Observe(absl::Seconds(60));
  h.Observe(absl::Milliseconds(50000) + absl::Nanoseconds(1));
  HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.cumulative_counts[BucketIndex(50000)], 0u);
  EXPECT_EQ(s.cumulative_counts[kInf], 2u);
  EXPECT_EQ(s.count, 2u);
}

TEST(LatencyHistogramTest, BoundsAreInclusiveAndNegativeIsZero) {
  LatencyHistogram h;
  h.Observe(absl::Milliseconds(50000));
  h.Observe(absl::Milliseconds(10));
  h.Observe(absl::ZeroDuration());
  h.Observe(absl::Milliseconds(-5));
  HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.cumulative_counts[BucketIndex(1)], 2u);
  EXPECT_EQ(s.cumulative_counts[BucketIndex(5)], 2u);
  EXPECT_EQ(s.cumulative_counts[BucketIndex(10)], 3u);
  EXPECT_EQ(s.cumulative_counts[BucketIndex(40000)], 3u);
  EXPECT_EQ(s.cumulative_counts[BucketIndex(50000)], 4u);
  EXPECT_EQ(s.sum_ms, 50010.0);
}

TEST(LatencyHistogramTest, CountsAreCumulativeAndSumIsInMilliseconds) {
  LatencyHistogram h;
  for (int ms : {1, 3, 7, 250, 250}) h.Observe(absl::Milliseconds(ms));
  HistogramSnapshot s = h.Snapshot();
  std::vector<uint64_t> at;
  for (int64_t le : {1, 2, 3, 5, 10, 200, 300, 50000}) {
    at.push_back(s.cumulative_counts[BucketIndex(le)]);
  }
  EXPECT_THAT(at, ElementsAre(1, 1, 2, 2, 3, 3, 5, 5));
  EXPECT_EQ(s.cumulative_counts[kInf], 5u);
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.sum_ms, 511.0);
}

TEST(ResponseCountersTest, CountsByClassAndCode) {
  ResponseCounters r;
  r.Record(false, 0);
  r.Record(false, 0);
  r.Record(true, 14);
  r.Record(true, 2);
  r.Record(false, 16);
  EXPECT_EQ(r.Count(false, 0), 2u);
  EXPECT_EQ(r.Count(true, 0), 0u);
  EXPECT_EQ(r.Count(true, 14), 1u);
  EXPECT_EQ(r.Count(false, 14), 0u);
  EXPECT_EQ(r.Count(false, 16), 1u);
}

TEST(ResponseCountersTest, CodesOutOfRangeShareOneCellPerClass) {
  ResponseCounters r;
  r.Record(true, 17);
  r.Record(true, -3);
  r.Record(false, 1000);
  EXPECT_EQ(r.Count(true, kOtherGrpcCode), 2u);
  EXPECT_EQ(r.Count(true, 99), 2u);
  EXPECT_EQ(r.Count(false, kOtherGrpcCode), 1u);
  EXPECT_EQ(r.Count(true, 16), 0u);
}

TEST(ResponseCountersTest, IteratesNonZeroCellsFailuresFirst) {
  ResponseCounters r;
  r.Record(false, 0);
  r.Record(false, 0);
  r.Record(false, 42);
  r.Record(true, 14);
  r.Record(true, 2);
  r.Record(true, -1);
  std::vector<std::string> cells;
  r.ForEachNonZero([&](bool failure, int code, uint64_t count) {
    cells.push_back(absl::StrCat(failure ? "f" : "s", code, "=", count));
  });
  EXPECT_THAT(cells, ElementsAre("f2=1", "f14=1", "f-1=1", "s0=2", "s-1=1"));
}

TEST(RouteMetricsTest, RecordMethodsFeedTheirFields) {
  RouteMetrics m;
  m.RecordRequest();
  m.RecordAttempt(/*is_retry=*/false);
  m.RecordAttempt(/*is_retry=*/true);
  m.RecordRetrySkipped(RetrySkipReason::kBudget);
  m.RecordRetrySkipped(RetrySkipReason::kMaxAttempts);
  m.RecordRetrySkipped(RetrySkipReason::kMaxAttempts);
  m.RecordResponse(/*failure=*/true, /*grpc_code=*/4, absl::Milliseconds(300));
  EXPECT_EQ(m.requests.load(), 1u);
  EXPECT_EQ(m.actual_requests.load(), 2u);
  EXPECT_EQ(m.retries.load(), 1u);
  EXPECT_EQ(m.retries_skipped_budget.load(), 1u);
  EXPECT_EQ(m.retries_skipped_max_attempts.load(), 2u);
  EXPECT_EQ(m.timeouts.load(), 1u);
  EXPECT_EQ(m.responses.Count(true, 4), 1u);
  EXPECT_EQ(m.latency.Snapshot().cumulative_counts[BucketIndex(300)], 1u);

  m.RecordResponse(/*failure=*/true, /*grpc_code=*/14, absl::Milliseconds(1));
  EXPECT_EQ(m.timeouts.load(), 1u);
}

TEST(MetricsRegistryTest, RouteIsGetOrCreate) {
  MetricsRegistry registry;
  std::shared_ptr<RouteMetrics> a = registry.Route("books:8080", "GetBook");
  EXPECT_EQ(registry.Route("books:8080", "GetBook"), a);
  EXPECT_NE(registry.Route("books:8080", "[default]"), a);
  EXPECT_NE(registry.Route("authors:8080", "GetBook"), a);

  // Kept for the registry's lifetime, even when no one else holds it.
  RouteMetrics* raw = a.get();
  a->RecordRequest();
  a.reset();
  EXPECT_EQ(registry.Route("books:8080", "GetBook").get(), raw);
  EXPECT_EQ(raw->requests.load(), 1u);
}

TEST(MetricsRegistryTest, IdentityLabelsEveryRouteSeries) {
  MetricsRegistry registry;
  const LabelPairs identity = {{"parent_kind", "Service"},
                               {"route_kind", "GRPCRoute"},
                               {"route_name", "books-route"}};
  std::shared_ptr<RouteMetrics> r =
      registry.Route("books:8080", "books-route", identity);
  EXPECT_EQ(registry.Route("books:8080", "books-route", identity), r);
  EXPECT_NE(registry.Route("books:8080", "books-route"), r);  // another series
  r->RecordRequest();
  r->RecordAttempt(/*is_retry=*/false);
  r->RecordRetrySkipped(RetrySkipReason::kBudget);
  r->RecordResponse(false, 0, absl::Milliseconds(3));
  PrometheusText t = ParseOrDie(registry.RenderPrometheus({}));
  const PrometheusLabels labels = {{"route", "books-route"},
                                   {"parent_kind", "Service"},
                                   {"route_kind", "GRPCRoute"},
                                   {"route_name", "books-route"}};
  for (const char* sample :
       {"route_request_total", "route_actual_request_total",
        "route_response_total", "route_response_latency_ms_count",
        "route_response_latency_ms_bucket", "route_retry_skipped_total"}) {
    EXPECT_GE(t.Value(sample, labels).value_or(0), 1) << sample;
  }
  // The series without identity is its own, at 0.
  EXPECT_EQ(t.Samples("route_request_total", {{"route", "books-route"}}).size(),
            2u);
}

TEST(MetricsRegistryTest, EndpointIsSharedWhileHeld) {
  MetricsRegistry registry;
  std::shared_ptr<EndpointMetrics> e =
      registry.Endpoint("books:8080", "10.0.0.1:8080");
  EXPECT_EQ(registry.Endpoint("books:8080", "10.0.0.1:8080"), e);
  EXPECT_NE(registry.Endpoint("books:8080", "10.0.0.2:8080"), e);
  EXPECT_NE(registry.Endpoint("authors:8080", "10.0.0.1:8080"), e);
}

TEST(MetricsRegistryTest, EndpointLeavesTheOutputWithItsLastHolder) {
  MetricsRegistry registry;
  std::shared_ptr<EndpointMetrics> e =
      registry.Endpoint("books:8080", "10.0.0.1:8080");
  e->RecordAttempt();
  e->RecordResponse(false, 0);
  PrometheusText before = ParseOrDie(registry.RenderPrometheus({}));
  EXPECT_EQ(
      before.Value("endpoint_request_total", {{"endpoint", "10.0.0.1:8080"}}),
      1);
  EXPECT_EQ(
      before.Value("endpoint_response_total", {{"endpoint", "10.0.0.1:8080"}}),
      1);

  e.reset();
  PrometheusText after = ParseOrDie(registry.RenderPrometheus({}));
  EXPECT_EQ(after.Value("endpoint_request_total"), std::nullopt);
  EXPECT_EQ(after.Value("endpoint_response_total"), std::nullopt);
  ASSERT_NE(after.Family("endpoint_request_total"), nullptr);

  // Back again: a fresh record.
  e = registry.Endpoint("books:8080", "10.0.0.1:8080");
  EXPECT_EQ(e->requests.load(), 0u);
}

TEST(MetricsRegistryTest, ExpiredEndpointsArePruned) {
  MetricsRegistry registry;
  std::vector<std::shared_ptr<EndpointMetrics>> live;
  for (int i = 0; i < 100; ++i) {
    live.push_back(registry.Endpoint("a", absl::StrCat("10.0.0.", i, ":80")));
  }
  for (int i = 0; i < 10000; ++i) {
    registry.Endpoint("a", absl::StrCat("10.1.", i / 250, ".", i % 250, ":80"));
  }
  EXPECT_LE(registry.EndpointEntriesForTest(), 2 * live.size() + 64);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(registry.Endpoint("a", absl::StrCat("10.0.0.", i, ":80")),
              live[i]);
  }
}

TEST(MetricsRegistryTest, RenderParsesBackToWhatWasRecorded) {
  MetricsRegistry registry;
  std::shared_ptr<RouteMetrics> get = registry.Route("books:8080", "GetBook");
  std::shared_ptr<RouteMetrics> fallback =
      registry.Route("books:8080", "[default]");
  for (int i = 0; i < 5; ++i) get->RecordRequest();
  for (int i = 0; i < 7; ++i) get->RecordAttempt(/*is_retry=*/i >= 5);
  get->RecordRetrySkipped(RetrySkipReason::kBudget);
  get->RecordResponse(false, 0, absl::Milliseconds(3));
  get->RecordResponse(false, 0, absl::Milliseconds(12));
  get->RecordResponse(true, 14, absl::Milliseconds(700));
  get->RecordResponse(true, 4, absl::Milliseconds(1000));
  get->RecordResponse(true, 99, absl::Microseconds(500));
  std::shared_ptr<EndpointMetrics> e1 =
      registry.Endpoint("books:8080", "10.0.0.1:8080");
  std::shared_ptr<EndpointMetrics> e2 =
      registry.Endpoint("books:8080", "10.0.0.2:8080");
  for (int i = 0; i < 4; ++i) e1->RecordAttempt();
  e1->RecordResponse(true, 14);
  e2->RecordAttempt();

  PrometheusText t = ParseOrDie(registry.RenderPrometheus({}));
  const PrometheusLabels kGet = {{"authority", "books:8080"},
                                 {"route", "GetBook"}};
  const PrometheusLabels kDefault = {{"authority", "books:8080"},
                                     {"route", "[default]"}};
  EXPECT_EQ(t.Value("route_request_total", kGet), 5);
  EXPECT_EQ(t.Value("route_actual_request_total", kGet), 7);
  EXPECT_EQ(t.Value("route_retry_total", kGet), 2);
  EXPECT_EQ(t.Value("route_retry_skipped_total",
                    {{"route", "GetBook"}, {"reason", "budget"}}),
            1);
  EXPECT_EQ(t.Value("route_retry_skipped_total",
                    {{"route", "GetBook"}, {"reason", "max_attempts"}}),
            0);
  EXPECT_EQ(t.Value("route_timeout_total", kGet), 1);
  EXPECT_EQ(t.Value("route_response_total", {{"route", "GetBook"},
                                             {"classification", "success"},
                                             {"grpc_status", "0"}}),
            2);
  EXPECT_EQ(t.Value("route_response_total",
                    {{"route", "GetBook"}, {"classification", "failure"}}),
            3);
  EXPECT_EQ(t.Value("route_response_total",
                    {{"route", "GetBook"}, {"grpc_status", ""}}),
            1);
  EXPECT_EQ(t.Value("route_response_latency_ms_bucket",
                    {{"route", "GetBook"}, {"le", "1"}}),
            1);
  EXPECT_EQ(t.Value("route_response_latency_ms_bucket",
                    {{"route", "GetBook"}, {"le", "500"}}),
            3);
  EXPECT_EQ(t.Value("route_response_latency_ms_bucket",
                    {{"route", "GetBook"}, {"le", "1000"}}),
            5);
  EXPECT_EQ(t.Value("route_response_latency_ms_bucket",
                    {{"route", "GetBook"}, {"le", "+Inf"}}),
            5);
  EXPECT_EQ(t.Value("route_response_latency_ms_sum", kGet), 1715.5);
  EXPECT_EQ(t.Value("route_response_latency_ms_count", kGet), 5);
  EXPECT_EQ(t.Samples("route_response_latency_ms_bucket", kGet).size(),
            kLatencyBucketCount);

  // A route with no calls yet: its counters at 0, no response series.
  EXPECT_EQ(t.Value("route_request_total", kDefault), 0);
  EXPECT_EQ(t.Value("route_actual_request_total", kDefault), 0);
  EXPECT_EQ(t.Value("route_retry_total", kDefault), 0);
  EXPECT_EQ(t.Value("route_timeout_total", kDefault), 0);
  EXPECT_EQ(t.Value("route_response_latency_ms_count", kDefault), 0);
  EXPECT_EQ(t.Value("route_response_total", kDefault), std::nullopt);

  EXPECT_EQ(t.Value("endpoint_request_total", {{"endpoint", "10.0.0.1:8080"}}),
            4);
  EXPECT_EQ(t.Value("endpoint_request_total", {{"endpoint", "10.0.0.2:8080"}}),
            1);
  EXPECT_EQ(t.Value("endpoint_response_total", {{"authority", "books:8080"},
                                                {"endpoint", "10.0.0.1:8080"},
                                                {"classification", "failure"},
                                                {"grpc_status", "14"}}),
            1);
  EXPECT_EQ(t.Value("endpoint_response_total", {{"endpoint", "10.0.0.2:8080"}}),
            std::nullopt);
}

TEST(MetricsRegistryTest,
     EndpointTlsLabelsLabelItsTrafficAndANewSetStartsANewSeries) {
  MetricsRegistry registry;
  const LabelPairs mtls = {{"tls", "true"}, {"server_id", "books.id"}};
  std::shared_ptr<EndpointMetrics> first =
      registry.Endpoint("books:8080", "10.0.0.1:8080", mtls);
  EXPECT_EQ(registry.Endpoint("books:8080", "10.0.0.1:8080", mtls), first);
  first->RecordAttempt();
  first->RecordResponse(false, 0);
  PrometheusText t = ParseOrDie(registry.RenderPrometheus({}));
  EXPECT_EQ(t.Value("endpoint_request_total", {{"endpoint", "10.0.0.1:8080"},
                                               {"tls", "true"},
                                               {"server_id", "books.id"}}),
            1);
  EXPECT_EQ(t.Value("endpoint_response_total", {{"endpoint", "10.0.0.1:8080"},
                                                {"grpc_status", "0"},
                                                {"tls", "true"},
                                                {"server_id", "books.id"}}),
            1);
  // The endpoint's identity went: other labels, a new series from 0, and
  // the old one is no longer shown, though its holder still records.
  const LabelPairs plain = {
      {"tls", "no_identity"},
      {"no_tls_reason", "not_provided_by_service_discovery"}};
  std::shared_ptr<EndpointMetrics> second =
      registry.Endpoint("books:8080", "10.0.0.1:8080", plain);
  EXPECT_NE(second, first);
  first->RecordAttempt();
  t = ParseOrDie(registry.RenderPrometheus({}));
  EXPECT_EQ(t.Value("endpoint_request_total",
                    {{"endpoint", "10.0.0.1:8080"}, {"tls", "no_identity"}}),
            0);
  EXPECT_EQ(t.Value("endpoint_request_total", {{"tls", "true"}}), std::nullopt);
}

TEST(MetricsRegistryTest, FamiliesAndSeriesAreSortedAndDescribed) {
  MetricsRegistry registry;
  registry.Route("b", "y")->RecordResponse(false, 0, absl::Milliseconds(1));
  registry.Route("b", "x")->RecordResponse(true, 2, absl::Milliseconds(1));
  registry.Route("a", "z")->RecordResponse(false, 0, absl::Milliseconds(1));
  std::shared_ptr<EndpointMetrics> e = registry.Endpoint("a", "1.1.1.1:1");
  std::string text =
      registry.RenderPrometheus({{"b", "2.2.2.2:2"}, {"a", "1.1.1.1:1"}});
  EXPECT_EQ(registry.RenderPrometheus({{"b", "2.2.2.2:2"}, {"a", "1.1.1.1:1"}}),
            text);
  PrometheusText t = ParseOrDie(text);

  std::vector<std::string> names;
  for (const auto& family : t.families) {
    names.push_back(family.name);
    EXPECT_FALSE(family.help.empty()) << family.name;
  }
  EXPECT_THAT(
      names,
      ElementsAre("endpoint_ejected", "endpoint_ejections_total",
                  "endpoint_pending", "endpoint_request_total",
                  "endpoint_response_total", "endpoint_rtt_estimate_ms",
                  "route_actual_request_total", "route_hedge_skipped_total",
                  "route_hedge_total", "route_http_response_total",
                  "route_request_total", "route_response_latency_ms",
                  "route_response_total", "route_retry_skipped_total",
                  "route_retry_total", "route_timeout_total"));
  EXPECT_EQ(t.Family("route_response_latency_ms")->type, "histogram");
  EXPECT_EQ(t.Family("endpoint_pending")->type, "gauge");
  EXPECT_EQ(t.Family("endpoint_ejected")->type, "gauge");
  EXPECT_EQ(t.Family("endpoint_rtt_estimate_ms")->type, "gauge");
  EXPECT_EQ(t.Family("endpoint_ejections_total")->type, "counter");
  EXPECT_EQ(t.Family("route_request_total")->type, "counter");

  std::vector<std::string> routes;
  for (const auto* s : t.Samples("route_request_total")) {
    routes.push_back(s->labels.at("authority") + "/" + s->labels.at("route"));
  }
  EXPECT_THAT(routes, ElementsAre("a/z", "b/x", "b/y"));
  std::vector<std::string> pending;
  for (const auto* s : t.Samples("endpoint_pending")) {
    pending.push_back(s->labels.at("authority"));
  }
  EXPECT_THAT(pending, ElementsAre("a", "b"));
}

TEST(MetricsRegistryTest, LabelValuesAreEscaped) {
  MetricsRegistry registry;
  const std::string route = "a\"b\\c\nd";
  const std::string authority = "weird\\\"host\n:80";
  registry.Route(authority, route)->RecordRequest();
  std::string text = registry.RenderPrometheus({{authority, "x\"y:1"}});
  EXPECT_THAT(text, HasSubstr("route=\"a\\\"b\\\\c\\nd\""));
  EXPECT_THAT(text, Not(HasSubstr("c\nd")));
  PrometheusText t = ParseOrDie(text);
  EXPECT_EQ(t.Value("route_request_total",
                    {{"authority", authority}, {"route", route}}),
            1);
  EXPECT_EQ(t.Value("endpoint_pending", {{"endpoint", "x\"y:1"}}), 0);
}

TEST(MetricsRegistryTest, GaugesOfOneEndpointAreCombinedAcrossChannels) {
  MetricsRegistry registry;
  std::vector<EndpointGauges> gauges = {
      {"books:8080", "10.0.0.1:8080", /*ejections=*/2, /*ejected=*/false,
       /*pending=*/4, /*rtt_estimate_ms=*/12.5},
      {"books:8080", "10.0.0.2:8080", 1, false, 1, 3},
      {"books:8080", "10.0.0.1:8080", 3, true, 6, 7},
      {"authors:8080", "10.0.0.1:8080", 0, false, 2, 0.25},
  };
  PrometheusText t = ParseOrDie(registry.RenderPrometheus(gauges));
  const PrometheusLabels kOne = {{"authority", "books:8080"},
                                 {"endpoint", "10.0.0.1:8080"}};
  EXPECT_EQ(t.Samples("endpoint_pending", kOne).size(), 1u);
  EXPECT_EQ(t.Value("endpoint_ejections_total", kOne), 5);
  EXPECT_EQ(t.Value("endpoint_ejected", kOne), 1);
  EXPECT_EQ(t.Value("endpoint_pending", kOne), 10);
  EXPECT_EQ(t.Value("endpoint_rtt_estimate_ms", kOne), 12.5);
  EXPECT_EQ(t.Value("endpoint_ejected", {{"endpoint", "10.0.0.2:8080"}}), 0);
  EXPECT_EQ(
      t.Value("endpoint_rtt_estimate_ms", {{"authority", "authors:8080"}}),
      0.25);
  EXPECT_EQ(t.Samples("endpoint_ejected").size(), 3u);
}

TEST(MetricsRegistryTest, ConcurrentRecordingKeepsExactTotals) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 10000;
  MetricsRegistry registry;
  // The call path's view: pointers handed out beforehand, no registry lock
  // while recording; only this thread takes the registry's lock, to
  // render.
  std::shared_ptr<RouteMetrics> route = registry.Route("a", "r");
  std::shared_ptr<EndpointMetrics> endpoint = registry.Endpoint("a", "e:1");
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([route, endpoint] {
      for (int i = 0; i < kPerThread; ++i) {
        route->RecordRequest();
        route->RecordAttempt(/*is_retry=*/i % 2 == 1);
        route->RecordResponse(i % 3 == 0, i % 17, absl::Milliseconds(i % 100));
        endpoint->RecordAttempt();
        endpoint->RecordResponse(i % 3 == 0, i % 17);
      }
    });
  }
  // Rendering while the threads record: every render is well formed.
  for (int i = 0; i < 20; ++i) ParseOrDie(registry.RenderPrometheus({}));
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ(route->requests.load(), uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(route->actual_requests.load(), uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(route->retries.load(), uint64_t{kThreads} * kPerThread / 2);
  HistogramSnapshot h = route->latency.Snapshot();
  EXPECT_EQ(h.count, uint64_t{kThreads} * kPerThread);
  double expected_sum_ms = 0;
  for (int i = 0; i < kPerThread; ++i) expected_sum_ms += i % 100;
  EXPECT_EQ(h.sum_ms, kThreads * expected_sum_ms);

  PrometheusText t = ParseOrDie(registry.RenderPrometheus({}));
  EXPECT_EQ(t.Value("route_response_total"), kThreads * kPerThread);
  EXPECT_EQ(t.Value("route_response_total", {{"classification", "failure"}}),
            kThreads * ((kPerThread + 2) / 3));
  EXPECT_EQ(t.Value("endpoint_request_total"), kThreads * kPerThread);
  EXPECT_EQ(t.Value("endpoint_response_total", {{"grpc_status", "4"}}),
            route->responses.Count(false, 4) + route->responses.Count(true, 4));
  EXPECT_EQ(t.Value("route_timeout_total"),
            route->responses.Count(false, 4) + route->responses.Count(true, 4));
}

// The destinations' transport: fails every call (UNAVAILABLE) and records on
// `wire` the addresses it is told to retain.
std::unique_ptr<Transport> NullTransport(
    std::shared_ptr<FakeWire> wire = std::make_shared<FakeWire>()) {
  wire->answer.status = absl::UnavailableError("null transport");
  return std::make_unique<FakeTransport>(std::move(wire));
}

// A destination makes an endpoint's metrics on its first call, keeps them
// while the endpoint stays (also when its attributes change), and lets them
// go when it leaves.
TEST(DestinationMetricsTest, EndpointMetricsAreMadeOnFirstCallAndFollowTheSet) {
  auto registry = std::make_shared<MetricsRegistry>();
  auto wire = std::make_shared<FakeWire>();
  Destination d("books:8080", "books:8080", NullTransport(wire),
                std::make_shared<TapHub>(), registry,
                std::make_shared<TimerThread>());
  EXPECT_EQ(d.EndpointMetricsFor("10.0.0.1:8080"), nullptr);

  Endpoint a("10.0.0.1:8080"), b("10.0.0.2:8080");
  d.OnEndpointUpdate(EndpointUpdate::Reset({b, a}));
  EXPECT_THAT(wire->retained, ElementsAre("10.0.0.1:8080", "10.0.0.2:8080"));
  EXPECT_EQ(registry->EndpointEntriesForTest(), 0u);  // none called yet
  EXPECT_EQ(d.EndpointMetricsFor("10.0.0.3:8080"), nullptr);

  std::shared_ptr<EndpointMetrics> m = d.EndpointMetricsFor(a.address);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(d.EndpointMetricsFor(a.address), m);
  // (The labels the destination gave it: a Mesh without an identity.)
  EXPECT_EQ(registry->Endpoint("books:8080", a.address,
                               TlsLabels(a, /*identity_in_use=*/false,
                                         /*default_transport=*/true)),
            m);
  EXPECT_EQ(registry->EndpointEntriesForTest(), 1u);
  m->RecordAttempt();

  // A balancer attached to the destination shares its endpoints.
  absl::StatusOr<std::unique_ptr<Balancer>> balancer =
      Balancer::Create(BalancerOptions{});
  ASSERT_TRUE(balancer.ok());
  d.Attach(balancer->get());
  ASSERT_EQ((*balancer)->Stats().size(), 2u);

  // A new weight: a new entry, the same metrics — carried over by the
  // destination itself, not kept alive by this test's pointer.
  m.reset();
  a.weight = 3;
  d.OnEndpointUpdate(EndpointUpdate::Add({a}));
  m = d.EndpointMetricsFor(a.address);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->requests.load(), 1u);  // the attempt recorded above
  EXPECT_EQ((*balancer)->Stats()[0].weight, 3u);
  std::weak_ptr<EndpointMetrics> weak = m;
  m.reset();

  // Gone from the set: no metrics for it, and they are let go.
  d.OnEndpointUpdate(EndpointUpdate::Remove({a.address}));
  EXPECT_EQ(d.EndpointMetricsFor(a.address), nullptr);
  EXPECT_TRUE(weak.expired());
  EXPECT_THAT(wire->retained, ElementsAre("10.0.0.2:8080"));
  ASSERT_EQ((*balancer)->Stats().size(), 1u);
  d.Detach(balancer->get());
  d.Shutdown();
}

// An endpoint's first call racing an update that replaces its entry (a new
// weight): the count it records must not be lost with the old entry.
// Returns how many endpoints lost their first call's count in one race.
int LostFirstCallCounts() {
  auto registry = std::make_shared<MetricsRegistry>();
  Destination d("books:8080", "books:8080", NullTransport(),
                std::make_shared<TapHub>(), registry,
                std::make_shared<TimerThread>());
  constexpr int kEndpoints = 2000;
  std::vector<Endpoint> endpoints;
  for (int i = 0; i < kEndpoints; ++i) {
    endpoints.emplace_back(
        absl::StrCat("10.0.", i / 250, ".", i % 250 + 1, ":8080"));
  }
  d.OnEndpointUpdate(EndpointUpdate::Reset(endpoints));
  std::atomic<bool> calls_done{false};
  std::thread caller([&] {
    // One call per endpoint, the pointer dropped at once: only the
    // destination can keep the metrics alive.
    for (const Endpoint& e : endpoints) {
      std::shared_ptr<EndpointMetrics> m = d.EndpointMetricsFor(e.address);
      if (m == nullptr) {
        ADD_FAILURE() << "no metrics for " << e.address;
        continue;
      }
      m->RecordAttempt();
    }
    calls_done = true;
  });
  // Every entry replaced again and again while the calls run (bounded).
  for (uint32_t round = 0; round < 10000 && !calls_done; ++round) {
    for (Endpoint& e : endpoints) e.weight = round % 2 + 1;
    d.OnEndpointUpdate(EndpointUpdate::Reset(endpoints));
  }
  caller.join();
  int lost = 0;
  for (const Endpoint& e : endpoints) {
    std::shared_ptr<EndpointMetrics> m = d.EndpointMetricsFor(e.address);
    if (m->requests.load() != 1) ++lost;
  }
  d.Shutdown();
  return lost;
}

TEST(DestinationMetricsTest, FirstCallsRacingAttributeChangesKeepTheirCounts) {
  // A few races, as one may by chance not interleave (bounded: ~5 ms each).
  for (int trial = 0; trial < 5; ++trial) {
    EXPECT_EQ(LostFirstCallCounts(), 0)
        << "endpoints whose first call's count was lost, trial " << trial;
  }
}

TEST(DestinationMetricsTest, ConcurrentCallsShareOneObjectAcrossUpdates) {
  auto registry = std::make_shared<MetricsRegistry>();
  Destination d("books:8080", "books:8080", NullTransport(),
                std::make_shared<TapHub>(), registry,
                std::make_shared<TimerThread>());
  Endpoint a("10.0.0.1:8080"), b("10.0.0.2:8080");
  d.OnEndpointUpdate(EndpointUpdate::Reset({a, b}));
  std::shared_ptr<EndpointMetrics> first_a = d.EndpointMetricsFor(a.address);

  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  std::vector<std::shared_ptr<EndpointMetrics>> seen_b(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::shared_ptr<EndpointMetrics> m = d.EndpointMetricsFor(a.address);
        if (m != first_a) ADD_FAILURE() << "a's metrics changed";
        m->RecordAttempt();
        // b's first call races between the threads.
        std::shared_ptr<EndpointMetrics> mb = d.EndpointMetricsFor(b.address);
        if (seen_b[t] == nullptr) seen_b[t] = mb;
        if (mb != seen_b[t]) ADD_FAILURE() << "b's metrics changed";
      }
    });
  }
  // Meanwhile a's attributes change back and forth: new entries, same
  // metrics.
  for (uint32_t w = 1; w <= 200; ++w) {
    a.weight = w % 3 + 1;
    d.OnEndpointUpdate(EndpointUpdate::Add({a}));
  }
  for (auto& th : threads) th.join();
  for (const auto& m : seen_b) EXPECT_EQ(m, seen_b[0]);
  EXPECT_EQ(first_a->requests.load(), uint64_t{kThreads} * kPerThread);
  d.Shutdown();
}

}  // namespace
}  // namespace mesh::internal

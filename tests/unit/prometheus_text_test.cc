// The test parser of the Prometheus text format: what it accepts, what it
// looks up, and that each rejection names the offending line.
#include "tests/support/prometheus_text.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The message of the error parsing `text` gives, or "parsed" if it parsed.
std::string ErrorOf(const std::string& text) {
  absl::StatusOr<PrometheusText> parsed = ParsePrometheusText(text);
  if (parsed.ok()) return "parsed";
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST(PrometheusTextTest, ParsesFamiliesSamplesAndLabels) {
  const std::string text =
      "# A comment.\n"
      "# HELP calls_total Calls made,\\nby route \\\\ kind.\n"
      "# TYPE calls_total counter\n"
      "calls_total{route=\"a\\\"b\\\\c\\nd\",kind=\"x\"} 3\n"
      "calls_total{ route = \"e\" , kind=\"y\", } 4 1700000000000\n"
      "\n"
      "# TYPE temperature gauge\n"
      "temperature -1.5e2\n"
      "# TYPE ratio untyped\n"
      "ratio NaN\n";
  absl::StatusOr<PrometheusText> parsed = ParsePrometheusText(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();

  ASSERT_EQ(parsed->families.size(), 3u);
  const PrometheusFamily* calls = parsed->Family("calls_total");
  ASSERT_NE(calls, nullptr);
  EXPECT_EQ(calls->type, "counter");
  EXPECT_EQ(calls->help, "Calls made,\nby route \\ kind.");
  ASSERT_EQ(calls->samples.size(), 2u);
  EXPECT_EQ(calls->samples[0].labels.at("route"), "a\"b\\c\nd");
  EXPECT_EQ(calls->samples[0].line, 4);
  EXPECT_EQ(calls->samples[1].labels.at("route"), "e");

  EXPECT_EQ(parsed->Value("calls_total"), 7);
  EXPECT_EQ(parsed->Value("calls_total", {{"kind", "y"}}), 4);
  EXPECT_EQ(parsed->Value("calls_total", {{"kind", "z"}}), std::nullopt);
  EXPECT_EQ(parsed->Value("temperature"), -150);
  EXPECT_TRUE(std::isnan(*parsed->Value("ratio")));
  EXPECT_EQ(parsed->Family("absent"), nullptr);
}

TEST(PrometheusTextTest, ParsesAHistogram) {
  const std::string text =
      "# TYPE latency histogram\n"
      "latency_bucket{le=\"1\"} 1\n"
      "latency_bucket{le=\"10\"} 3\n"
      "latency_bucket{le=\"+Inf\"} 4\n"
      "latency_sum 120.5\n"
      "latency_count 4\n";
  absl::StatusOr<PrometheusText> parsed = ParsePrometheusText(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->families.size(), 1u);
  EXPECT_EQ(parsed->families[0].samples.size(), 5u);
  EXPECT_EQ(parsed->Value("latency_bucket", {{"le", "10"}}), 3);
  EXPECT_EQ(parsed->Value("latency_sum"), 120.5);
}

TEST(PrometheusTextTest, RejectsASampleWithoutType) {
  EXPECT_THAT(ErrorOf("# HELP x An x.\nx 1\n"),
              AllOf(StartsWith("line 2: "), HasSubstr("no TYPE")));
  // A TYPE after the sample is too late.
  EXPECT_THAT(ErrorOf("x 1\n# TYPE x counter\n"), StartsWith("line 1: "));
  // _bucket names a histogram's sample only if the family is a histogram.
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx_bucket{le=\"1\"} 1\n"),
              StartsWith("line 2: "));
}

TEST(PrometheusTextTest, RejectsBadNames) {
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx 1\nx-y 2\n"),
              AllOf(StartsWith("line 3: "), HasSubstr("bad metric name")));
  EXPECT_THAT(ErrorOf("# TYPE x counter\n9x 1\n"), StartsWith("line 2: "));
  EXPECT_THAT(ErrorOf("# TYPE x-y counter\n"), StartsWith("line 1: "));
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx{9a=\"b\"} 1\n"),
              AllOf(StartsWith("line 2: "), HasSubstr("bad label name")));
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx{a:b=\"c\"} 1\n"),
              StartsWith("line 2: "));
}

TEST(PrometheusTextTest, RejectsAnUnterminatedLabelValue) {
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx{a=\"b} 1\n"),
              AllOf(StartsWith("line 2: "), HasSubstr("unterminated")));
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx{a=\"b\\\"} 1\n"),
              StartsWith("line 2: "));
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx{a=\"b\" 1\n"),
              StartsWith("line 2: "));
}

TEST(PrometheusTextTest, RejectsANonCumulativeHistogram) {
  EXPECT_THAT(ErrorOf("# TYPE h histogram\n"
                      "h_bucket{le=\"1\"} 3\n"
                      "h_bucket{le=\"2\"} 2\n"
                      "h_bucket{le=\"+Inf\"} 3\n"
                      "h_count 3\n"),
              AllOf(StartsWith("line 3: "), HasSubstr("not cumulative")));
}

TEST(PrometheusTextTest, ChecksBucketsInLeOrderNotTextOrder) {
  // Written out of order but cumulative once sorted by le: accepted.
  EXPECT_EQ(ErrorOf("# TYPE h histogram\n"
                    "h_bucket{le=\"+Inf\"} 3\n"
                    "h_bucket{le=\"10\"} 2\n"
                    "h_bucket{le=\"2\"} 1\n"
                    "h_count 3\n"),
            "parsed");
}

TEST(PrometheusTextTest, RejectsAHistogramWithoutInfBucket) {
  EXPECT_THAT(ErrorOf("# TYPE h histogram\n"
                      "h_bucket{le=\"1\"} 1\n"
                      "h_bucket{le=\"2\"} 2\n"
                      "h_count 2\n"),
              AllOf(StartsWith("line 3: "), HasSubstr("+Inf")));
  // Each label set is its own series.
  EXPECT_THAT(ErrorOf("# TYPE h histogram\n"
                      "h_bucket{r=\"a\",le=\"+Inf\"} 1\n"
                      "h_count{r=\"a\"} 1\n"
                      "h_bucket{r=\"b\",le=\"1\"} 1\n"
                      "h_count{r=\"b\"} 1\n"),
              AllOf(StartsWith("line 4: "), HasSubstr("+Inf")));
}

TEST(PrometheusTextTest, RejectsInfBucketDifferentFromCount) {
  EXPECT_THAT(ErrorOf("# TYPE h histogram\n"
                      "h_bucket{le=\"+Inf\"} 2\n"
                      "h_sum 1\n"
                      "h_count 3\n"),
              AllOf(StartsWith("line 4: "), HasSubstr("_count")));
  EXPECT_THAT(ErrorOf("# TYPE h histogram\n"
                      "h_bucket{le=\"+Inf\"} 2\n"),
              AllOf(StartsWith("line 2: "), HasSubstr("no _count")));
}

TEST(PrometheusTextTest, RejectsOtherMalformedLines) {
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx one\n"),
              AllOf(StartsWith("line 2: "), HasSubstr("bad value")));
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx\n"), StartsWith("line 2: "));
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx 1 2 3\n"), StartsWith("line 2: "));
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx 1 soon\n"), StartsWith("line 2: "));
  EXPECT_THAT(ErrorOf("# TYPE x kounter\n"),
              AllOf(StartsWith("line 1: "), HasSubstr("unknown type")));
  EXPECT_THAT(ErrorOf("# TYPE x counter\n# TYPE x gauge\n"),
              StartsWith("line 2: "));
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n"),
              AllOf(StartsWith("line 3: "), HasSubstr("same series")));
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx{a=\"1\",a=\"2\"} 1\n"),
              StartsWith("line 2: "));
  EXPECT_THAT(ErrorOf("# TYPE x counter\nx{a=\"\\t\"} 1\n"),
              AllOf(StartsWith("line 2: "), HasSubstr("bad escape")));
}

TEST(PrometheusTextTest, RejectsAFamilySplitByAnother) {
  EXPECT_THAT(ErrorOf("# TYPE x counter\n"
                      "x 1\n"
                      "# TYPE y counter\n"
                      "y 1\n"
                      "x{a=\"b\"} 1\n"),
              AllOf(StartsWith("line 5: "), HasSubstr("not together")));
  // TYPE lines of two families before their samples split the first.
  EXPECT_THAT(ErrorOf("# TYPE x counter\n"
                      "# TYPE y counter\n"
                      "x 1\n"),
              StartsWith("line 3: "));
}

}  // namespace
}  // namespace mesh::testing

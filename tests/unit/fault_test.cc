// src/route/fault.h: DrawFault's per-million draws of a route's delays and
// aborts, and the x-envoy-fault-* request headers where the route allows
// them.
#include "src/route/fault.h"

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

using ::testing::HasSubstr;
using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr char kDelayHeader[] = "x-envoy-fault-delay-request";
constexpr char kDelayPercentage[] = "x-envoy-fault-delay-request-percentage";
constexpr char kAbortHeader[] = "x-envoy-fault-abort-grpc-request";
constexpr char kAbortPercentage[] = "x-envoy-fault-abort-request-percentage";

FaultInjection Delay(uint32_t per_million, absl::Duration delay) {
  FaultInjection f;
  f.delay_per_million = per_million;
  f.delay = delay;
  return f;
}

FaultInjection Abort(uint32_t per_million, absl::StatusCode code,
                     std::string message = "") {
  FaultInjection f;
  f.abort_per_million = per_million;
  f.abort_code = code;
  f.abort_message = std::move(message);
  return f;
}

struct Counts {
  int delayed = 0;
  int aborted = 0;
};

// `n` draws of `fault` for `headers`, from a generator seeded with `seed`.
Counts DrawMany(const FaultInjection& fault, const Headers* headers, int n,
                uint32_t seed = 1) {
  std::mt19937 gen(seed);
  Counts counts;
  for (int i = 0; i < n; ++i) {
    FaultDraw d = DrawFault(fault, headers, absl::BitGenRef(gen));
    counts.delayed += d.delay > absl::ZeroDuration();
    counts.aborted += !d.abort.ok();
  }
  return counts;
}

TEST(DrawFaultTest, NoFaultConfiguredIsNone) {
  std::mt19937 gen(1);
  FaultDraw d = DrawFault(FaultInjection(), nullptr, gen);
  EXPECT_EQ(d.delay, absl::ZeroDuration());
  EXPECT_TRUE(d.abort.ok());
  EXPECT_FALSE(d.any());
}

TEST(DrawFaultTest, AZeroShareNeverAndAMillionAlways) {
  const int kDraws = 10000;
  Counts zero = DrawMany(Delay(0, absl::Milliseconds(5)), nullptr, kDraws);
  EXPECT_EQ(zero.delayed, 0);
  zero = DrawMany(Abort(0, absl::StatusCode::kUnavailable), nullptr, kDraws);
  EXPECT_EQ(zero.aborted, 0);
  FaultInjection both = Delay(1'000'000, absl::Milliseconds(5));
  both.abort_per_million = 1'000'000;
  both.abort_code = absl::StatusCode::kUnavailable;
  Counts all = DrawMany(both, nullptr, kDraws);
  EXPECT_EQ(all.delayed, kDraws);
  EXPECT_EQ(all.aborted, kDraws);
  std::mt19937 gen(7);
  FaultDraw d = DrawFault(both, nullptr, gen);
  EXPECT_EQ(d.delay, absl::Milliseconds(5));
  EXPECT_EQ(d.abort.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(d.any());
}

TEST(DrawFaultTest, AnAbortShareWithCodeOkIsNoAbort) {
  EXPECT_EQ(
      DrawMany(Abort(1'000'000, absl::StatusCode::kOk), nullptr, 1000).aborted,
      0);
}

TEST(DrawFaultTest, HalfTheCallsWithinSixSigma) {
  // 500,000 per million of 20,000 draws: binomial with mean 10,000 and
  // σ = sqrt(20,000 × 0.5 × 0.5) ≈ 70.7; 6σ ≈ 425.
  const int kDraws = 20000;
  FaultInjection f = Delay(500'000, absl::Milliseconds(1));
  f.abort_per_million = 500'000;
  f.abort_code = absl::StatusCode::kInternal;
  for (uint32_t seed : {1u, 2u, 3u}) {
    Counts c = DrawMany(f, nullptr, kDraws, seed);
    EXPECT_NEAR(c.delayed, 10000, 425) << "seed " << seed;
    EXPECT_NEAR(c.aborted, 10000, 425) << "seed " << seed;
  }
}

TEST(DrawFaultTest, HeadersAreIgnoredWithoutTheFromHeaderFlags) {
  Headers asks = {{kDelayHeader, "300"},
                  {kDelayPercentage, "100"},
                  {kAbortHeader, "14"},
                  {kAbortPercentage, "100"}};
  // No share configured: the headers alone cause nothing.
  Counts none = DrawMany(FaultInjection(), &asks, 1000);
  EXPECT_EQ(none.delayed, 0);
  EXPECT_EQ(none.aborted, 0);
  // A configured fault is the configured one, not the header's.
  FaultInjection f = Delay(1'000'000, absl::Milliseconds(5));
  f.abort_per_million = 1'000'000;
  f.abort_code = absl::StatusCode::kInternal;
  std::mt19937 gen(1);
  FaultDraw d = DrawFault(f, &asks, gen);
  EXPECT_EQ(d.delay, absl::Milliseconds(5));
  EXPECT_EQ(d.abort.code(), absl::StatusCode::kInternal);
  // The header's percentage does not lower the configured share either.
  Headers zero_percent = {{kDelayPercentage, "0"}, {kAbortPercentage, "0"}};
  Counts all = DrawMany(f, &zero_percent, 1000);
  EXPECT_EQ(all.delayed, 1000);
  EXPECT_EQ(all.aborted, 1000);
}

TEST(DrawFaultTest, HeaderDelayAndAbortAreParsed) {
  FaultInjection f;
  f.delay_from_header = true;
  f.delay_per_million = 1'000'000;
  f.delay = absl::Milliseconds(5);  // not used: the header says how long
  f.abort_from_header = true;
  f.abort_per_million = 1'000'000;
  f.abort_code = absl::StatusCode::kInternal;  // not used either
  Headers asks = {
      {"x-other", "1"}, {kDelayHeader, "250"}, {kAbortHeader, "14"}};
  std::mt19937 gen(1);
  FaultDraw d = DrawFault(f, &asks, gen);
  EXPECT_EQ(d.delay, absl::Milliseconds(250));
  EXPECT_EQ(d.abort.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(d.abort.message()), HasSubstr("code 14"));
  EXPECT_THAT(std::string(d.abort.message()), HasSubstr(kAbortHeader));
  // Each header alone.
  Headers delay_only = {{kDelayHeader, "1"}};
  d = DrawFault(f, &delay_only, gen);
  EXPECT_EQ(d.delay, absl::Milliseconds(1));
  EXPECT_TRUE(d.abort.ok());
  Headers abort_only = {{kAbortHeader, "16"}};
  d = DrawFault(f, &abort_only, gen);
  EXPECT_EQ(d.delay, absl::ZeroDuration());
  EXPECT_EQ(d.abort.code(), absl::StatusCode::kUnauthenticated);
  // With the flags, no header (or no headers at all) means no fault.
  Headers unrelated = {{"x-other", "1"}};
  EXPECT_FALSE(DrawFault(f, &unrelated, gen).any());
  EXPECT_FALSE(DrawFault(f, nullptr, gen).any());
}

TEST(DrawFaultTest, HeaderPercentageIsCappedByTheConfiguredShare) {
  FaultInjection f;
  f.delay_from_header = true;
  f.abort_from_header = true;
  Headers asks = {{kDelayHeader, "10"},
                  {kDelayPercentage, "100"},
                  {kAbortHeader, "2"},
                  {kAbortPercentage, "100"}};
  // No share configured: a header's 100% is capped to 0.
  Counts capped = DrawMany(f, &asks, 1000);
  EXPECT_EQ(capped.delayed, 0);
  EXPECT_EQ(capped.aborted, 0);
  // A configured 10% caps the header's 100%: 20,000 draws, mean 2,000,
  // σ = sqrt(20,000 × 0.1 × 0.9) ≈ 42.4; 6σ ≈ 255.
  f.delay_per_million = 100'000;
  f.abort_per_million = 100'000;
  Counts ten = DrawMany(f, &asks, 20000);
  EXPECT_NEAR(ten.delayed, 2000, 255);
  EXPECT_NEAR(ten.aborted, 2000, 255);
  // Below the configured share the header's percentage applies: 50% of a
  // configured 100% (6σ ≈ 425 as above); 0% is never.
  f.delay_per_million = 1'000'000;
  f.abort_per_million = 1'000'000;
  Headers half = {{kDelayHeader, "10"},
                  {kDelayPercentage, "50"},
                  {kAbortHeader, "2"},
                  {kAbortPercentage, "50"}};
  Counts c = DrawMany(f, &half, 20000);
  EXPECT_NEAR(c.delayed, 10000, 425);
  EXPECT_NEAR(c.aborted, 10000, 425);
  Headers zero = {{kDelayHeader, "10"},
                  {kDelayPercentage, "0"},
                  {kAbortHeader, "2"},
                  {kAbortPercentage, "0"}};
  c = DrawMany(f, &zero, 1000);
  EXPECT_EQ(c.delayed, 0);
  EXPECT_EQ(c.aborted, 0);
  // Over 100 is 100, within the configured share.
  Headers over = {{kDelayHeader, "10"},
                  {kDelayPercentage, "250"},
                  {kAbortHeader, "2"},
                  {kAbortPercentage, "250"}};
  c = DrawMany(f, &over, 1000);
  EXPECT_EQ(c.delayed, 1000);
  EXPECT_EQ(c.aborted, 1000);
}

TEST(DrawFaultTest, HeaderPercentageCountsInTheConfiguredDenominator) {
  // A configured 100% over TEN_THOUSAND: the header's 5000 is 50%, not
  // capped at 100 as a percent would be (Envoy reads it so).
  FaultInjection f;
  f.abort_from_header = true;
  f.abort_per_million = 1'000'000;
  f.abort_header_unit = 100;
  Headers half = {{kAbortHeader, "2"}, {kAbortPercentage, "5000"}};
  Counts c = DrawMany(f, &half, 20000);
  EXPECT_NEAR(c.aborted, 10000, 425);  // 6σ, as above
  // Over MILLION, 250,000 is a quarter; σ = sqrt(20,000 × 0.25 × 0.75).
  f.abort_header_unit = 1;
  Headers quarter = {{kAbortHeader, "2"}, {kAbortPercentage, "250000"}};
  c = DrawMany(f, &quarter, 20000);
  EXPECT_NEAR(c.aborted, 5000, 368);
  // A count past the denominator is the configured share (capped).
  Headers huge = {{kAbortHeader, "2"}, {kAbortPercentage, "4000000000"}};
  c = DrawMany(f, &huge, 1000);
  EXPECT_EQ(c.aborted, 1000);
}

TEST(DrawFaultTest, UnparseableHeaderValuesCauseNoFault) {
  FaultInjection f;
  f.delay_from_header = true;
  f.delay_per_million = 1'000'000;
  f.abort_from_header = true;
  f.abort_per_million = 1'000'000;
  std::mt19937 gen(1);
  for (const char* bad :
       {"", "abc", "10ms", "1.5", "0", "-5", "0x10", "99999999999999999999"}) {
    Headers h = {{kDelayHeader, bad}};
    EXPECT_EQ(DrawFault(f, &h, gen).delay, absl::ZeroDuration()) << bad;
  }
  for (const char* bad :
       {"", "abc", "UNAVAILABLE", "0", "17", "-1", "14.0", "4294967310"}) {
    Headers h = {{kAbortHeader, bad}};
    EXPECT_TRUE(DrawFault(f, &h, gen).abort.ok()) << bad;
  }
  // An unparseable percentage is ignored: the configured share applies.
  Headers bad_percentage = {{kDelayHeader, "10"},
                            {kDelayPercentage, "half"},
                            {kAbortHeader, "2"},
                            {kAbortPercentage, "-1"}};
  Counts c = DrawMany(f, &bad_percentage, 1000);
  EXPECT_EQ(c.delayed, 1000);
  EXPECT_EQ(c.aborted, 1000);
}

TEST(DrawFaultTest, AbortMessageIsTheDefaultOrTheConfiguredOne) {
  std::mt19937 gen(1);
  FaultDraw d =
      DrawFault(Abort(1'000'000, absl::StatusCode::kAborted), nullptr, gen);
  EXPECT_EQ(d.abort.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(d.abort.message(), "fault injected by the route's config");
  d = DrawFault(Abort(1'000'000, absl::StatusCode::kResourceExhausted,
                      "chaos monkey says no"),
                nullptr, gen);
  EXPECT_EQ(d.abort.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(d.abort.message(), "chaos monkey says no");
}

}  // namespace
}  // namespace mesh::internal

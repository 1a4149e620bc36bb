// src/route/retry_decision.h: which attempt ends want a retry, and the order
// of the checks that may still refuse one (attempts, time, then budget —
// which is spent only when the others pass).
#include "src/route/retry_decision.h"

#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

AttemptEnd ClassifiedFailure(absl::StatusCode code) {
  AttemptEnd end;
  end.code = code;
  end.classified_failure = true;
  end.route_retryable = true;
  end.replayable = true;
  return end;
}

TEST(RetryWantedTest, AClassifiedFailureOnARetryableRoute) {
  EXPECT_TRUE(RetryWanted(ClassifiedFailure(absl::StatusCode::kInternal)));
  EXPECT_TRUE(RetryWanted(ClassifiedFailure(absl::StatusCode::kUnavailable)));
}

TEST(RetryWantedTest, HttpStatusRangesDecideAloneWithNoAnswerRetried) {
  const std::vector<HttpStatusRange> ranges = {{502, 504}, {429, 429}};
  AttemptEnd end;
  end.route_retryable = true;
  end.replayable = true;
  end.retry_on_http_status = &ranges;
  end.code = absl::StatusCode::kUnavailable;
  end.classified_failure = true;
  end.http_status = 503;
  EXPECT_TRUE(RetryWanted(end));
  end.http_status = 429;
  EXPECT_TRUE(RetryWanted(end));
  // A gRPC answer (HTTP 200) is not retried, whatever its gRPC status.
  end.http_status = 200;
  EXPECT_FALSE(RetryWanted(end));
  end.http_status = 500;
  EXPECT_FALSE(RetryWanted(end));
  // No status known (a trailers-only gRPC answer looks so): not retried;
  // a request that never reached a server is.
  end.http_status = 0;
  EXPECT_FALSE(RetryWanted(end));
  end.never_sent = true;
  EXPECT_TRUE(RetryWanted(end));
  end.never_sent = false;
  // Not on a route without retries, nor with a body not kept.
  end.code = absl::StatusCode::kUnavailable;
  end.route_retryable = false;
  EXPECT_FALSE(RetryWanted(end));
  end.route_retryable = true;
  end.replayable = false;
  EXPECT_FALSE(RetryWanted(end));
}

TEST(RetryWantedTest, NeverATimeoutOrACancellation) {
  EXPECT_FALSE(
      RetryWanted(ClassifiedFailure(absl::StatusCode::kDeadlineExceeded)));
  EXPECT_FALSE(RetryWanted(ClassifiedFailure(absl::StatusCode::kCancelled)));
}

TEST(RetryWantedTest, NotOnARouteWithoutRetriesNorForASuccess) {
  AttemptEnd end = ClassifiedFailure(absl::StatusCode::kInternal);
  end.route_retryable = false;
  EXPECT_FALSE(RetryWanted(end));
  end = ClassifiedFailure(absl::StatusCode::kInternal);
  end.classified_failure = false;  // the route's classes call it a success
  EXPECT_FALSE(RetryWanted(end));
}

TEST(RetryWantedTest, NeverWhenTheBodyWasNotKept) {
  AttemptEnd end = ClassifiedFailure(absl::StatusCode::kInternal);
  end.replayable = false;
  EXPECT_FALSE(RetryWanted(end));
  end.never_sent = true;
  end.retry_connect_failures = true;
  EXPECT_FALSE(RetryWanted(end));
}

TEST(RetryWantedTest, ARequestNeverSentOnAnyRouteWhenTheChannelAllows) {
  AttemptEnd end;
  end.code = absl::StatusCode::kUnavailable;
  end.never_sent = true;
  end.replayable = true;
  end.route_retryable = false;
  EXPECT_FALSE(RetryWanted(end));
  end.retry_connect_failures = true;
  EXPECT_TRUE(RetryWanted(end));
}

TEST(RetryWantedTest, ARequestNeverSentIsRetriedAFewTimesACallOnly) {
  AttemptEnd end;
  end.code = absl::StatusCode::kUnavailable;
  end.never_sent = true;
  end.replayable = true;
  end.retry_connect_failures = true;
  for (uint32_t i = 0; i < kMaxConnectFailureRetries; ++i) {
    end.connect_retries = i;
    EXPECT_TRUE(RetryWanted(end)) << i;
  }
  end.connect_retries = kMaxConnectFailureRetries;
  EXPECT_FALSE(RetryWanted(end));
  // A route that retries UNAVAILABLE itself is not held to it.
  const std::vector<absl::StatusCode> retry_on = {
      absl::StatusCode::kUnavailable};
  end.route_retryable = true;
  end.retry_on = &retry_on;
  EXPECT_TRUE(RetryWanted(end));
}

TEST(DecideRetryTest, ChecksAttemptsThenTimeThenBudget) {
  const absl::Time now = absl::Now();
  const absl::Time deadline = now + absl::Seconds(1);
  int withdrawals = 0;
  auto grant = [&] {
    ++withdrawals;
    return true;
  };
  auto refuse = [&] {
    ++withdrawals;
    return false;
  };
  EXPECT_EQ(DecideRetry(3, 3, now, deadline, grant),
            RetryVerdict::kMaxAttempts);
  EXPECT_EQ(DecideRetry(1, 3, deadline, deadline, grant),
            RetryVerdict::kNoTime);
  EXPECT_EQ(withdrawals, 0);  // nothing spent on a refused retry
  EXPECT_EQ(DecideRetry(1, 3, now, deadline, refuse), RetryVerdict::kBudget);
  EXPECT_EQ(DecideRetry(1, 3, now, deadline, grant), RetryVerdict::kRetry);
  EXPECT_EQ(withdrawals, 2);
}

TEST(DecideRetryTest, ZeroMaxAttemptsMeansNoLimit) {
  const absl::Time now = absl::Now();
  EXPECT_EQ(
      DecideRetry(1000000, 0, now, now + absl::Seconds(1), [] { return true; }),
      RetryVerdict::kRetry);
}

// --- RetryPolicy::retry_on ---------------------------------------------------

AttemptEnd EndedWith(absl::StatusCode code,
                     const std::vector<absl::StatusCode>* retry_on) {
  AttemptEnd end;
  end.code = code;
  end.route_retryable = true;
  end.replayable = true;
  end.retry_on = retry_on;
  return end;
}

TEST(RetryOnTest, ExactlyTheListedCodesAreRetried) {
  const std::vector<absl::StatusCode> retry_on = {
      absl::StatusCode::kUnavailable, absl::StatusCode::kResourceExhausted};
  for (int c = 0; c <= 16; ++c) {
    const auto code = static_cast<absl::StatusCode>(c);
    const bool listed = code == absl::StatusCode::kUnavailable ||
                        code == absl::StatusCode::kResourceExhausted;
    // Whatever the response classes say.
    for (bool classified : {false, true}) {
      AttemptEnd end = EndedWith(code, &retry_on);
      end.classified_failure = classified;
      EXPECT_EQ(RetryWanted(end), listed)
          << "code " << c << " classified " << classified;
    }
  }
}

TEST(RetryOnTest, ListedDeadlineExceededAndCancelledAreRetried) {
  const std::vector<absl::StatusCode> retry_on = {
      absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kCancelled};
  EXPECT_TRUE(
      RetryWanted(EndedWith(absl::StatusCode::kDeadlineExceeded, &retry_on)));
  EXPECT_TRUE(RetryWanted(EndedWith(absl::StatusCode::kCancelled, &retry_on)));
  AttemptEnd end = EndedWith(absl::StatusCode::kCancelled, &retry_on);
  end.classified_failure = true;
  EXPECT_TRUE(RetryWanted(end));
  // Not listed, they are not retried, as without a list.
  const std::vector<absl::StatusCode> unavailable = {
      absl::StatusCode::kUnavailable};
  end = EndedWith(absl::StatusCode::kDeadlineExceeded, &unavailable);
  end.classified_failure = true;
  EXPECT_FALSE(RetryWanted(end));
}

TEST(RetryOnTest, AnEmptyListMeansTheClassifiedFailures) {
  const std::vector<absl::StatusCode> empty;
  AttemptEnd end = EndedWith(absl::StatusCode::kInternal, &empty);
  EXPECT_FALSE(RetryWanted(end));
  end.classified_failure = true;
  EXPECT_TRUE(RetryWanted(end));
  end.code = absl::StatusCode::kDeadlineExceeded;
  EXPECT_FALSE(RetryWanted(end));
}

TEST(RetryOnTest, ARequestNeverSentIsStillRetriedWhenTheChannelAllows) {
  const std::vector<absl::StatusCode> retry_on = {
      absl::StatusCode::kResourceExhausted};
  AttemptEnd end = EndedWith(absl::StatusCode::kUnavailable, &retry_on);
  end.never_sent = true;
  EXPECT_FALSE(RetryWanted(end));
  end.retry_connect_failures = true;
  EXPECT_TRUE(RetryWanted(end));
}

TEST(RetryOnTest, NeverWhenTheBodyWasNotKept) {
  const std::vector<absl::StatusCode> retry_on = {
      absl::StatusCode::kUnavailable};
  AttemptEnd end = EndedWith(absl::StatusCode::kUnavailable, &retry_on);
  end.replayable = false;
  EXPECT_FALSE(RetryWanted(end));
  end.never_sent = true;
  end.retry_connect_failures = true;
  EXPECT_FALSE(RetryWanted(end));
}

TEST(RetryOnTest, NotOnARouteWithoutRetries) {
  const std::vector<absl::StatusCode> retry_on = {
      absl::StatusCode::kUnavailable};
  AttemptEnd end = EndedWith(absl::StatusCode::kUnavailable, &retry_on);
  end.route_retryable = false;
  end.classified_failure = true;
  EXPECT_FALSE(RetryWanted(end));
}

TEST(RetryWantedTest, APassedPerTryTimeoutOnARetryableRouteWhateverRetryOn) {
  // The attempt's own timeout is no caller's deadline: retried, even with
  // retry_on or status ranges that do not list DEADLINE_EXCEEDED.
  const std::vector<absl::StatusCode> retry_on = {
      absl::StatusCode::kUnavailable};
  const std::vector<HttpStatusRange> ranges = {{500, 599}};
  AttemptEnd end = EndedWith(absl::StatusCode::kDeadlineExceeded, &retry_on);
  EXPECT_FALSE(RetryWanted(end));
  end.per_try_timed_out = true;
  EXPECT_TRUE(RetryWanted(end));
  end.retry_on = nullptr;
  end.retry_on_http_status = &ranges;
  EXPECT_TRUE(RetryWanted(end));
  end.route_retryable = false;  // not on a route without retries
  EXPECT_FALSE(RetryWanted(end));
  end.route_retryable = true;
  end.replayable = false;  // nor without the body
  EXPECT_FALSE(RetryWanted(end));
}

}  // namespace
}  // namespace mesh::internal

// src/route/retry_decision.h: which attempt ends want a retry, and the order
// of the checks that may still refuse one (attempts, time, then budget —
// which is spent only when the others pass).
#include "src/route/retry_decision.h"

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

}  // namespace
}  // namespace mesh::internal

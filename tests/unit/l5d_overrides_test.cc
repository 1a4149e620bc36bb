// Linkerd's per-request policy headers: what each l5d-* header sets, that
// they are taken out of what is sent, and that bad values are ignored
// naming them.
#include "src/route/l5d_overrides.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(L5dOverridesTest, EachHeaderSetsItsPartAndIsTakenOut) {
  Metadata headers = {{"l5d-timeout", "2s"},
                      {"x-app", "1"},
                      {"l5d-response-timeout", "150ms"},
                      {"l5d-retry-timeout", "0.5s"},
                      {"l5d-retry-limit", "4"},
                      {"l5d-retry-grpc", "unavailable, internal"},
                      {"l5d-retry-http", "5xx,gateway-error,429,500-503"},
                      {"l5d-dst-override", "kept"}};
  L5dOverrides o = TakeL5dOverrides(&headers);
  EXPECT_EQ(o.timeout, absl::Seconds(2));
  EXPECT_EQ(o.response_timeout, absl::Milliseconds(150));
  EXPECT_EQ(o.per_try_timeout, absl::Milliseconds(500));
  EXPECT_EQ(o.max_retries, 4u);
  ASSERT_TRUE(o.retry_on.has_value());
  EXPECT_THAT(*o.retry_on, ElementsAre(absl::StatusCode::kUnavailable,
                                       absl::StatusCode::kInternal));
  ASSERT_TRUE(o.retry_on_http_status.has_value());
  ASSERT_EQ(o.retry_on_http_status->size(), 4u);
  EXPECT_EQ((*o.retry_on_http_status)[0].min, 500u);
  EXPECT_EQ((*o.retry_on_http_status)[0].max, 599u);
  EXPECT_EQ((*o.retry_on_http_status)[1].min, 502u);
  EXPECT_EQ((*o.retry_on_http_status)[1].max, 504u);
  EXPECT_EQ((*o.retry_on_http_status)[2].min, 429u);
  EXPECT_EQ((*o.retry_on_http_status)[2].max, 429u);
  EXPECT_EQ((*o.retry_on_http_status)[3].max, 503u);
  EXPECT_TRUE(o.retries());
  EXPECT_THAT(o.ignored, ::testing::IsEmpty());
  // What is sent on: the app's header and the l5d- header not read here.
  EXPECT_THAT(headers, ElementsAre(Pair("x-app", "1"),
                                   Pair("l5d-dst-override", "kept")));

  RetryPolicy route;
  route.max_attempts = 2;
  route.retry_on = {absl::StatusCode::kResourceExhausted};
  RetryPolicy p = ApplyL5dRetries(o, route);
  EXPECT_EQ(p.max_attempts, 5u);
  EXPECT_EQ(p.per_try_timeout, absl::Milliseconds(500));
  EXPECT_THAT(p.retry_on, ElementsAre(absl::StatusCode::kUnavailable,
                                      absl::StatusCode::kInternal));
}

TEST(L5dOverridesTest, BadValuesAreIgnoredNamingThem) {
  Metadata headers = {{"l5d-timeout", "-1s"},
                      {"l5d-retry-limit", "101"},
                      {"l5d-retry-grpc", "unavailable,aborted"},
                      {"l5d-retry-http", "600"},
                      {"l5d-response-timeout", "soon"},
                      {"l5d-retry-timeout", "0s"}};
  L5dOverrides o = TakeL5dOverrides(&headers);
  EXPECT_FALSE(o.timeout || o.response_timeout || o.per_try_timeout ||
               o.max_retries || o.retry_on || o.retry_on_http_status);
  EXPECT_FALSE(o.retries());
  EXPECT_THAT(o.ignored,
              ElementsAre(HasSubstr("l5d-timeout: '-1s'"),
                          HasSubstr("l5d-retry-limit: '101'"),
                          HasSubstr("l5d-retry-grpc: 'unavailable,aborted'"),
                          HasSubstr("l5d-retry-http: '600'"),
                          HasSubstr("l5d-response-timeout: 'soon'")));
  EXPECT_THAT(headers, ::testing::IsEmpty());  // taken out all the same
  // Without headers nothing changes.
  RetryPolicy route;
  route.max_attempts = 3;
  EXPECT_EQ(ApplyL5dRetries(o, route).max_attempts, 3u);
}

}  // namespace
}  // namespace mesh::internal

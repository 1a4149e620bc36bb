#include "src/route/l5d_overrides.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "src/base/utf8.h"

namespace mesh::internal {
namespace {

constexpr size_t kMaxValue = 128;
constexpr uint32_t kMaxRetries = 100;

// A non-negative duration; zero is none.
std::optional<std::optional<absl::Duration>> ParseLimit(absl::string_view v) {
  absl::Duration d;
  if (!absl::ParseDuration(v, &d) || d < absl::ZeroDuration() ||
      d == absl::InfiniteDuration()) {
    return std::nullopt;
  }
  return d == absl::ZeroDuration() ? std::optional<absl::Duration>()
                                   : std::optional<absl::Duration>(d);
}

std::optional<std::vector<absl::StatusCode>> ParseCodes(absl::string_view v) {
  std::vector<absl::StatusCode> codes;
  for (absl::string_view name : absl::StrSplit(v, ',')) {
    name = absl::StripAsciiWhitespace(name);
    absl::StatusCode code;
    if (name == "cancelled") {
      code = absl::StatusCode::kCancelled;
    } else if (name == "deadline-exceeded") {
      code = absl::StatusCode::kDeadlineExceeded;
    } else if (name == "internal") {
      code = absl::StatusCode::kInternal;
    } else if (name == "resource-exhausted") {
      code = absl::StatusCode::kResourceExhausted;
    } else if (name == "unavailable") {
      code = absl::StatusCode::kUnavailable;
    } else {
      return std::nullopt;
    }
    codes.push_back(code);
  }
  return codes;
}

std::optional<std::vector<HttpStatusRange>> ParseStatuses(absl::string_view v) {
  std::vector<HttpStatusRange> ranges;
  for (absl::string_view part : absl::StrSplit(v, ',')) {
    part = absl::StripAsciiWhitespace(part);
    HttpStatusRange r;
    if (part == "5xx") {
      r = {500, 599};
    } else if (part == "gateway-error") {
      r = {502, 504};
    } else {
      std::pair<absl::string_view, absl::string_view> ends =
          absl::StrSplit(part, absl::MaxSplits('-', 1));
      uint32_t min = 0, max = 0;
      if (!absl::SimpleAtoi(ends.first, &min)) return std::nullopt;
      max = min;
      if (!ends.second.empty() && !absl::SimpleAtoi(ends.second, &max)) {
        return std::nullopt;
      }
      if (min < 100 || max > 599 || min > max) return std::nullopt;
      r = {min, max};
    }
    ranges.push_back(r);
  }
  return ranges;
}

}  // namespace

L5dOverrides TakeL5dOverrides(Metadata* headers) {
  L5dOverrides o;
  std::vector<std::string> seen;
  auto bad = [&o](absl::string_view name, absl::string_view value) {
    o.ignored.push_back(absl::StrCat(name, ": '", PrintableText(value),
                                     "' is not a valid value; ignored"));
  };
  for (const auto& header : *headers) {
    // (Named, not bound: the lambdas below capture it.)
    const std::string& name = header.first;
    if (name.rfind("l5d-", 0) != 0) continue;
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    const absl::string_view value =
        absl::string_view(header.second).substr(0, kMaxValue);
    auto limit = [&](std::optional<absl::Duration>* field) {
      if (auto d = ParseLimit(value)) {
        *field = *d;
      } else {
        bad(name, value);
      }
    };
    if (name == "l5d-timeout") {
      limit(&o.timeout);
    } else if (name == "l5d-response-timeout") {
      limit(&o.response_timeout);
    } else if (name == "l5d-retry-timeout") {
      limit(&o.per_try_timeout);
    } else if (name == "l5d-retry-limit") {
      uint32_t n = 0;
      if (absl::SimpleAtoi(value, &n) && n <= kMaxRetries) {
        o.max_retries = n;
      } else {
        bad(name, value);
      }
    } else if (name == "l5d-retry-grpc") {
      if (auto codes = ParseCodes(value)) {
        o.retry_on = std::move(codes);
      } else {
        bad(name, value);
      }
    } else if (name == "l5d-retry-http") {
      if (auto ranges = ParseStatuses(value)) {
        o.retry_on_http_status = std::move(ranges);
      } else {
        bad(name, value);
      }
    } else {
      continue;  // another l5d- header: sent on
    }
    seen.push_back(name);
  }
  if (!seen.empty()) {
    headers->erase(std::remove_if(headers->begin(), headers->end(),
                                  [&seen](const auto& h) {
                                    return std::find(seen.begin(), seen.end(),
                                                     h.first) != seen.end();
                                  }),
                   headers->end());
  }
  return o;
}

RetryPolicy ApplyL5dRetries(const L5dOverrides& o, RetryPolicy route) {
  if (o.max_retries) route.max_attempts = *o.max_retries + 1;
  if (o.per_try_timeout) route.per_try_timeout = *o.per_try_timeout;
  // A header's conditions replace the route's, of either kind.
  if (o.retry_on || o.retry_on_http_status) {
    route.retry_on = o.retry_on.value_or(std::vector<absl::StatusCode>{});
    route.retry_on_http_status =
        o.retry_on_http_status.value_or(std::vector<HttpStatusRange>{});
  }
  return route;
}

}  // namespace mesh::internal

#include "src/route/classify.h"

namespace mesh::internal {

bool MatchesResponse(const ResponseMatch& match, int http_status) {
  switch (match.kind) {
    case ResponseMatch::Kind::kAll:
      for (const ResponseMatch& c : match.children) {
        if (!MatchesResponse(c, http_status)) return false;
      }
      return true;  // all [] is true
    case ResponseMatch::Kind::kAny:
      for (const ResponseMatch& c : match.children) {
        if (MatchesResponse(c, http_status)) return true;
      }
      return false;  // any [] is false
    case ResponseMatch::Kind::kNot:
      return match.children.size() == 1 &&
             !MatchesResponse(match.children[0], http_status);
    case ResponseMatch::Kind::kStatus:
      return http_status > 0 &&
             static_cast<uint32_t>(http_status) >= match.min &&
             static_cast<uint32_t>(http_status) <= match.max;
  }
  return false;
}

bool IsDefaultFailure(const absl::Status& status, int http_status) {
  switch (status.code()) {
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kUnknown:
      return true;
    default:
      return http_status >= 500 && http_status <= 599;
  }
}

bool IsFailure(const std::vector<ResponseClass>& classes,
               const absl::Status& status, int http_status) {
  for (const ResponseClass& c : classes) {
    if (MatchesResponse(c.condition, http_status)) return c.is_failure;
  }
  return IsDefaultFailure(status, http_status);
}

}  // namespace mesh::internal

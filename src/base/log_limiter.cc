#include "src/base/log_limiter.h"

#include "absl/strings/str_cat.h"

namespace mesh::internal {

LogLimiter::LogLimiter(absl::Duration period, Clock* clock)
    : period_nanos_(absl::ToInt64Nanoseconds(period)),
      clock_(clock != nullptr ? clock : Clock::Real()) {}

bool LogLimiter::Admit(absl::string_view key, uint64_t* held_back) {
  const int64_t now = clock_->NowNanos();
  MutexLock lock(&mu_);
  if (kinds_.size() >= kMaxKeys && !kinds_.contains(key)) key = "";
  auto [it, first] = kinds_.try_emplace(key);
  Kind& kind = it->second;
  if (!first && now - kind.last_logged_nanos < period_nanos_) {
    ++kind.held_back;
    return false;
  }
  kind.last_logged_nanos = now;
  *held_back = kind.held_back;
  kind.held_back = 0;
  return true;
}

std::string LogLimiter::HeldBack(uint64_t n) {
  if (n == 0) return "";
  return absl::StrCat(" (", n, " more like it since the last such line)");
}

}  // namespace mesh::internal

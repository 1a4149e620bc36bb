// LogLimiter: repeated log lines of one kind cost a line per period, not a
// line each. A peer can make an event happen thousands of times a second (a
// response of a type never asked for, a NACK, a dropped stream); the first
// of a kind is logged, the next ones within `period` are counted, and the
// first after it is logged with that count.
//
//   static LogLimiter limiter(absl::Seconds(10));
//   uint64_t held = 0;
//   if (limiter.Admit("unknown type", &held)) {
//     gpr_log(GPR_ERROR, "… (%s)", LogLimiter::HeldBack(held).c_str());
//   }
//
// Thread-safe.
#ifndef MESH_SRC_BASE_LOG_LIMITER_H_
#define MESH_SRC_BASE_LOG_LIMITER_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/base/clock.h"
#include "src/base/internal_export.h"
#include "src/base/mutex.h"

namespace mesh::internal {

class MESH_INTERNAL_EXPORT LogLimiter {
 public:
  // `clock`: null for Clock::Real(); must outlive the limiter.
  explicit LogLimiter(absl::Duration period = absl::Seconds(10),
                      Clock* clock = nullptr);

  // True if a line of kind `key` is to be logged now; then `*held_back` is
  // the number of lines of that kind not logged since the last one. Keys
  // are the code's own words ("NACK Listener"), never a peer's text: at
  // most kMaxKeys are told apart, the rest share one count.
  bool Admit(absl::string_view key, uint64_t* held_back);

  // "" for 0; else " (N more like it since the last such line)".
  static std::string HeldBack(uint64_t n);

  static constexpr size_t kMaxKeys = 256;

 private:
  struct Kind {
    int64_t last_logged_nanos = 0;
    uint64_t held_back = 0;
  };
  const int64_t period_nanos_;
  Clock* const clock_;
  Mutex mu_;
  absl::flat_hash_map<std::string, Kind> kinds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_LOG_LIMITER_H_

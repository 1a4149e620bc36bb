// LogCapture: the gRPC log lines (gpr_log, which mesh logs through) written
// while it lives, for tests that a problem is reported. Lines still go to
// stderr. One at a time per process.
//
//   LogCapture log;
//   ... provoke the problem ...
//   EXPECT_TRUE(log.WaitForLine("could not parse"));
//
// Thread-safe.
#ifndef MESH_TESTS_SUPPORT_LOG_CAPTURE_H_
#define MESH_TESTS_SUPPORT_LOG_CAPTURE_H_

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace mesh::testing {

class LogCapture {
 public:
  LogCapture();
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // The lines so far, each "E message" (severity letter, then the message).
  std::vector<std::string> Lines() const;
  // Waits (bounded) until a line contains every one of `parts`; false if
  // none did within `timeout`.
  bool WaitForLine(const std::vector<std::string>& parts,
                   absl::Duration timeout = absl::Seconds(10)) const;
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_LOG_CAPTURE_H_

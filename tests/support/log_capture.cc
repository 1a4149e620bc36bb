#include "tests/support/log_capture.h"

#include <grpc/support/log.h>

#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "src/base/mutex.h"

namespace mesh::testing {
namespace {

internal::Mutex mu;
std::vector<std::string>* lines ABSL_GUARDED_BY(mu) = nullptr;

void Capture(gpr_log_func_args* args) {
  std::string line =
      absl::StrCat(std::string(1, gpr_log_severity_string(args->severity)[0]),
                   " ", args->message);
  std::fprintf(stderr, "%s\n", line.c_str());
  internal::MutexLock lock(&mu);
  if (lines != nullptr) lines->push_back(std::move(line));
}

}  // namespace

LogCapture::LogCapture() {
  {
    internal::MutexLock lock(&mu);
    lines = new std::vector<std::string>();
  }
  gpr_set_log_function(&Capture);
}

LogCapture::~LogCapture() {
  gpr_set_log_function(nullptr);
  internal::MutexLock lock(&mu);
  delete lines;
  lines = nullptr;
}

std::vector<std::string> LogCapture::Lines() const {
  internal::MutexLock lock(&mu);
  return *lines;
}

bool LogCapture::WaitForLine(const std::vector<std::string>& parts,
                             absl::Duration timeout) const {
  auto found = [&parts]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    for (const std::string& line : *lines) {
      bool all = true;
      for (const std::string& p : parts) all &= absl::StrContains(line, p);
      if (all) return true;
    }
    return false;
  };
  internal::MutexLock lock(&mu);
  return mu.AwaitWithTimeout(absl::Condition(&found), timeout);
}

}  // namespace mesh::testing

#include "tools/common/process_stats.h"

#include <fstream>
#include <string>

#include "absl/strings/numbers.h"

namespace mesh::tools {

int ThreadsOfThisProcess() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    int n = 0;
    if (line.rfind("Threads:", 0) == 0 &&
        absl::SimpleAtoi(line.substr(8), &n)) {
      return n;
    }
  }
  return -1;
}

}  // namespace mesh::tools

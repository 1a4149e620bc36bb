#include "tools/common/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <thread>
#include <utility>

namespace mesh::tools {
namespace {

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void WatchTerminationSignals(absl::AnyInvocable<int()> on_signal, int exit_at) {
  // Detached: it blocks in sigwait until the process exits.
  std::thread([on_signal = std::move(on_signal), exit_at]() mutable {
    sigset_t set = TerminationSignals();
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (on_signal() >= exit_at) _exit(128 + sig);
    }
  }).detach();
}

}  // namespace mesh::tools

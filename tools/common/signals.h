// Termination signals for the tools: SIGINT and SIGTERM handed to a thread
// of their own (sigwait), so that the tool can end its waits cleanly, and
// the process left at once when they keep coming.
//
//   BlockTerminationSignals();  // first thing, before any thread starts
//   ...
//   WatchTerminationSignals([run] { return run->Interrupt(); }, 3);
//
// Process-wide; call each once, from the main thread.
#ifndef MESH_TOOLS_COMMON_SIGNALS_H_
#define MESH_TOOLS_COMMON_SIGNALS_H_

#include "absl/functional/any_invocable.h"

namespace mesh::tools {

// Blocks SIGINT and SIGTERM in this thread, so that every thread started
// later inherits the mask and only the watcher's sigwait sees them.
void BlockTerminationSignals();

// Starts a detached thread that waits for SIGINT/SIGTERM and calls
// `on_signal` for each; it returns how many the tool has seen. Once that is
// `exit_at` or more, the process exits at once with 128 + the signal.
void WatchTerminationSignals(absl::AnyInvocable<int()> on_signal, int exit_at);

}  // namespace mesh::tools

#endif  // MESH_TOOLS_COMMON_SIGNALS_H_

// What this process uses, read from /proc/self: for the tests and
// benchmarks that check that subscriptions or streams hold no thread.
//
//   int before = ThreadsOfThisProcess();
//
// Thread-safe.
#ifndef MESH_TOOLS_COMMON_PROCESS_STATS_H_
#define MESH_TOOLS_COMMON_PROCESS_STATS_H_

namespace mesh::tools {

// The process's thread count ("Threads:" of /proc/self/status); -1 if it
// cannot be read.
int ThreadsOfThisProcess();

}  // namespace mesh::tools

#endif  // MESH_TOOLS_COMMON_PROCESS_STATS_H_

// DirectoryEvents: which of a set of directories had an entry written,
// created, deleted or renamed in or out, without blocking and without a
// thread (Linux inotify, read non-blocking). A directory, not a file, is
// what gets watched: agents replace a file by renaming a new one over it,
// and Kubernetes swaps a volume's `..data` symlink, so a watch on the file
// itself would follow the old inode.
//
//   auto events = DirectoryEvents::Create();  // UNIMPLEMENTED off Linux
//   absl::StatusOr<int> id = (*events)->Watch("/var/run/secrets/mesh");
//   bool overflowed = false;
//   std::vector<int> changed = (*events)->Drain(&overflowed);
//
// Thread-compatible: the owner serializes calls.
#ifndef MESH_SRC_BASE_DIRECTORY_EVENTS_H_
#define MESH_SRC_BASE_DIRECTORY_EVENTS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mesh::internal {

class DirectoryEvents {
 public:
  // UNIMPLEMENTED where there is no inotify; UNAVAILABLE naming the system
  // error when an instance cannot be had (say, the per-user limit,
  // fs.inotify.max_user_instances).
  static absl::StatusOr<std::unique_ptr<DirectoryEvents>> Create();
  ~DirectoryEvents();
  DirectoryEvents(const DirectoryEvents&) = delete;
  DirectoryEvents& operator=(const DirectoryEvents&) = delete;

  // Watches `dir` (a symlink to a directory is followed). The id of its
  // watch: the same for the same directory however it is named, so callers
  // count their uses. UNAVAILABLE naming the directory and the system error
  // (missing, not a directory, no permission, the watch limit).
  absl::StatusOr<int> Watch(const std::string& dir);
  // Ends the watch `id`. Unknown ids are ignored.
  void Unwatch(int id);

  // The ids of the watches that saw an event since the last call, each
  // once. `*overflowed` is set when the kernel dropped events: then any
  // directory may have changed.
  std::vector<int> Drain(bool* overflowed);

 private:
  explicit DirectoryEvents(int fd) : fd_(fd) {}
  const int fd_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BASE_DIRECTORY_EVENTS_H_

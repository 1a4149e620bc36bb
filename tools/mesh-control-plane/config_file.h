// Reading the control plane's config file, bounded: a stamp that tells
// whether the file changed without reading it, and a read that refuses a
// file over a size limit.
//
//   absl::StatusOr<FileStamp> now = StampFile(path);
//   if (now.ok() && *now != last) text = ReadConfigFile(path, max_bytes);
//
// Pure functions over the file system; thread-safe.
#ifndef MESH_TOOLS_MESH_CONTROL_PLANE_CONFIG_FILE_H_
#define MESH_TOOLS_MESH_CONTROL_PLANE_CONFIG_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace mesh::controlplane {

// Default limit on the config file's size (--max-config-bytes).
inline constexpr int64_t kDefaultMaxConfigBytes = 64 << 20;

// What identifies one version of a file: a replacement (new inode), an edit
// in place (size, modification or change time, in nanoseconds) all change
// it.
struct FileStamp {
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t size = 0;
  int64_t modified_ns = 0;
  int64_t changed_ns = 0;

  bool operator==(const FileStamp& o) const {
    return device == o.device && inode == o.inode && size == o.size &&
           modified_ns == o.modified_ns && changed_ns == o.changed_ns;
  }
  bool operator!=(const FileStamp& o) const { return !(*this == o); }
};

// NOT_FOUND naming the path and the reason if it cannot be stat'ed.
absl::StatusOr<FileStamp> StampFile(const std::string& path);

// The file's contents. NOT_FOUND if it cannot be read; RESOURCE_EXHAUSTED
// naming the size and the limit if it holds more than `max_bytes` (checked
// before and while reading, so a file that grows meanwhile is refused too,
// and at most max_bytes and one 64 KiB chunk are ever held).
absl::StatusOr<std::string> ReadConfigFile(const std::string& path,
                                           int64_t max_bytes);

}  // namespace mesh::controlplane

#endif  // MESH_TOOLS_MESH_CONTROL_PLANE_CONFIG_FILE_H_

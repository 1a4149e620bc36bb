#include "tools/mesh-control-plane/config_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace mesh::controlplane {
namespace {

int64_t Nanos(const timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::string TooLarge(const std::string& path, const std::string& size,
                     int64_t max_bytes) {
  return absl::StrCat(path, " is ", size, " bytes, over the limit of ",
                      max_bytes, " (--max-config-bytes)");
}

}  // namespace

absl::StatusOr<FileStamp> StampFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  FileStamp s;
  s.device = st.st_dev;
  s.inode = st.st_ino;
  s.size = st.st_size;
  s.modified_ns = Nanos(st.st_mtim);
  s.changed_ns = Nanos(st.st_ctim);
  return s;
}

absl::StatusOr<std::string> ReadConfigFile(const std::string& path,
                                           int64_t max_bytes) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"),
                                             &std::fclose);
  if (file == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  struct stat st;
  if (fstat(fileno(file.get()), &st) == 0 && st.st_size > max_bytes) {
    return absl::ResourceExhaustedError(
        TooLarge(path, absl::StrCat(st.st_size), max_bytes));
  }
  std::string text;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
    text.append(buffer, n);
    if (static_cast<int64_t>(text.size()) > max_bytes) {
      return absl::ResourceExhaustedError(
          TooLarge(path, absl::StrCat("more than ", max_bytes), max_bytes));
    }
  }
  if (std::ferror(file.get())) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path));
  }
  return text;
}

}  // namespace mesh::controlplane

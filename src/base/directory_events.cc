#include "src/base/directory_events.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "absl/strings/str_cat.h"

#ifdef __linux__
#include <sys/inotify.h>
#endif

namespace mesh::internal {

#ifdef __linux__

namespace {

// What replaces or removes a file in place: written and closed, renamed in
// (an agent's new file; Kubernetes' `..data` symlink swap), created,
// deleted, renamed away. IN_ONLYDIR: a file given as a directory fails.
constexpr uint32_t kMask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
                           IN_CREATE | IN_DELETE | IN_ONLYDIR;

std::string SystemError(int error) {
  char buffer[256];
  // The GNU strerror_r returns the message; the XSI one fills the buffer.
  auto message = strerror_r(error, buffer, sizeof(buffer));
  if constexpr (std::is_same_v<decltype(message), char*>) {
    return message;
  } else {
    return buffer;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<DirectoryEvents>> DirectoryEvents::Create() {
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("inotify_init1: ", SystemError(errno)));
  }
  return std::unique_ptr<DirectoryEvents>(new DirectoryEvents(fd));
}

DirectoryEvents::~DirectoryEvents() { close(fd_); }

absl::StatusOr<int> DirectoryEvents::Watch(const std::string& dir) {
  int id = inotify_add_watch(fd_, dir.c_str(), kMask);
  if (id < 0) {
    return absl::UnavailableError(absl::StrCat("cannot watch directory '", dir,
                                               "': ", SystemError(errno)));
  }
  return id;
}

void DirectoryEvents::Unwatch(int id) { inotify_rm_watch(fd_, id); }

std::vector<int> DirectoryEvents::Drain(bool* overflowed) {
  std::vector<int> ids;
  // Aligned as the kernel writes struct inotify_event records.
  alignas(struct inotify_event) char buffer[4096];
  for (;;) {
    ssize_t n = read(fd_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: nothing more
    for (ssize_t at = 0;
         at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      if (event->mask & IN_Q_OVERFLOW) *overflowed = true;
      if (event->wd >= 0 &&
          std::find(ids.begin(), ids.end(), event->wd) == ids.end()) {
        ids.push_back(event->wd);
      }
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  return ids;
}

#else  // !__linux__

absl::StatusOr<std::unique_ptr<DirectoryEvents>> DirectoryEvents::Create() {
  return absl::UnimplementedError("no inotify on this system");
}
DirectoryEvents::~DirectoryEvents() = default;
absl::StatusOr<int> DirectoryEvents::Watch(const std::string& dir) {
  return absl::UnimplementedError(
      absl::StrCat("cannot watch directory '", dir, "': no inotify"));
}
void DirectoryEvents::Unwatch(int /*id*/) {}
std::vector<int> DirectoryEvents::Drain(bool* /*overflowed*/) { return {}; }

#endif  // __linux__

}  // namespace mesh::internal

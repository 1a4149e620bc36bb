#include "tests/support/http_probe.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace mesh::testing {
namespace {

// Reads what is there within `deadline` into `out`; false when the peer
// closed or the time ran out with nothing read.
bool ReadSome(int fd, absl::Time deadline, std::string* out) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return false;
  pollfd p{fd, POLLIN, 0};
  const int ms = static_cast<int>(absl::ToInt64Milliseconds(left)) + 1;
  if (poll(&p, 1, ms) <= 0) return false;
  char chunk[16384];
  const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
  if (n <= 0) return false;
  out->append(chunk, static_cast<size_t>(n));
  return true;
}

// Takes the complete chunks at the front of `raw` into `text`; false when
// the last chunk (size 0) was read.
bool Dechunk(std::string* raw, std::string* text) {
  while (true) {
    const size_t eol = raw->find("\r\n");
    if (eol == std::string::npos) return true;
    size_t size = 0;
    const std::string hex = raw->substr(0, raw->find_first_of(";\r"));
    if (!absl::SimpleHexAtoi(hex, &size)) return false;
    if (size == 0) return false;
    if (raw->size() < eol + 2 + size + 2) return true;
    text->append(*raw, eol + 2, size);
    raw->erase(0, eol + 2 + size + 2);
  }
}

int StatusOf(const std::string& head) {
  // "HTTP/1.1 200 OK"
  std::vector<std::string> parts =
      absl::StrSplit(head, absl::MaxSplits(' ', 2));
  int status = 0;
  if (parts.size() >= 2) (void)absl::SimpleAtoi(parts[1], &status);
  return status;
}

}  // namespace

std::string HttpAnswer::Header(const std::string& name) const {
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::EqualsIgnoreCase(line.substr(0, colon), name)) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "";
}

std::string NonLoopbackAddress() {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  std::string found;
  for (ifaddrs* i = all; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    found = text;
  }
  freeifaddrs(all);
  return found;
}

int ConnectTo(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return -1;
  std::string host = address.substr(0, colon);
  int port = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port)) return -1;
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = AF_INET;
  if (!host.empty() && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
    family = AF_INET6;
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET6, host.c_str(), &in6->sin6_addr) != 1) return -1;
    length = sizeof(*in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host.c_str(), &in->sin_addr) != 1) return -1;
    length = sizeof(*in);
  }
  const int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

HttpAnswer HttpExchange(const std::string& address, const std::string& request,
                        absl::Duration timeout) {
  HttpAnswer answer;
  const int fd = ConnectTo(address);
  if (fd < 0) return answer;
  const absl::Time deadline = absl::Now() + timeout;
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n =
        send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer (and close) early
    sent += static_cast<size_t>(n);
  }
  std::string raw;
  while (ReadSome(fd, deadline, &raw)) {
  }
  close(fd);
  const size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return answer;
  answer.head = raw.substr(0, end);
  answer.status = StatusOf(answer.head);
  std::string rest = raw.substr(end + 4);
  if (absl::EqualsIgnoreCase(answer.Header("Transfer-Encoding"), "chunked")) {
    Dechunk(&rest, &answer.body);
  } else {
    answer.body = std::move(rest);
  }
  return answer;
}

HttpAnswer HttpGet(const std::string& address, const std::string& target,
                   const std::string& method, absl::Duration timeout) {
  return HttpExchange(address,
                      absl::StrCat(method, " ", target,
                                   " HTTP/1.1\r\nHost: admin\r\n"
                                   "Connection: close\r\n\r\n"),
                      timeout);
}

EventStream::EventStream(const std::string& address, const std::string& target)
    : fd_(ConnectTo(address)) {
  if (fd_ < 0) return;
  const std::string request = absl::StrCat(
      "GET ", target,
      " HTTP/1.1\r\nHost: admin\r\nAccept: text/event-stream\r\n\r\n");
  if (send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd_);
    fd_ = -1;
  }
}

EventStream::~EventStream() {
  if (fd_ >= 0) close(fd_);
}

bool EventStream::Fill(absl::Time deadline) {
  if (fd_ < 0 || !ReadSome(fd_, deadline, &buffer_)) return false;
  if (!head_done_) {
    const size_t end = buffer_.find("\r\n\r\n");
    if (end == std::string::npos) return true;
    status_ = StatusOf(buffer_.substr(0, end));
    buffer_.erase(0, end + 4);
    head_done_ = true;
  }
  return Dechunk(&buffer_, &text_) || !text_.empty();
}

absl::StatusOr<std::string> EventStream::Next(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    size_t end;
    while ((end = text_.find("\n\n")) != std::string::npos) {
      const std::string block = text_.substr(0, end);
      text_.erase(0, end + 2);
      std::string name, data;
      for (absl::string_view line : absl::StrSplit(block, '\n')) {
        if (absl::ConsumePrefix(&line, "event: ")) name = std::string(line);
        if (absl::ConsumePrefix(&line, "data: ")) data += std::string(line);
      }
      if (data.empty() && name.empty()) continue;  // a comment
      return name.empty() ? data : absl::StrCat("event ", name, ": ", data);
    }
    if (!Fill(deadline)) {
      return absl::DeadlineExceededError(absl::StrCat(
          "no event within the time given (status ", status_, ")"));
    }
  }
}

}  // namespace mesh::testing

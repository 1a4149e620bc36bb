// A raw HTTP/1.1 client for the admin page's tests: plain sockets, so that
// a test can send what no well-behaved client would (a huge query, a body,
// nothing at all) and read a server-sent event stream line by line.
//
//   HttpAnswer a = HttpGet("127.0.0.1:9990", "/healthz");
//   EXPECT_EQ(a.status, 200);
//
// Every wait is bounded by the timeout given. Not thread-safe per object.
#ifndef MESH_TESTS_SUPPORT_HTTP_PROBE_H_
#define MESH_TESTS_SUPPORT_HTTP_PROBE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace mesh::testing {

struct HttpAnswer {
  int status = 0;    // 0: no answer (the connection closed or timed out)
  std::string head;  // status line and headers, as sent
  std::string body;  // de-chunked when chunked
  // The value of header `name` (case-insensitive); empty when absent.
  std::string Header(const std::string& name) const;
};

// An IPv4 address of this host's own other than loopback ("" if none):
// connecting to it, a test is a peer that is not on loopback.
std::string NonLoopbackAddress();

// Connects to "ip:port" (IPv4 or [IPv6]); -1 when it cannot.
int ConnectTo(const std::string& address);

// Sends `request` as given on a new connection and reads the answer until
// the server closes or `timeout` passes ("Connection: close" belongs in
// the request).
HttpAnswer HttpExchange(const std::string& address, const std::string& request,
                        absl::Duration timeout = absl::Seconds(5));

// GET (or another method) of `target` ("/path?query"), Connection: close.
HttpAnswer HttpGet(const std::string& address, const std::string& target,
                   const std::string& method = "GET",
                   absl::Duration timeout = absl::Seconds(5));

// A server-sent event stream: the request sent at construction, the
// events read as they come.
class EventStream {
 public:
  EventStream(const std::string& address, const std::string& target);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // The answer's status (after the head has come; 0 before or on error).
  int status() const { return status_; }
  // The next event's data line(s) (comments and the head skipped; an
  // "event: NAME" line is returned as "event NAME: data"), or an error
  // when `timeout` passes or the stream ends.
  absl::StatusOr<std::string> Next(absl::Duration timeout);

 private:
  bool Fill(absl::Time deadline);
  int fd_ = -1;
  int status_ = 0;
  bool head_done_ = false;
  std::string buffer_;  // raw bytes not yet parsed
  std::string text_;    // de-chunked body not yet parsed
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_HTTP_PROBE_H_

// mesh::curl: plain HTTP through the application's own libcurl handles
// (the mesh::curl library, mesh_curl; built when libcurl is found).
//
// The application keeps its CURL* easy handle and the options it sets on it
// (URL, method, body, headers, TLS, its callbacks) and hands the handle to
// mesh where it called curl_easy_perform. For each request mesh matches the
// channel's route (method, path, headers), picks an endpoint (P2C with
// Peak-EWMA, the request pending on it until its answer ends) and points the
// handle at it with CURLOPT_CONNECT_TO, so the URL, Host/:authority and TLS
// name stay the application's. It speaks HTTP/2 to endpoints that discovery
// says speak it (one connection per endpoint, reused), applies the route's
// timeout over all attempts, classifies the answer by its HTTP status (5xx a
// failure unless the route's response classes say otherwise), retries under
// the route's budget when the body can be sent again, and reports tap events
// and metrics as for gRPC calls.
//
//   auto books = *mesh->NewChannel("books:7001");
//   curl_easy_setopt(easy, CURLOPT_URL, "http://books:7001/books/1");
//   curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, OnBody);
//   curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
//   mesh::curl::Request request;
//   request.write = {OnBody, &body};  // libcurl cannot tell mesh: see below
//   mesh::curl::Result r = mesh::curl::Perform(*books, easy, request);
//   // r.code == CURLE_OK: curl_easy_getinfo(easy, ...) as after a perform
//
// libcurl has no getters for the options set on a handle, so what mesh
// needs and cannot read is given in a Request: the header list, the write
// and header callbacks, and whether the body can be sent again. The URL is
// read from the handle. Each attempt sets CURLOPT_CONNECT_TO,
// CURLOPT_HTTP_VERSION, CURLOPT_PIPEWAIT, the socket callbacks and (with
// `write` or `header` given) the write and header callbacks, and the header
// list when the route changes headers; after the request each is put back
// as the Request says the handle had it (or to libcurl's default). mesh
// ends an attempt at its deadline itself, so the handle's own
// CURLOPT_TIMEOUT_MS still bounds each attempt. docs/http.md lists what is
// honoured and what is not.
//
// Perform and Multi::Add are thread-safe; a handle is used by one request at
// a time. A Multi is driven (Poll) by one thread at a time.
#ifndef MESH_CURL_H_
#define MESH_CURL_H_

#include <curl/curl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "mesh/cancellation.h"
#include "mesh/channel.h"
#include "mesh/export.h"

namespace mesh {
namespace internal {
struct CurlRequests;
}

namespace curl {

// A callback curl hands response bytes to, with its pointer: a handle's
// CURLOPT_WRITEFUNCTION and CURLOPT_WRITEDATA (or CURLOPT_HEADERFUNCTION and
// CURLOPT_HEADERDATA). A null function with a non-null `data` is curl's
// default: fwrite to `data` as a FILE*.
struct MESH_EXPORT Sink {
  curl_write_callback function = nullptr;
  void* data = nullptr;
  bool given() const { return function != nullptr || data != nullptr; }
};

// Bytes of an answer mesh may still retry that it holds back from the
// application's callbacks; past it, the answer is delivered and no longer
// retried.
inline constexpr size_t kMaxHeldBytes = 64 * 1024;

// What the handle has that libcurl does not let mesh read.
struct MESH_EXPORT Request {
  // The list set with CURLOPT_HTTPHEADER (null: none): routes match on it
  // and tap shows it (names compared lower case). Must live until the
  // request ends.
  const curl_slist* headers = nullptr;
  // The request method, when the handle's CURLOPT_CUSTOMREQUEST does not
  // name it (libcurl reports the POST or PUT a body makes only once the
  // transfer has run). Empty: CURLOPT_CUSTOMREQUEST's, else GET.
  std::string method;
  // The handle's write and header callbacks. With either given, mesh puts
  // its own on each attempt, passes every byte on unchanged, and holds back
  // the answer of an attempt it may retry (up to kMaxHeldBytes) so that a
  // retried attempt's bytes never reach the application. With neither,
  // mesh leaves the handle's callbacks alone, and an attempt that got an
  // answer is never retried.
  Sink write;
  Sink header;
  // Whether the body can be sent again for a retry.
  enum class Body {
    kUnknown,  // as the method implies: none for GET, HEAD, OPTIONS,
               // DELETE and TRACE; one that cannot be sent again otherwise
    kNone,     // no body
    kBuffer,   // CURLOPT_POSTFIELDS or CURLOPT_COPYPOSTFIELDS: curl resends
    kRewind,   // a read callback that `seek` rewinds to the start
    kOnce,     // a read callback that cannot rewind: never retried
  };
  Body body = Body::kUnknown;
  curl_seek_callback seek = nullptr;  // with kRewind: CURLOPT_SEEKFUNCTION
  void* seek_data = nullptr;          // and CURLOPT_SEEKDATA
  // Time allowed for the request with all its attempts (the route's
  // timeout, if shorter, wins; infinite: the channel's default_timeout).
  absl::Duration timeout = absl::InfiniteDuration();
  // CURLOPT_HTTP_VERSION as the handle had it: used for endpoints whose
  // protocol discovery does not know, and put back afterwards.
  long http_version = CURL_HTTP_VERSION_NONE;
  // A destination discovery says does not exist (an address outside the
  // mesh): false refuses the request (CURLE_COULDNT_CONNECT, the status
  // naming it); true sends it as the handle says, without mesh — no
  // routing, balancing, retries, tap or metrics — as a sidecar forwards
  // traffic to a destination it does not know.
  bool pass_through_unknown = false;
  // Cancelling it ends the request: the transfer in flight is stopped (an
  // HTTP/2 server sees the stream reset) and the result is
  // CURLE_ABORTED_BY_CALLBACK with a CANCELLED status.
  std::shared_ptr<Cancellation> cancel;
};

// How a request ended.
struct MESH_EXPORT Result {
  // CURLE_OK when an HTTP answer came (any status: see http_status); the
  // last transfer's error; or, when mesh ended the request itself, the
  // code an application already handles for it: CURLE_COULDNT_CONNECT (no
  // endpoint), CURLE_OPERATION_TIMEDOUT (the timeout passed),
  // CURLE_ABORTED_BY_CALLBACK (cancelled), CURLE_PEER_FAILED_VERIFICATION
  // (the server is not the identity discovery named),
  // CURLE_BAD_FUNCTION_ARGUMENT (a request mesh cannot send: a malformed
  // URL, method or header, a handle in use elsewhere).
  CURLcode code = CURLE_OK;
  // The answer's HTTP status; 0 without one.
  long http_status = 0;
  // OK with an HTTP answer; otherwise why not, in words that name the
  // destination and the problem (as for a gRPC call).
  absl::Status status;
  // The address that answered (or was tried last); empty if none picked.
  std::string endpoint;
  // Attempts sent.
  uint32_t attempts = 0;
};

// Sends the request `easy` is set up for through `channel` and waits for
// it on the calling thread, which drives the transfers (and the
// application's callbacks run on it). The URL's path and query are sent
// to the channel's destination.
MESH_EXPORT Result Perform(Channel& channel, CURL* easy,
                           const Request& request = {});

// Many requests in flight on one thread: Add starts them, Poll drives their
// transfers and delivers their results. Connections are kept per Multi.
class MESH_EXPORT Multi {
 public:
  Multi();
  // Cancels the requests in flight and waits until each `done` has run.
  ~Multi();
  Multi(const Multi&) = delete;
  Multi& operator=(const Multi&) = delete;

  // Starts a request (as Perform); `done` runs once, from Poll (or the
  // destructor). `easy` and what `request` points to must live until then.
  void Add(Channel& channel, CURL* easy, Request request,
           absl::AnyInvocable<void(Result)> done);
  // Drives the transfers, running the application's callbacks and the
  // `done` of each request that ends, until none is in flight or `timeout`
  // has passed; returns how many are still in flight.
  size_t Poll(absl::Duration timeout);
  size_t in_flight() const;

 private:
  std::shared_ptr<internal::CurlRequests> state_;
};

}  // namespace curl
}  // namespace mesh

#endif  // MESH_CURL_H_

// The transport interface (a service-provider interface: it may change
// while mesh is 0.x): the HTTP/2 client that carries one request to one
// endpoint. The mesh picks the endpoint; the transport only sends. The
// default is gRPC (NewGrpcTransport, mesh/transport.h); an application
// plugs in its own HTTP/2 client by implementing Transport and setting
// MeshOptions::transport_factory.
//
//   mesh::TransportRequest req;
//   req.path = "/books.Library/GetBook";
//   req.body = serialized_request;
//   transport->Send(endpoint, std::move(req),
//                   [](mesh::TransportResponse r) { /* … */ });
//
// Implementations must be thread-safe.
#ifndef MESH_SPI_TRANSPORT_H_
#define MESH_SPI_TRANSPORT_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "mesh/cancellation.h"
#include "mesh/endpoint.h"
#include "mesh/export.h"
#include "mesh/metadata.h"

namespace mesh {

// The payload under which a failed call's status keeps the server's error
// details (absl::Status::GetPayload): the serialized google.rpc.Status that
// gRPC carries in the "grpc-status-details-bin" trailer, unchanged.
inline constexpr char kGrpcStatusDetailsUrl[] =
    "type.googleapis.com/google.rpc.Status";

struct MESH_EXPORT TransportRequest {
  std::string method = "POST";
  std::string scheme = "http";
  std::string authority;
  std::string path;  // "/pkg.Service/Method" for gRPC
  Metadata headers;
  std::string body;  // for gRPC: the serialized message, no framing
  absl::Time deadline = absl::InfiniteFuture();
  // The caller's cancellation, if any: when it is cancelled the transport
  // ends the request CANCELLED (telling the server, as gRPC's TryCancel
  // does). A transport watches it only while the request is in flight.
  std::shared_ptr<Cancellation> cancel;
  // The labels of the request's route ("route" = its name, and its metrics
  // labels), for the tap hook; null when the request has no route. Valid
  // until `done` has been called.
  const std::map<std::string, std::string>* route_labels = nullptr;
  // Which attempt of its call this is: 1 the first, more for a retry or a
  // hedge (`hedge`: sent beside the call's earlier attempts, not after
  // them), for the tap hook.
  uint32_t attempt = 1;
  bool hedge = false;
};

struct MESH_EXPORT TransportResponse {
  // gRPC status (OK, the server's status with its error details under
  // kGrpcStatusDetailsUrl, DEADLINE_EXCEEDED, UNAVAILABLE for an endpoint
  // that could not be reached, CANCELLED on shutdown or cancellation).
  absl::Status status;
  // HTTP :status when the transport knows it; 0 when it does not (no
  // response: a connection that failed, a call cancelled before an answer).
  int http_status = 0;
  // True when the request certainly never reached the server (the connection
  // could not be made): the mesh may retry it on any route, even one that is
  // not retryable. False when unsure.
  bool never_sent = false;
  Metadata headers;
  std::string body;
  Metadata trailers;
};

// The events of one stream, from a transport to the mesh. A transport calls
// them one at a time per stream, on any thread (possibly inside the call
// that caused them); they must not block.
class MESH_EXPORT TransportStreamObserver {
 public:
  virtual ~TransportStreamObserver() = default;
  // The server's initial metadata: at most once, before any message.
  virtual void OnHeaders(Metadata headers) = 0;
  // The answer to one Read: a message (ok), or none (!ok: the server sent
  // no more, or the stream broke; OnClose follows).
  virtual void OnReadDone(bool ok, std::string message) = 0;
  // The end of one Write: !ok when the stream broke (OnClose follows).
  virtual void OnWriteDone(bool ok) = 0;
  // The stream's end: status, headers and trailers as for a unary call
  // (`body` unused). The last event; after it the stream does nothing.
  virtual void OnClose(TransportResponse response) = 0;
};

// One open stream to one endpoint. At most one Write and one Read
// outstanding at a time, each answered by its observer event; calls after
// OnClose are ignored. Thread-safe.
class MESH_EXPORT TransportStream {
 public:
  virtual ~TransportStream() = default;
  virtual void Write(std::string message) = 0;
  // No more writes (the client's half-close).
  virtual void WritesDone() = 0;
  virtual void Read() = 0;
  // Ends the stream CANCELLED, telling the server; OnClose follows.
  virtual void Cancel() = 0;
};

class MESH_EXPORT Transport {
 public:
  using Callback = absl::AnyInvocable<void(TransportResponse)>;

  virtual ~Transport() = default;

  // Sends `request` to `endpoint`; `done` runs exactly once, on any thread
  // (possibly inside Send), and must not block. `endpoint` is valid only until
  // `done` has been called: copy what is needed after that.
  virtual void Send(const Endpoint& endpoint, TransportRequest request,
                    Callback done) = 0;

  // Sends `request` to `endpoint` and waits for the answer on the calling
  // thread, which the transport may use to drive the request itself, as a
  // synchronous gRPC call does (the gRPC transport does: no other thread
  // wakes for it). The mesh's synchronous calls (Channel::CallRaw, Call)
  // use it. Default: Send, then wait for `done`.
  virtual TransportResponse SendAndWait(const Endpoint& endpoint,
                                        TransportRequest request);

  // Opens a stream of `request.path` to `endpoint` (`request.body` unused).
  // `observer` must live until its OnClose has returned; the stream may be
  // destroyed at any time (destroying it before OnClose cancels it). The
  // default: a transport that cannot stream closes it UNIMPLEMENTED.
  virtual std::unique_ptr<TransportStream> StartStream(
      const Endpoint& endpoint, TransportRequest request,
      TransportStreamObserver* observer);

  // The addresses that are live now: connections to any other address may be
  // closed. Called after each endpoint update.
  virtual void RetainOnly(const std::vector<std::string>& addresses) {
    (void)addresses;
  }

  // What the transport knows of its connection to `address`, for
  // Mesh::Describe(): name/value pairs (the gRPC transport's: "state",
  // "tls", "server_id", handshake counts and the last refusal). Default:
  // none.
  virtual std::vector<std::pair<std::string, std::string>> DescribeConnection(
      const std::string& address) const {
    (void)address;
    return {};
  }

  // Fails every call and stream in flight (CANCELLED), waits until their
  // callbacks (OnClose) have run, and fails later Sends and streams at once
  // (UNAVAILABLE). Idempotent.
  virtual void Shutdown() {}
};

}  // namespace mesh

#endif  // MESH_SPI_TRANSPORT_H_

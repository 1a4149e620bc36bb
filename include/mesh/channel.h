// Channel: calls to one logical destination through the mesh.
//
// Each call picks an endpoint with the channel's balancer and sends the
// request with the mesh's transport. Statuses are gRPC's: UNAVAILABLE when the
// destination has no endpoints (the message names the target),
// DEADLINE_EXCEEDED when the call's deadline passes, the server's otherwise.
//
//   std::unique_ptr<mesh::Channel> books = *mesh->NewChannel("books:7001");
//   mesh::CallOptions opts;
//   opts.timeout = absl::Milliseconds(200);
//   absl::Status s = books->Call("/books.Library/GetBook", req, &resp, opts);
//
// Thread-safe. A Channel may outlive its Mesh; its calls then fail
// UNAVAILABLE.
#ifndef MESH_CHANNEL_H_
#define MESH_CHANNEL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "mesh/balancer.h"
#include "mesh/cancellation.h"
#include "mesh/export.h"
#include "mesh/service_config.h"
#include "mesh/stream.h"
#include "mesh/transport.h"

namespace google::protobuf {
class MessageLite;
}

namespace mesh {

namespace internal {
class ChannelCore;
struct ChannelAccess;
}  // namespace internal

// Per-call settings.
struct MESH_EXPORT CallOptions {
  // Time allowed for the call, from its start; the channel's
  // default_timeout if infinite.
  absl::Duration timeout = absl::InfiniteDuration();
  // An absolute deadline, as gRPC's ClientContext takes; the earlier of
  // this and `timeout` bounds the call (and the route's timeout, if
  // shorter). Infinite: none.
  absl::Time deadline = absl::InfiniteFuture();
  // Request metadata; names lower case ([0-9a-z_.-]), "-bin" for binary.
  Metadata metadata;
  // Cancelling it ends the call CANCELLED: at once while it waits for
  // endpoints or routes, by cancelling the request in flight (the server
  // sees it), or when a retry's backoff or a fault's delay ends. Null: the
  // call can only end by itself or its deadline.
  std::shared_ptr<Cancellation> cancel;
};

// What came back with a typed call's answer, besides the message.
struct MESH_EXPORT ResponseInfo {
  Metadata headers;      // the server's initial metadata
  Metadata trailers;     // the server's trailing metadata
  std::string endpoint;  // the address that served it; empty if none picked
};

// The outcome of a raw call.
struct MESH_EXPORT CallResult {
  // The server's status (its error details under kGrpcStatusDetailsUrl),
  // or the mesh's: UNAVAILABLE (no endpoints), DEADLINE_EXCEEDED,
  // CANCELLED, INVALID_ARGUMENT (a malformed call).
  absl::Status status;
  std::string body;      // the serialized response message when status is OK
  Metadata headers;      // the server's initial metadata
  Metadata trailers;     // the server's trailing metadata
  std::string endpoint;  // the address that served it; empty if none picked
};

class MESH_EXPORT Channel {
 public:
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // The destination this channel calls, as given to NewChannel.
  const std::string& target() const;

  // Blocking raw call of `method` ("/pkg.Service/Method") with the serialized
  // request. INVALID_ARGUMENT for a malformed method or metadata. Runs on
  // the calling thread, which sends and waits for each attempt itself; not
  // from inside an asynchronous call's `done` (which must not block).
  CallResult CallRaw(absl::string_view method, std::string request,
                     const CallOptions& options = {});
  // Asynchronous raw call: `done` runs exactly once, on a mesh or gRPC
  // thread (or inline if the call fails before sending), and must not block.
  void CallRawAsync(absl::string_view method, std::string request,
                    const CallOptions& options,
                    absl::AnyInvocable<void(CallResult)> done);

  // Blocking typed call. On OK `response` holds the parsed reply; a reply
  // that does not parse is INTERNAL.
  // `info`, if not null, receives the response's metadata and endpoint
  // (also on failure).
  absl::Status Call(absl::string_view method,
                    const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite* response,
                    const CallOptions& options = {},
                    ResponseInfo* info = nullptr);
  // Asynchronous typed call; `response` (and `info`, if not null) must live
  // until `done` runs.
  void CallAsync(absl::string_view method,
                 const google::protobuf::MessageLite& request,
                 google::protobuf::MessageLite* response,
                 const CallOptions& options,
                 absl::AnyInvocable<void(absl::Status)> done);
  void CallAsync(absl::string_view method,
                 const google::protobuf::MessageLite& request,
                 google::protobuf::MessageLite* response,
                 const CallOptions& options, ResponseInfo* info,
                 absl::AnyInvocable<void(absl::Status)> done);

  // Opens a stream of `method` (see mesh/stream.h): `observer` gets its
  // events and must live until its OnClose has returned. Failures to start
  // (a malformed method, no endpoints, shutdown) come as OnClose.
  std::unique_ptr<ClientStream> StartStream(absl::string_view method,
                                            const CallOptions& options,
                                            StreamObserver* observer);

  // The balancers' view of the endpoints: the target's, then those of the
  // backends its routes and traffic split have sent to (xDS clusters,
  // Linkerd dst_overrides).
  std::vector<EndpointStats> EndpointStatsSnapshot() const;

  // Waits up to `timeout` for the destination to have endpoints: OK, or the
  // UNAVAILABLE a call would get now (not answered yet, does not exist, not
  // a mesh service). Returns early when discovery's answer is final. With a
  // source whose routes decide the backends (xDS), waits for the routes,
  // then for one of their backends to have endpoints.
  absl::Status WaitForEndpoints(absl::Duration timeout) const;

  // The destination's service config (routes, retry budget, split) as last
  // received from discovery; nullopt before one arrives or if the source
  // has none.
  std::optional<ServiceConfig> service_config() const;

 private:
  friend class Mesh;
  friend struct internal::ChannelAccess;
  explicit Channel(std::shared_ptr<internal::ChannelCore> core);
  std::shared_ptr<internal::ChannelCore> core_;
};

}  // namespace mesh

#endif  // MESH_CHANNEL_H_

// StreamWatch keeps one server-streaming gRPC call open for as long as its
// owner wants it: it starts the call, hands each message to a callback, and
// when the stream ends — with OK or an error — starts a new one after a
// jittered exponential backoff (reset once a stream has delivered a message,
// unless it ended on one that was rejected).
// Statuses listed as final (for Linkerd: InvalidArgument, FailedPrecondition)
// stop it.
//
// Messages arrive as raw bytes (gRPC's generic stub) and are parsed by the
// owner's callback, not by gRPC: a message gRPC cannot deserialize (a string
// that is not UTF-8, nesting past protobuf's limit) would otherwise fail the
// read while the call stays open, and the stream would stop for good without
// a word. Here a message the callback rejects ends the stream: the call is
// cancelled, the reason is logged and kept, and a new stream resynchronizes
// after backoff.
//
//   StreamWatch watch(channel, timers, backoff, hooks);
//   watch.Start();
//   ...
//   watch.Stop();  // no hook runs after this returns
//
// Thread-safe. Hooks are called one at a time, in order, never under the
// watch's lock (a hook may read State() or Stop the watch) and never after
// Stop() returns.
#ifndef MESH_SRC_DISCOVERY_COMMON_STREAM_WATCH_H_
#define MESH_SRC_DISCOVERY_COMMON_STREAM_WATCH_H_

#include <google/protobuf/message.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mesh/discovery.h"
#include "src/base/backoff.h"
#include "src/base/internal_export.h"
#include "src/base/timer_thread.h"

namespace mesh::internal {

class StreamWatch {
 public:
  struct Hooks {
    // The server-streaming method, "/package.Service/Method".
    std::string method;
    // The serialized request: the stream's one message to the server.
    std::string request;
    // Names the stream in log lines, e.g. "linkerd Get 'books:7001'".
    std::string name;
    // One message as received; `first` is true until a message of the
    // stream has been applied. OK: applied. An error rejects it: the stream
    // is cancelled and reopened after backoff (so that the next stream's
    // first message resynchronizes the state), and the error is the reason
    // the stream ended (on_end, State().last_error). The callback logs what
    // it rejected; the watch logs that the stream restarts.
    std::function<absl::Status(const grpc::ByteBuffer& message, bool first)>
        on_message;
    // A stream ended; `final` when no other will be started. `status` says
    // why: the server's status, or the rejection of a message.
    std::function<void(const absl::Status& status, bool final)> on_end;
    // Codes that end the watch instead of reconnecting.
    std::vector<absl::StatusCode> final_codes;
  };

  // `timers` runs the reconnects (shared: a Mesh lends its own).
  StreamWatch(std::shared_ptr<grpc::Channel> channel,
              std::shared_ptr<TimerThread> timers, ExponentialBackoff backoff,
              Hooks hooks);
  ~StreamWatch();

  void Start();

  // Cancels the open stream and any pending reconnect and waits until no
  // hook is running; from inside a hook it returns at once, and no hook
  // runs after that one. Idempotent.
  void Stop();

  DiscoverySubscription::State State() const;

 private:
  class Core;
  class Attempt;
  // Shared with the open stream, which may outlive a watch stopped from
  // inside one of its hooks.
  const std::shared_ptr<Core> core_;
};

// Parses a message received as raw bytes. INTERNAL naming the message type
// and size when it does not parse: protobuf refuses strings that are not
// UTF-8 and nesting deeper than 100 levels.
MESH_INTERNAL_EXPORT absl::Status ParseReceived(
    const grpc::ByteBuffer& bytes, google::protobuf::Message* message);

// A grpc::Status as an absl::Status (the codes are the same).
absl::Status ToAbslStatus(const grpc::Status& status);

}  // namespace mesh::internal

#endif  // MESH_SRC_DISCOVERY_COMMON_STREAM_WATCH_H_

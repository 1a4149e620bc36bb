// External calls: HTTP requests whose attempts the application's own HTTP
// client carries (mesh::curl). The channel treats such a request as a call:
// it matches the route by method, path and headers, waits for endpoints,
// picks one per attempt, applies the route's timeouts, classifies each
// answer by its HTTP status, retries under the budget and records the
// metrics; each attempt is handed to the call's ExternalAttempts, which
// sends it to the picked endpoint with the application's client.
//
//   ExternalCall call{"GET", "/books/1", headers, /*replayable=*/true,
//                     options, &attempts};
//   StartExternalCall(channel, std::move(call), [](CallResult r) { ... });
//
// Thread-safe; `attempts` must live until `done` has run.
#ifndef MESH_SRC_CHANNEL_EXTERNAL_CALL_H_
#define MESH_SRC_CHANNEL_EXTERNAL_CALL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "mesh/channel.h"
#include "mesh/service_config.h"
#include "mesh/spi/transport.h"
#include "src/base/internal_export.h"

namespace mesh::internal {

class TapHub;
struct IdentityMaterial;

// What a client needs to know before an attempt about its answer: whether
// an answer with a given HTTP status may still be retried (so that the
// client holds its bytes back from the application until it knows).
class MESH_INTERNAL_EXPORT AttemptRetryHint {
 public:
  // The call may be retried at all (its route retries, its body is kept).
  bool may_retry = false;
  // The route's response classes and retry statuses (null: none).
  const std::vector<ResponseClass>* response_classes = nullptr;
  const std::vector<absl::StatusCode>* retry_on = nullptr;
  const std::vector<HttpStatusRange>* retry_on_http_status = nullptr;
  // Whether an answer with `http_status` could be retried.
  bool MayRetry(int http_status) const;
};

// The attempts of one external call: Transport::Send sends one (the
// channel never calls SendAndWait or StartStream), its request carrying the
// method, headers (as the route's filters left them), deadline,
// cancellation and route labels; not the authority, path or body, which
// the client has. Called one attempt at a time, from any thread.
class ExternalAttempts : public Transport {
 public:
  // Before each attempt's Send.
  virtual void BeginAttempt(const AttemptRetryHint& hint) = 0;
  // After an attempt was answered: true when bytes of the answer already
  // reached the application, which forbids retrying it.
  virtual bool Committed() const = 0;
};

struct ExternalCall {
  std::string method;       // an HTTP method token ("GET")
  std::string path;         // from '/', with its query
  Metadata headers;         // names lower case
  bool replayable = false;  // the body can be sent again
  CallOptions options;
  ExternalAttempts* attempts = nullptr;
};

// Starts `call` on `channel`; `done` runs once, on any thread (possibly
// inside this call), with the status of the last attempt (OK for any HTTP
// answer) or the mesh's reason (no endpoints, deadline, cancellation,
// INVALID_ARGUMENT for a malformed method, path or header).
MESH_INTERNAL_EXPORT void StartExternalCall(
    Channel& channel, ExternalCall call,
    absl::AnyInvocable<void(CallResult)> done);

// The tap hook of the channel's Mesh, for the client's tap events.
MESH_INTERNAL_EXPORT TapHub& TapHubOf(Channel& channel);

// Discovery has answered that the channel's destination does not exist (an
// address outside the mesh), as opposed to not having answered yet or
// having no endpoints now.
MESH_INTERNAL_EXPORT bool DestinationMissing(Channel& channel);

// The Mesh's identity as it is now (MeshOptions::identity), for mutual TLS
// to endpoints with an identity; null without one.
MESH_INTERNAL_EXPORT std::shared_ptr<const IdentityMaterial> IdentityOf(
    Channel& channel);

}  // namespace mesh::internal

#endif  // MESH_SRC_CHANNEL_EXTERNAL_CALL_H_

// The tap hook: a Transport decorator that reports the requests it carries
// to a TapHub's subscriptions. It wraps any Transport (the gRPC one or an
// application's own HTTP/2 client), so tapping is transport-neutral.
//
// With no live subscription, Send costs one relaxed atomic load before it
// forwards the request untouched. Otherwise the hub evaluates the request
// head; a request no subscription claims is forwarded untouched too. A
// claimed one emits RequestInit before it is sent, and its callback is
// wrapped to emit ResponseInit and ResponseEnd before the caller's callback
// runs.
//
//   auto hub = std::make_shared<TapHub>();
//   std::unique_ptr<Transport> t = NewTapTransport(NewGrpcTransport(), hub);
//   auto sub = hub->Subscribe(options);   // now t's requests are tapped
//
// Thread-safe (as the inner transport is).
#ifndef MESH_SRC_TAP_TAP_TRANSPORT_H_
#define MESH_SRC_TAP_TAP_TRANSPORT_H_

#include <memory>

#include "mesh/transport.h"
#include "src/tap/tap_hub.h"

namespace mesh::internal {

// `inner` carries the requests; `hub` (shared with whoever subscribes) says
// who taps them. RetainOnly, DescribeConnection and Shutdown go to `inner`.
std::unique_ptr<Transport> NewTapTransport(std::unique_ptr<Transport> inner,
                                           std::shared_ptr<TapHub> hub);

// A transport and its tap hook side by side, so that a request nobody taps
// skips the hook altogether: ForRequest() is the hook while a subscription
// is live and the inner transport otherwise (one relaxed load and a branch;
// the hook itself would add a second virtual call and a move of the request
// and callback). A subscription that starts between ForRequest() and the
// send misses that one request, as it would inside the hook.
//
//   TapSwitch transports(NewGrpcTransport(), hub);
//   transports.ForRequest().Send(endpoint, std::move(request), done);
//   transports.All().Shutdown();
//
// Thread-safe (as the inner transport is).
class TapSwitch {
 public:
  TapSwitch(std::unique_ptr<Transport> inner, std::shared_ptr<TapHub> hub);

  Transport& ForRequest() const { return hub_->active() ? *tapped_ : *inner_; }
  // For RetainOnly, DescribeConnection and Shutdown, which the hook
  // forwards.
  Transport& All() const { return *tapped_; }

 private:
  const std::shared_ptr<TapHub> hub_;
  Transport* const inner_;  // owned by tapped_
  const std::unique_ptr<Transport> tapped_;
};

// How a unary TransportResponse is reported (the pointers point into
// `response`):
// - http_status: response.http_status; if 0, 200 when the response has
//   headers or an OK status, else 0 (no response).
// - A stream reset instead of a grpc-status when the status is CANCELLED or
//   UNAVAILABLE with http_status 0 and no headers (the call never got an
//   answer): reset_error_code 8 (HTTP/2 CANCEL) for CANCELLED, 7
//   (REFUSED_STREAM) for a request never sent, 2 (INTERNAL_ERROR) for any
//   other connection error.
// - Otherwise grpc_status: the "grpc-status" trailer, else the header (a
//   trailers-only answer), else the status code.
// - response_bytes: the body's size.
TapResponse TapResponseOf(const TransportResponse& response);

}  // namespace mesh::internal

#endif  // MESH_SRC_TAP_TAP_TRANSPORT_H_

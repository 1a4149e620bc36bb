// mesh-tap's output: one wire TapEvent as the line `linkerd viz tap` prints
// for it, or as one JSON object. Works on the wire message alone, like any
// other client of the tap API.
//
//   req id=3:0 proxy=out src=- dst=10.0.0.1:7001 tls=false :method=POST
//       :authority=books:7001 :path=/books.Library/GetBook
//   rsp id=3:0 proxy=out src=- dst=10.0.0.1:7001 tls=false :status=200
//       latency=1234µs
//   end id=3:0 proxy=out src=- dst=10.0.0.1:7001 tls=false grpc-status=OK
//       duration=66µs response-length=42B
//
//   std::fputs(FormatEventLine(event).c_str(), stdout);
//
// Thread-safe (pure functions).
#ifndef MESH_TOOLS_MESH_TAP_FORMAT_H_
#define MESH_TOOLS_MESH_TAP_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "linkerd/net.pb.h"
#include "linkerd/tap.pb.h"

namespace mesh::tools {

// The event's line (each on one line, ending in '\n'):
//   req id=B:S proxy=P src=S dst=D tls=T :method=M :authority=A :path=P
//   rsp id=B:S ... :status=N latency=Xµs           (since request init)
//   end id=B:S ... grpc-status=NAME duration=Xµs response-length=NB
// `end` has reset-error=N instead of grpc-status after a reset, neither if
// the eos is unset; duration is since response init, as Linkerd prints it.
// proxy is out, in or -; src and dst are "-" when unset; tls is the
// destination's "tls" label (the source's for an inbound event), "false"
// without one; an unset method is "-". Then, if the event carries headers
// (req, rsp) or trailers (end), one "  name: value" line each. Bytes outside
// printable ASCII are written \xNN. An event without http is "? id=-".
std::string FormatEventLine(const ::io::linkerd::proxy::tap::TapEvent& event);

// The event as one JSON object and '\n'. Fields: kind ("req", "rsp",
// "end"), id ("B:S"), destination ("ip:port" or null), labels (destination
// labels), route_labels; req: method, scheme, authority, path, headers;
// rsp: status, latency_us, headers; end: latency_us (since request init),
// duration_us (since response init), response_bytes, grpc_status (its name)
// or reset_error (a number), trailers. headers and trailers, present only
// when the event has some, are arrays of {"name","value"}.
std::string FormatEventJson(const ::io::linkerd::proxy::tap::TapEvent& event);

// "a.b.c.d:port", "[v6]:port", or "-" without an ip.
std::string FormatTcpAddress(const ::io::linkerd::proxy::net::TcpAddress& a);

// "OK", "NOT_FOUND", ... (gRPC's doc/statuscodes.md); "CODE_<n>" above 16.
std::string GrpcStatusName(uint32_t code);

}  // namespace mesh::tools

#endif  // MESH_TOOLS_MESH_TAP_FORMAT_H_

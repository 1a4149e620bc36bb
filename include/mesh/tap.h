// Tap: watch live requests as they leave through a Mesh, like `linkerd viz
// tap`. A tap hook wraps the Transport of every destination (the gRPC one or
// the application's own HTTP/2 client); a subscription says which requests
// it wants (a match tree over the request head), how many, and whether to
// extract headers, and pulls the events of those requests from a bounded
// buffer. The Observe server (MeshOptions::tap_address) serves the same
// subscriptions to Linkerd's tap API and `mesh-tap`.
//
//   mesh::TapOptions tap;
//   tap.match = mesh::TapMatch::PathPrefix("/books.Library/");
//   tap.limit = 100;
//   absl::StatusOr<std::unique_ptr<mesh::TapSubscription>> sub =
//       mesh->Tap(tap);
//   while (auto event = (*sub)->Next(absl::Seconds(1))) { /* … */ }
//
// Thread-safe. A subscription unsubscribes when destroyed. A slow reader
// loses events (counted in dropped()); requests never wait for it.
#ifndef MESH_TAP_H_
#define MESH_TAP_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/export.h"
#include "mesh/transport.h"

namespace mesh {

// TLS for the Observe server (MeshOptions::tap_tls). Empty cert_chain_pem:
// plaintext, served to peers on this host only. Set: mutual TLS, served to
// clients whose certificate names an allowed identity, wherever they are.
struct MESH_EXPORT TapTlsOptions {
  // The server's certificate chain, PEM. Empty: no TLS.
  std::string cert_chain_pem;
  // The server's private key, PEM. Required with cert_chain_pem.
  std::string private_key_pem;
  // CA certificates, PEM, that client certificates must chain to. Required
  // with TLS: every client must present a certificate it verifies.
  std::string client_ca_pem;
  // Client identities allowed to tap, compared exactly with the client
  // certificate's SAN URIs and DNS names and its subject CN (e.g.
  // "spiffe://cluster.local/ns/linkerd-viz/sa/tap"). Not empty with TLS.
  std::vector<std::string> allowed_identities;
};

// A tree over the request head, as in Linkerd's ObserveRequest.Match.
// `All({})` matches every request, `Any({})` none.
struct MESH_EXPORT TapMatch {
  enum class Kind {
    kAll,
    kAny,
    kNot,
    kSourceNet,         // the source is this process, whose connection address
    kSourcePorts,       // the hook does not see: these two never match
    kDestinationNet,    // the endpoint's address in net/mask
    kDestinationPorts,  // the endpoint's port in [port_min, port_max]
    kDestinationLabel,  // the endpoint has label key = value exactly
    kRouteLabel,        // the route has label key = value ("route" = name)
    kScheme,            // "http", "https"; exact
    kAuthorityExact,
    kAuthorityPrefix,
    kMethod,  // "GET", "POST", ...; exact
    kPathExact,
    kPathPrefix,  // both on the path without its query
  };

  static TapMatch All(std::vector<TapMatch> children);
  static TapMatch Any(std::vector<TapMatch> children);
  static TapMatch Not(TapMatch child);
  static TapMatch SourceNet(std::string cidr);
  static TapMatch SourcePorts(uint32_t min, uint32_t max);
  // `cidr` is "a.b.c.d/n" or "v6/n" (a bare address is a /32 or /128).
  static TapMatch DestinationNet(std::string cidr);
  static TapMatch DestinationPorts(uint32_t min, uint32_t max);
  static TapMatch DestinationLabel(std::string key, std::string value);
  static TapMatch RouteLabel(std::string key, std::string value);
  static TapMatch Scheme(std::string scheme);
  static TapMatch AuthorityExact(std::string authority);
  static TapMatch AuthorityPrefix(std::string prefix);
  static TapMatch Method(std::string method);
  static TapMatch PathExact(std::string path);
  static TapMatch PathPrefix(std::string prefix);

  Kind kind = Kind::kAll;
  std::vector<TapMatch> children;  // kAll, kAny; kNot has exactly one
  std::string value;      // net (cidr), scheme, authority, method, path;
                          // label value
  std::string key;        // labels
  uint32_t port_min = 0;  // ports
  uint32_t port_max = 0;
};

// Bounds on tap matches. Every request is matched against every live
// subscription's match on the request's own thread, so the matches' size is
// what tapping costs each request (10 `any`s of 200,000 leaves once cost
// every call 2 s and took the process from 19 to 701 MB). `linkerd viz tap` and
// `mesh-tap` send matches of fewer than 20 nodes; the bounds leave each
// subscription ten times that, and every subscription of the default cap (100)
// 40 nodes, while a request never evaluates more than kTapMaxTotalMatchNodes
// nodes (each a string comparison or label lookup bounded by the request's own
// sizes: tens of microseconds at worst).
//
// Nodes of one subscription's match: conditions and all/any/not alike.
// Beyond, the subscription is refused INVALID_ARGUMENT naming the bound.
inline constexpr uint32_t kTapMaxMatchNodes = 256;
// Bytes of all strings (values, keys, CIDRs) of one subscription's match.
// Beyond, INVALID_ARGUMENT naming the bound.
inline constexpr uint32_t kTapMaxMatchBytes = 16 * 1024;
// Nodes of the matches of all live subscriptions of a Mesh together. A
// subscription that would pass it is refused RESOURCE_EXHAUSTED naming the
// bound, until others end.
inline constexpr uint32_t kTapMaxTotalMatchNodes = 4096;

struct MESH_EXPORT TapOptions {
  TapMatch match;
  // Requests to tap; after that many matched, no new request is tapped and
  // the subscription ends once the tapped ones finish. Must be > 0.
  uint32_t limit = 100;
  // Carry request headers, response headers and trailers in the events
  // (sensitive ones redacted, see MeshOptions).
  bool extract_headers = false;
  // Events held for a reader that has not pulled them yet; beyond it, new
  // events are dropped and counted. Must be > 0.
  size_t buffer = 400;
};

// One event of one tapped request. Which fields are set depends on `kind`.
struct MESH_EXPORT TapEvent {
  enum class Kind { kRequestInit, kResponseInit, kResponseEnd };
  Kind kind = Kind::kRequestInit;
  // StreamId: `base` is the subscription's own number, `stream` counts its
  // tapped requests from 0.
  uint32_t base = 0;
  uint64_t stream = 0;

  std::string destination;  // the endpoint "host:port"
  std::map<std::string, std::string> destination_labels;
  std::map<std::string, std::string> route_labels;

  // kRequestInit
  std::string method;  // "POST"
  std::string scheme;  // "http"
  std::string authority;
  std::string path;
  // Which attempt of its call the request is: 1 the first, more for a
  // retry or a hedge (`hedge`: sent beside the earlier attempts, by the
  // route's hedging policy).
  uint32_t attempt = 1;
  bool hedge = false;
  Metadata headers;  // request headers (kRequestInit), response headers
                     // (kResponseInit), pseudo-headers first; empty unless
                     // extract_headers

  // kResponseInit and kResponseEnd
  absl::Duration since_request_init = absl::ZeroDuration();
  uint32_t http_status = 0;  // kResponseInit; 0 when the transport did not
                             // say (an error before any response)

  // kResponseEnd
  absl::Duration since_response_init = absl::ZeroDuration();
  uint64_t response_bytes = 0;          // the response messages' bytes
  uint64_t response_messages = 0;       // a stream's messages; 1 for an answer
  std::optional<uint32_t> grpc_status;  // from trailers (or the status)
  std::optional<uint32_t> reset_error_code;  // a stream reset instead
  Metadata trailers;                         // empty unless extract_headers
};

class MESH_EXPORT TapSubscription {
 public:
  virtual ~TapSubscription() = default;
  // The next event, waiting up to `timeout`; nullopt on timeout or when the
  // subscription is over (done() then says so).
  virtual std::optional<TapEvent> Next(absl::Duration timeout) = 0;
  // The limit was reached, every tapped request has ended, and every event
  // has been pulled.
  virtual bool done() const = 0;
  // Events lost because the buffer was full.
  virtual uint64_t dropped() const = 0;
};

// Header names whose values are never extracted, whatever is asked: the
// value is replaced by kTapRedacted. Lower case.
inline constexpr const char* kTapSensitiveHeaders[] = {
    "authorization", "proxy-authorization", "cookie", "set-cookie"};
inline constexpr char kTapRedacted[] = "[redacted]";

// OK, or INVALID_ARGUMENT naming the part of `options` that is wrong (limit
// 0, buffer 0, a `not` without one child, a bad CIDR, a port range with
// both bounds 0, max > 65535 or min > max, an empty label key, a tree
// nested more than 32 deep, more than kTapMaxMatchNodes nodes or
// kTapMaxMatchBytes bytes of strings), e.g. "match.all[1].not: needs
// exactly one condition (has 2)".
MESH_EXPORT absl::Status ValidateTapOptions(const TapOptions& options);

}  // namespace mesh

#endif  // MESH_TAP_H_

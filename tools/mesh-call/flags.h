// mesh-call's command line: the flags, their parsing and the --help text.
// Parsing does no I/O: a --data @file is read later, by main.
//
//   absl::StatusOr<CallFlags> flags = ParseCallFlags(argc, argv);
//   if (!flags.ok()) { print flags.status().message(); exit 2; }
//
// Thread-compatible (plain values and pure functions).
#ifndef MESH_TOOLS_MESH_CALL_FLAGS_H_
#define MESH_TOOLS_MESH_CALL_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "mesh/balancer.h"
#include "mesh/transport.h"

namespace mesh::tools {

struct CallFlags {
  // Discovery: exactly one of `linkerd`, `static_endpoints`,
  // `xds_bootstrap` and `dns` is set.
  std::string linkerd;        // --linkerd ADDR
  std::string xds_bootstrap;  // --xds-bootstrap FILE
  std::string context_token;  // --context-token (Linkerd)
  // --linkerd-policy ADDR: Linkerd's policy controller (OutboundPolicies),
  // and --source-workload its TrafficSpec.source_workload.
  std::string linkerd_policy;
  std::string source_workload;
  // --linkerd-identity ID: mutual TLS to the destination service (with the
  // --tls-* identity), whose certificate must carry ID.
  std::string linkerd_identity;
  std::vector<std::string> static_endpoints;  // --static a:p,b:p
  // --static-identity ID: the identity every --static endpoint's server
  // certificate must carry (with --tls-ca, alone or with the others).
  std::string static_identity;
  bool dns = false;  // --dns: the target's name through DNS
  // --dns-server A:P,B:P: the DNS servers (with --dns, or with --linkerd
  // for its fallback); empty: the system's.
  std::vector<std::string> dns_servers;

  // The workload's identity for mutual TLS (MeshOptions::identity): PEM
  // files, all three or none; or, with --static, `tls_ca` alone: TLS that
  // verifies the servers against it, presenting no client certificate
  // (each endpoint's EndpointTls).
  std::string tls_cert;  // --tls-cert FILE
  std::string tls_key;   // --tls-key FILE
  std::string tls_ca;    // --tls-ca FILE
  // --tls-refresh SECONDS: how often the files are read again besides
  // being watched (IdentityOptions::refresh_interval); with --tls-ca.
  absl::Duration tls_refresh = absl::Seconds(60);

  std::string target;  // --target name:port
  std::string method;  // --method /pkg.Svc/Method
  // --http METHOD:/PATH: plain HTTP requests (HTTP/2 where the endpoints
  // speak it) through libcurl and mesh::curl instead of gRPC calls, e.g.
  // "GET:/books/1"; --body TEXT or @FILE their body.
  std::string http_method;  // "GET"; empty: gRPC
  std::string http_path;    // "/books/1"
  std::string body;
  std::string body_file;
  // --http2: the --static endpoints speak HTTP/2 (Endpoint::protocol_hint,
  // which Linkerd's discovery gives itself): --http requests go to them
  // over HTTP/2 with prior knowledge.
  bool http2 = false;
  std::string data;       // --data HEX, decoded; empty message by default
  std::string data_file;  // --data @FILE: the file's bytes are the request
  Metadata headers;       // --header 'name: value', names lower-cased

  // How many calls: `count`, or as many as fit in `duration` if it is set.
  int64_t count = 1;
  absl::Duration duration = absl::ZeroDuration();  // zero: use count
  // Closed loop: calls kept in flight. With `rate`: a cap on calls in
  // flight if given explicitly (concurrency_set), otherwise none.
  int concurrency = 1;
  bool concurrency_set = false;
  double rate = 0;  // calls started per second; 0: closed loop

  absl::Duration deadline = absl::InfiniteDuration();  // per call
  BalancerKind balancer = BalancerKind::kP2cPeakEwma;
  absl::Duration wait = absl::Seconds(5);  // for discovery's first answer
  // --interval SECONDS: while running, print each endpoint's share of the
  // calls that finished in every interval (zero: no progress lines).
  absl::Duration interval = absl::ZeroDuration();
  bool json = false;
  // --metrics: after the table, the target's per-route metrics from
  // Mesh::Metrics() (Prometheus text; histogram buckets left out).
  bool metrics = false;
  // --tap ADDR: serve Linkerd's tap API (Observe) from the run's Mesh on
  // ADDR ("127.0.0.1:4190"; port 0 picks one) while it runs.
  std::string tap;
  // --admin ADDR: serve the admin page from the run's Mesh on ADDR
  // ("127.0.0.1:9990"; port 0 picks one) while it runs.
  std::string admin;
  bool help = false;  // --help: print Usage() and exit 0
};

// The flags, or INVALID_ARGUMENT with a message naming the bad flag.
// argv[0] is skipped. The tools' syntax (tools/common/flag_parser.h):
// "--flag=value" and "--flag value"; a repeated flag other than --header
// keeps its last value.
absl::StatusOr<CallFlags> ParseCallFlags(int argc, const char* const* argv);

// The --help text.
std::string Usage(absl::string_view program);

}  // namespace mesh::tools

#endif  // MESH_TOOLS_MESH_CALL_FLAGS_H_

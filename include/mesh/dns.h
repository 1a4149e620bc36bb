// DNS discovery: a destination "host:port" resolved through DNS (c-ares),
// for the services no control plane knows (a database proxy, an external
// API, a service not yet meshed). Its A and AAAA records are the
// endpoints, each with the target's port; they are followed by their TTL.
//
//   mesh::DnsOptions dns;
//   dns.servers = {"127.0.0.1:5353"};  // empty: /etc/resolv.conf's
//   auto source = mesh::NewDnsDiscovery(dns);  // StatusOr
//   options.discovery_by_scheme["dns"] = *source;  // MeshOptions
//   mesh->NewChannel("dns:///db.internal:5432");
//
// - A changed answer replaces the set (a Reset: endpoints that stay keep
//   their load statistics). The next query is due after the answer's
//   smallest TTL, clamped to [min_refresh, max_refresh].
// - A name that does not exist (NXDOMAIN) has no endpoints
//   (EndpointUpdate::NoEndpoints{exists=false}: calls fail at once naming
//   it); a name without A or AAAA records has none. Both are asked again
//   after 30 s (clamped to the bounds).
// - A and AAAA are asked separately: a failure of either keeps the last
//   answer, so that a partial one never replaces it. At most 1000
//   addresses are kept per answer. "localhost" is 127.0.0.1 and ::1; an IP
//   address is itself, without a query.
// - A failed query (time-out, SERVFAIL, a server that refuses or cannot be
//   reached) keeps the last answer serving and is tried again with backoff
//   from min_refresh up to max_refresh; the error is logged and shown in
//   Describe().
// - A call that cannot connect to an address asks the name again early
//   (at once, or min_refresh after the last query; while early answers stay
//   the same that floor doubles up to max_refresh). A caching resolver
//   still answers from its cache until the record's TTL runs out there.
// - Targets: "dns:///host:port" asks `servers`; "dns://server/host:port"
//   (an IP address, port 53 if none) asks that server alone, through its
//   own c-ares channel and thread, at most 16 such servers per source.
//
// Plain value type: thread-compatible.
#ifndef MESH_DNS_H_
#define MESH_DNS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/discovery.h"
#include "mesh/export.h"

namespace mesh {

struct MESH_EXPORT DnsOptions {
  // DNS servers, "a.b.c.d:port" or "[v6]:port"; empty: the system's
  // (/etc/resolv.conf).
  std::vector<std::string> servers;
  // Bounds of the time between two queries for a name.
  absl::Duration min_refresh = absl::Seconds(1);
  absl::Duration max_refresh = absl::Seconds(300);
  // The first attempt's time-out (c-ares doubles it at each round over the
  // servers); each server is tried `tries` times.
  absl::Duration query_timeout = absl::Seconds(2);
  int tries = 2;
};

// The DNS source; its scheme is "dns". INVALID_ARGUMENT for a server that
// is not an address with a port, or bounds that make no sense (zero, min
// above max). UNAVAILABLE if c-ares cannot start (it names why).
MESH_EXPORT absl::StatusOr<std::shared_ptr<DiscoverySource>> NewDnsDiscovery(
    const DnsOptions& options);

}  // namespace mesh

#endif  // MESH_DNS_H_

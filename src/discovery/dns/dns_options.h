// The checks of DnsOptions, apart from NewDnsDiscovery: for the sources
// that refuse bad options at once but start a resolver only when they
// first need one (xDS's DNS clusters).
//
//   if (absl::Status s = ValidateDnsOptions(options.dns); !s.ok()) ...
//
// Pure function: thread-safe.
#ifndef MESH_SRC_DISCOVERY_DNS_DNS_OPTIONS_H_
#define MESH_SRC_DISCOVERY_DNS_DNS_OPTIONS_H_

#include "absl/status/status.h"
#include "mesh/dns.h"
#include "src/base/internal_export.h"

namespace mesh::internal {

// OK, or INVALID_ARGUMENT naming the field: refresh bounds that make no
// sense, a query time-out or tries below one, a server that is not an
// address with a port.
MESH_INTERNAL_EXPORT absl::Status ValidateDnsOptions(const DnsOptions& options);

}  // namespace mesh::internal

#endif  // MESH_SRC_DISCOVERY_DNS_DNS_OPTIONS_H_

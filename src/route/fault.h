// Fault injection for one call: whether a route's FaultInjection delays it,
// aborts it, or both, drawn per call and, where the route allows it, as the
// request's x-envoy-fault-* headers ask.
//
//   FaultDraw d = DrawFault(route.fault, &headers, gen);
//   if (d.delay > absl::ZeroDuration()) ... wait, then
//   if (!d.abort.ok()) ... fail the call with d.abort
//
// Pure function: thread-safe.
#ifndef MESH_SRC_ROUTE_FAULT_H_
#define MESH_SRC_ROUTE_FAULT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "mesh/service_config.h"

namespace mesh::internal {

struct FaultDraw {
  absl::Duration delay = absl::ZeroDuration();  // zero: none
  absl::Status abort;                           // OK: none
  bool any() const { return delay > absl::ZeroDuration() || !abort.ok(); }
};

// The request headers (lower-case names) are read only when the fault
// allows it. Header values that do not parse are ignored (no fault from
// them); a header's percentage is capped by the configured share.
FaultDraw DrawFault(
    const FaultInjection& fault,
    const std::vector<std::pair<std::string, std::string>>* headers,
    absl::BitGenRef gen);

}  // namespace mesh::internal

#endif  // MESH_SRC_ROUTE_FAULT_H_

// Why an endpoint was ejected last (EndpointLoad::ejection_reason; shown
// by EndpointStats, Describe() and the admin page).
#ifndef MESH_SRC_BALANCE_EJECTION_REASON_H_
#define MESH_SRC_BALANCE_EJECTION_REASON_H_

#include <cstdint>

namespace mesh::internal {

enum class EjectionReason : uint8_t {
  kNone,
  kConsecutiveFailures,
  kSuccessRate,        // interval ejection: a success-rate outlier
  kFailurePercentage,  // interval ejection: past the failure percentage
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_EJECTION_REASON_H_

// RoundRobinBalancer: each endpoint in turn, skipping ejected ones when a
// healthy one is near. Ignores weights and latency: the in-process baseline
// that P2C is measured against.
//
// Thread-safe (see balancer.h).
#ifndef MESH_SRC_BALANCE_ROUND_ROBIN_BALANCER_H_
#define MESH_SRC_BALANCE_ROUND_ROBIN_BALANCER_H_

#include "src/balance/balancer_base.h"

namespace mesh::internal {

class RoundRobinBalancer final : public BalancerBase {
 public:
  using BalancerBase::BalancerBase;
  absl::StatusOr<CallHandle> Pick() override;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_ROUND_ROBIN_BALANCER_H_

// P2cBalancer: power of two choices over Peak-EWMA cost (Mitzenmacher 2001;
// Finagle and Linkerd2's balancers). Weighted: candidates are drawn in
// proportion to endpoint weight, and ties go to the first draw, so among
// endpoints of equal cost a weight-2 endpoint gets twice the picks.
//
// Thread-safe (see balancer.h).
#ifndef MESH_SRC_BALANCE_P2C_BALANCER_H_
#define MESH_SRC_BALANCE_P2C_BALANCER_H_

#include "src/balance/balancer_base.h"

namespace mesh::internal {

class P2cBalancer final : public BalancerBase {
 public:
  using BalancerBase::BalancerBase;
  absl::StatusOr<CallHandle> Pick() override;
  // The power of two choices among the endpoints not tried (drawn
  // uniformly: a hedge wants another endpoint more than a weighted one).
  absl::StatusOr<CallHandle> PickExcept(
      const std::vector<std::string>& tried) override;

  // Whether b costs less than a, the cost of an endpoint being
  // rtt_estimate × (pending + 1) at now, computed with one exp() instead of
  // two: both
  // estimates decay with the same time constant, so
  //   est_b·e^{-(now-t_b)/τ}·(p_b+1) < est_a·e^{-(now-t_a)/τ}·(p_a+1)
  //   ⇔ est_b·(p_b+1)·e^{(t_b-t_a)/τ} < est_a·(p_a+1).
  static bool Cheaper(const EndpointLoad& b, const EndpointLoad& a);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_P2C_BALANCER_H_

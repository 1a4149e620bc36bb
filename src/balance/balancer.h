// Balancer: picks one endpoint of a destination for each request. Made by a
// Mesh for each (channel, destination) from MeshOptions::balancer
// (include/mesh/balancer.h); applications do not plug in their own.
//
//   absl::StatusOr<std::unique_ptr<Balancer>> b = Balancer::Create(options);
//   (*b)->SetEndpoints(endpoints);
//   absl::StatusOr<CallHandle> h = (*b)->Pick();
//
// Thread-safe: Pick() runs lock-free on any thread against an immutable
// snapshot; SetEndpoints() publishes a new snapshot without waiting for calls.
#ifndef MESH_SRC_BALANCE_BALANCER_H_
#define MESH_SRC_BALANCE_BALANCER_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/random/bit_gen_ref.h"
#include "absl/status/statusor.h"
#include "mesh/balancer.h"
#include "mesh/endpoint.h"
#include "src/balance/call_handle.h"
#include "src/base/clock.h"

namespace mesh::internal {

class Balancer {
 public:
  virtual ~Balancer() = default;

  // INVALID_ARGUMENT naming the field if options are invalid. `clock` and
  // `rng` may be null (real clock, a per-thread generator); if given, they
  // must outlive the balancer, and an injected `rng` makes Pick()
  // thread-compatible instead of thread-safe (it is meant for tests).
  static absl::StatusOr<std::unique_ptr<Balancer>> Create(
      const BalancerOptions& options, const Clock* clock = nullptr,
      absl::BitGenRef* rng = nullptr);

  // Replaces the endpoint set with endpoints shared with their owner (no
  // copy): `n` of them, `endpoint(i)` to read the i-th, `share(i)` for a
  // reference that keeps it alive. As SetEndpoints otherwise.
  virtual void SetSharedEndpoints(
      size_t n, absl::FunctionRef<const Endpoint&(size_t)> endpoint,
      absl::FunctionRef<std::shared_ptr<const Endpoint>(size_t)> share) = 0;

  // Replaces the endpoint set. Endpoints whose address survives keep their
  // load statistics (pending, EWMA, ejection). Endpoints must be valid
  // (ValidateEndpoint) and distinct; callers validate.
  virtual void SetEndpoints(const std::vector<Endpoint>& endpoints) = 0;

  // One endpoint, or UNAVAILABLE if the set is empty.
  virtual absl::StatusOr<CallHandle> Pick() = 0;
  // One endpoint for a call whose hash is `hash`: the ring-hash balancer
  // maps equal hashes to the same endpoint; the others ignore it.
  virtual absl::StatusOr<CallHandle> PickHashed(uint64_t hash) {
    (void)hash;
    return Pick();
  }

  // One endpoint whose address is not among `tried` (a hedge's: the
  // endpoints its call's attempts went to), or UNAVAILABLE when every
  // endpoint has been tried. The default asks Pick() a few times.
  virtual absl::StatusOr<CallHandle> PickExcept(
      const std::vector<std::string>& tried);

  // Statistics of the current endpoints, sorted by address.
  virtual std::vector<EndpointStats> Stats() const = 0;
};

// Whether `address` is one of `tried`.
bool WasTried(const std::vector<std::string>& tried,
              const std::string& address);

// Whether `a` and `b` make the same balancer (every field equal).
bool SameBalancerOptions(const BalancerOptions& a, const BalancerOptions& b);
bool SameIntervalEjection(const std::optional<IntervalEjection>& a,
                          const std::optional<IntervalEjection>& b);

}  // namespace mesh::internal

#endif  // MESH_SRC_BALANCE_BALANCER_H_

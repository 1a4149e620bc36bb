// The discovery side of mesh_churn_bench: a DiscoverySource that hands each
// target to the source given for it and watches every endpoint update the
// Mesh applies — how many, how long the Mesh took to apply each one, and how
// long after the churn generator sent it the update became what picks see.
//
//   UpdateLedger ledger;
//   auto source = std::make_shared<CountingSource>(&ledger);
//   source->Route("churn.bench:80", linkerd_source);
//   options.discovery = source;
//   ...
//   ledger.Sent("churn.bench:80", newest_address, NowNs());  // then send
//   ApplyStats s = source->Stats("churn.bench:80");
//
// An update is applied when the Mesh's observer returns from
// OnEndpointUpdate: by then the destination's balancers have published the
// new set (src/channel/destination.cc), so the next pick sees it.
//
// Thread-safe.
#ifndef MESH_BENCH_E2E_CHURN_DISCOVERY_H_
#define MESH_BENCH_E2E_CHURN_DISCOVERY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "bench/e2e/churn_histogram.h"
#include "mesh/discovery.h"

namespace mesh::bench {

// Steady-clock nanoseconds.
int64_t NowNs();

// When each churn update was sent, keyed by its target and the newest
// address it adds.
class UpdateLedger {
 public:
  void Sent(const std::string& target, const std::string& address, int64_t ns);
  // The send time of the update to `target` that added `address`, forgotten
  // once taken; -1 if none.
  int64_t Take(const std::string& target, const std::string& address);
  // Updates to `target` sent and not yet taken.
  int64_t pending(const std::string& target) const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, int64_t> sent_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> pending_ ABSL_GUARDED_BY(mu_);
};

// What one target's observer saw.
struct ApplyStats {
  int64_t messages = 0;  // OnEndpointUpdate calls (Add, Remove, Reset, ...)
  int64_t matched = 0;   // churn updates found in the ledger
  LatencyHistogram apply_ns;    // time inside the Mesh's OnEndpointUpdate
  LatencyHistogram visible_ns;  // ledger send time to the end of the apply
  int64_t discovery_errors = 0;
  std::string last_error;
};

class CountingSource final : public DiscoverySource {
 public:
  explicit CountingSource(UpdateLedger* ledger) : ledger_(ledger) {}

  // Subscriptions to `target` go to `source` (set before the first one).
  void Route(const std::string& target,
             std::shared_ptr<DiscoverySource> source);
  // A copy of `target`'s counters so far.
  ApplyStats Stats(const std::string& target) const;
  // Forgets the counters of every target (after set-up).
  void ClearStats();

  std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) override;
  std::unique_ptr<DiscoverySubscription> SubscribeConfig(
      const std::string& target, ServiceConfigObserver* observer) override;

 private:
  class Observer;
  std::shared_ptr<DiscoverySource> SourceFor(const std::string& target) const;
  void Record(const std::string& target, const EndpointUpdate& update,
              int64_t began_ns, int64_t ended_ns);
  void RecordError(const std::string& target, const absl::Status& status);

  UpdateLedger* const ledger_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<DiscoverySource>> routes_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, ApplyStats> stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_CHURN_DISCOVERY_H_

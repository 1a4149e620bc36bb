#include "src/balance/balancer_base.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/random/distributions.h"
#include "absl/random/random.h"
#include "absl/strings/string_view.h"
#include "src/base/mutex.h"

namespace mesh::internal {
namespace {

std::vector<uint32_t> WeightsOf(
    const std::vector<std::shared_ptr<EndpointLoad>>& loads) {
  std::vector<uint32_t> weights;
  weights.reserve(loads.size());
  for (const auto& l : loads) weights.push_back(l->endpoint->weight);
  return weights;
}

}  // namespace

BalancerBase::Snapshot::Snapshot(std::vector<std::shared_ptr<EndpointLoad>> l,
                                 std::shared_ptr<const HashRing> r)
    : loads(std::move(l)), sampler(WeightsOf(loads)), ring(std::move(r)) {}

BalancerBase::BalancerBase(const BalancerOptions& options, const Clock* clock,
                           absl::BitGenRef* rng)
    : options_(options),
      clock_(clock != nullptr ? clock : Clock::Real()),
      rng_(rng),
      ejection_(std::make_shared<EjectionGroup>(options, clock_->NowNanos())),
      snapshot_(std::make_unique<Snapshot>(
          std::vector<std::shared_ptr<EndpointLoad>>{})) {}

void BalancerBase::SetEndpoints(const std::vector<Endpoint>& endpoints) {
  SetSharedEndpoints(
      endpoints.size(),
      [&](size_t i) -> const Endpoint& { return endpoints[i]; },
      [&](size_t i) { return std::make_shared<const Endpoint>(endpoints[i]); });
}

void BalancerBase::SetSharedEndpoints(
    size_t n, absl::FunctionRef<const Endpoint&(size_t)> endpoint,
    absl::FunctionRef<std::shared_ptr<const Endpoint>(size_t)> share) {
  MutexLock lock(&mu_);
  int64_t now = clock_->NowNanos();
  std::vector<std::shared_ptr<EndpointLoad>> loads;
  loads.reserve(n);
  std::shared_ptr<const HashRing> ring;
  {
    // The current records, from the current snapshot: only this function
    // publishes, under mu_, so it cannot change meanwhile. (The section ends
    // before Publish, which waits for readers.)
    auto current = snapshot_.Read();
    const std::vector<std::shared_ptr<EndpointLoad>>& old = current->loads;
    // An endpoint that joins a set already in use starts at its peers' mean
    // estimate rather than default_rtt: peers that have been answering fast
    // have decayed far below default_rtt, and a newcomer at 30 ms would get
    // no traffic until time decayed its default too (tens of seconds with
    // decay = 10 s). Linkerd starts every endpoint at default_rtt.
    double peers_ns = 0;
    bool old_sorted = true;
    for (size_t i = 0; i < old.size(); ++i) {
      peers_ns += old[i]->ewma.Estimate(now);
      if (i > 0 && old[i]->endpoint->address < old[i - 1]->endpoint->address) {
        old_sorted = false;
      }
    }
    if (!old.empty()) peers_ns /= static_cast<double>(old.size());
    // Each endpoint's current record, by address: with both lists in
    // address order (as the endpoint set hands them) by walking them side
    // by side, else through a map.
    bool sorted = old_sorted;
    for (size_t i = 1; sorted && i < n; ++i) {
      sorted = !(endpoint(i).address < endpoint(i - 1).address);
    }
    absl::flat_hash_map<absl::string_view, size_t> by_address;
    if (!sorted) {
      by_address.reserve(old.size());
      for (size_t k = 0; k < old.size(); ++k) {
        by_address.emplace(old[k]->endpoint->address, k);
      }
    }
    size_t j = 0;  // the walk's place in `old`
    auto previous_of =
        [&](const Endpoint& e) -> const std::shared_ptr<EndpointLoad>* {
      if (sorted) {
        while (j < old.size() && old[j]->endpoint->address < e.address) ++j;
        return j < old.size() && old[j]->endpoint->address == e.address
                   ? &old[j]
                   : nullptr;
      }
      auto it = by_address.find(e.address);
      return it != by_address.end() ? &old[it->second] : nullptr;
    };
    for (size_t i = 0; i < n; ++i) {
      const Endpoint& e = endpoint(i);
      const std::shared_ptr<EndpointLoad>* previous = previous_of(e);
      if (previous != nullptr &&
          ((*previous)->endpoint.get() == &e || *(*previous)->endpoint == e)) {
        loads.push_back(*previous);
        continue;
      }
      auto load =
          std::make_shared<EndpointLoad>(share(i), options_, now, ejection_);
      if (previous != nullptr) {
        load->InheritFrom(**previous);
      } else if (!old.empty()) {
        load->ewma.Seed(peers_ns, now);
      }
      loads.push_back(std::move(load));
    }
    ring = MakeRing(loads, *current);
  }
  ejection_->SetMembers(loads);
  auto snapshot = std::make_unique<Snapshot>(std::move(loads), std::move(ring));
  // Round robin starts each snapshot at a random place, so that channels (and
  // processes) do not all begin on the same endpoint after every update.
  // (Its own generator: an injected one belongs to the picking thread.)
  absl::InsecureBitGen gen;
  snapshot->next.store(absl::Uniform<uint64_t>(gen), std::memory_order_relaxed);
  snapshot_.Publish(std::move(snapshot));
}

std::shared_ptr<const HashRing> BalancerBase::MakeRing(
    const std::vector<std::shared_ptr<EndpointLoad>>& loads,
    const Snapshot& previous) const {
  (void)loads;
  (void)previous;
  return nullptr;
}

std::vector<EndpointStats> BalancerBase::Stats() const {
  auto snap = snapshot_.Read();
  int64_t now = clock_->NowNanos();
  std::vector<EndpointStats> out;
  out.reserve(snap->loads.size());
  for (const auto& l : snap->loads) {
    EndpointStats s;
    s.address = l->endpoint->address;
    s.weight = l->endpoint->weight;
    s.pending = l->pending.load();
    s.rtt_estimate_ms = l->ewma.Estimate(now) / 1e6;
    s.picks = l->picks.load();
    s.failures = l->failures.load();
    s.ejections = l->ejections.load();
    s.ejected = l->Ejected(now);
    if (s.ejected) {
      s.ejection_left_ms =
          static_cast<double>(l->ejected_until_ns.load() - now) / 1e6;
      switch (l->ejection_reason.load()) {
        case EjectionReason::kNone:
          break;
        case EjectionReason::kConsecutiveFailures:
          s.ejection_reason = "consecutive_failures";
          break;
        case EjectionReason::kSuccessRate:
          s.ejection_reason = "success_rate";
          break;
        case EjectionReason::kFailurePercentage:
          s.ejection_reason = "failure_percentage";
          break;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

namespace {
absl::InsecureBitGen& ThreadGen() {
  thread_local absl::InsecureBitGen gen;
  return gen;
}
}  // namespace

absl::BitGenRef BalancerBase::Gen() const {
  if (rng_ != nullptr) return *rng_;
  return ThreadGen();
}

uint64_t BalancerBase::RandomBits() const {
  if (rng_ != nullptr) return absl::Uniform<uint64_t>(*rng_);
  return ThreadGen()();
}

CallHandle BalancerBase::Take(const std::shared_ptr<EndpointLoad>& load,
                              int64_t now_ns) const {
  load->pending.fetch_add(1, std::memory_order_relaxed);
  load->picks.fetch_add(1, std::memory_order_relaxed);
  return CallHandle(load, clock_, now_ns);
}

absl::Status BalancerBase::NoEndpointsError() {
  return absl::UnavailableError("no endpoints");
}

}  // namespace mesh::internal

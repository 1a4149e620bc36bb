#include "src/channel/endpoint_metrics_index.h"

#include <utility>
#include <vector>

#include "src/model/endpoint_tls.h"

namespace mesh::internal {

EndpointMetricsIndex::Index::Index(std::shared_ptr<const List> l)
    : entries(std::move(l)),
      by_address(entries->size(), Hash{entries.get()}, Eq{entries.get()}) {
  for (size_t i = 0; i < entries->size(); ++i) {
    by_address.insert(static_cast<uint32_t>(i));
  }
}

EndpointMetricsIndex::EndpointMetricsIndex(
    std::string target, std::shared_ptr<MetricsRegistry> registry,
    bool identity_in_use, bool default_transport)
    : target_(std::move(target)),
      registry_(std::move(registry)),
      identity_in_use_(identity_in_use),
      default_transport_(default_transport),
      index_(std::make_unique<Index>(std::make_shared<const List>())) {}

LabelPairs EndpointMetricsIndex::LabelsOf(const Endpoint& endpoint) const {
  return TlsLabels(endpoint, identity_in_use_, default_transport_);
}

void EndpointMetricsIndex::Update(const List& previous,
                                  std::shared_ptr<const List> current) {
  // An endpoint the update left as it was keeps its entry, and with it its
  // metrics; one whose attributes changed (a new entry for the same
  // address) takes its predecessor's. The O(n) work — finding those pairs
  // in the two lists (both sorted by address) and indexing the new list —
  // is done before taking mu_, which an endpoint's first call waits for.
  std::vector<std::pair<const DestinationEndpoint*, const DestinationEndpoint*>>
      changed;  // {predecessor, successor}
  auto old = previous.begin();
  for (const auto& entry : *current) {
    while (old != previous.end() &&
           (*old)->endpoint.address < entry->endpoint.address) {
      ++old;
    }
    if (old == previous.end()) break;
    if (*old != entry && (*old)->endpoint.address == entry->endpoint.address) {
      changed.emplace_back(old->get(), entry.get());
    }
  }
  auto index = std::make_unique<Index>(std::move(current));
  // Carry-over and Publish together: a first call (which looks the address
  // up again under this lock) either makes its metrics on the predecessor
  // before this, and they are carried over, or finds the successor after.
  MutexLock lock(&mu_);
  for (const auto& [predecessor, successor] : changed) {
    EndpointMetrics* m = predecessor->metrics.load(std::memory_order_acquire);
    // A changed identity starts a new series: the old one's tls labels no
    // longer say how the endpoint is reached.
    if (m != nullptr && successor->metrics_owner == nullptr &&
        predecessor->endpoint.tls_identity ==
            successor->endpoint.tls_identity &&
        (predecessor->endpoint.tls == nullptr) ==
            (successor->endpoint.tls == nullptr)) {
      successor->metrics_owner = predecessor->metrics_owner;
      successor->metrics.store(m, std::memory_order_release);
    }
  }
  index_.Publish(std::move(index));
}

std::shared_ptr<const DestinationEndpoint> EndpointMetricsIndex::Find(
    absl::string_view address) const {
  auto index = index_.Read();
  auto found = index->by_address.find(address);
  if (found == index->by_address.end()) return nullptr;
  return (*index->entries)[*found];
}

std::shared_ptr<EndpointMetrics> EndpointMetricsIndex::For(
    const std::string& address) const {
  std::shared_ptr<const DestinationEndpoint> entry;
  {
    auto index = index_.Read();
    auto found = index->by_address.find(absl::string_view(address));
    if (found == index->by_address.end()) return nullptr;
    const std::shared_ptr<const DestinationEndpoint>& e =
        (*index->entries)[*found];
    EndpointMetrics* m = e->metrics.load(std::memory_order_acquire);
    // Aliasing: the entry owns the metrics while it lives.
    if (m != nullptr) return std::shared_ptr<EndpointMetrics>(e, m);
    entry = e;
  }
  // The endpoint's first call. (Out of the read section first: it would
  // hold up an update's Publish while we wait for the locks.) The registry
  // hands every caller for this address the same object while one lives.
  std::shared_ptr<EndpointMetrics> made =
      registry_->Endpoint(target_, address, LabelsOf(entry->endpoint));
  MutexLock lock(&mu_);
  // Looked up again: an update may have replaced the entry meanwhile (and
  // carried over nothing, as it had no metrics then).
  entry = Find(address);
  if (entry == nullptr) return nullptr;  // removed since
  EndpointMetrics* m = entry->metrics.load(std::memory_order_acquire);
  if (m == nullptr) {
    // An update may also have changed the endpoint's identity meanwhile.
    LabelPairs tls = LabelsOf(entry->endpoint);
    if (made->tls != tls) made = registry_->Endpoint(target_, address, tls);
    entry->metrics_owner = std::move(made);
    m = entry->metrics_owner.get();
    entry->metrics.store(m, std::memory_order_release);
  }
  return std::shared_ptr<EndpointMetrics>(entry, m);
}

}  // namespace mesh::internal

#include "src/discovery/xds/xds_dns_cluster.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mesh::internal::xds {

void DnsHostAnswer::OnEndpointUpdate(const EndpointUpdate& update) {
  bool wake;
  {
    MutexLock lock(&mu_);
    std::vector<std::string>& addresses = state_.addresses;
    switch (update.kind) {
      case EndpointUpdate::Kind::kReset:
        addresses.clear();
        [[fallthrough]];
      case EndpointUpdate::Kind::kAdd:
        for (const Endpoint& e : update.endpoints) {
          addresses.push_back(e.address);
        }
        state_.exists = true;
        break;
      case EndpointUpdate::Kind::kRemove:
        for (const std::string& a : update.addresses) {
          addresses.erase(std::remove(addresses.begin(), addresses.end(), a),
                          addresses.end());
        }
        break;
      case EndpointUpdate::Kind::kNoEndpoints:
        addresses.clear();
        state_.exists = update.exists;
        break;
    }
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()),
                    addresses.end());
    state_.answered = true;
    // An answer replaces the failed query before it.
    state_.error.clear();
    state_.failed_unanswered.clear();
    wake = ChangedLocked();
  }
  if (wake) wake_();
}

void DnsHostAnswer::OnDiscoveryError(const absl::Status& status) {
  bool wake;
  {
    MutexLock lock(&mu_);
    state_.error = std::string(status.message());
    if (!state_.answered) state_.failed_unanswered = state_.error;
    wake = ChangedLocked();
  }
  if (wake) wake_();
}

DnsHostAnswer::State DnsHostAnswer::Take() {
  MutexLock lock(&mu_);
  State out = state_;
  state_.error.clear();
  woken_ = false;
  return out;
}

bool DnsHostAnswer::ChangedLocked() { return !std::exchange(woken_, true); }

DnsClusterUpdate CombineDnsAnswers(
    const std::vector<DnsHost>& hosts,
    const std::vector<DnsHostAnswer::State>& answers) {
  DnsClusterUpdate out;
  absl::flat_hash_set<std::string> seen;
  std::vector<std::string> empty;  // why each answered host has none
  bool waiting = false;
  bool exists = false;
  for (size_t i = 0; i < hosts.size() && i < answers.size(); ++i) {
    const DnsHostAnswer::State& a = answers[i];
    if (!a.answered) {
      if (!a.failed_unanswered.empty()) {
        // Not known not to exist: as a name without records, saying why.
        exists = true;
        empty.push_back(
            absl::StrCat("DNS name '", hosts[i].host,
                         "' could not be resolved: ", a.failed_unanswered));
      } else {
        waiting = true;
      }
      continue;
    }
    exists = exists || a.exists;
    if (a.addresses.empty()) {
      empty.push_back(absl::StrCat(
          "DNS name '", hosts[i].host, "' ",
          a.exists ? "has no A or AAAA records" : "does not exist"));
      continue;
    }
    for (const std::string& address : a.addresses) {
      if (seen.insert(address).second) {
        out.endpoints.emplace_back(address, hosts[i].weight);
      }
    }
  }
  if (!out.endpoints.empty()) {
    out.kind = DnsClusterUpdate::Kind::kEndpoints;
    return out;
  }
  if (waiting) return out;  // kWaiting
  out.kind = DnsClusterUpdate::Kind::kNone;
  out.exists = exists || hosts.empty();
  out.why = hosts.empty() ? std::string(
                                "no host may serve (every lb_endpoint "
                                "is unhealthy)")
                          : absl::StrJoin(empty, "; ");
  return out;
}

}  // namespace mesh::internal::xds

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

namespace {

using Family = ClusterResource::DnsFamily;

// "[v6]:port" is an IPv6 address (DNS discovery's form); "a.b.c.d:port"
// an IPv4 one.
bool IsV6(const std::string& address) {
  return !address.empty() && address[0] == '[';
}

// The addresses of one name that `family` lets serve.
std::vector<std::string> OfFamily(const std::vector<std::string>& addresses,
                                  Family family) {
  if (family == Family::kAll) return addresses;
  std::vector<std::string> v4, v6;
  for (const std::string& a : addresses) (IsV6(a) ? v6 : v4).push_back(a);
  switch (family) {
    case Family::kV4Only:
      return v4;
    case Family::kV6Only:
      return v6;
    case Family::kAuto:
      return v6.empty() ? v4 : v6;
    case Family::kV4Preferred:
      return v4.empty() ? v6 : v4;
    case Family::kAll:
      break;
  }
  return addresses;
}

// What a name lacks when none of its addresses may serve.
const char* MissingRecords(Family family) {
  switch (family) {
    case Family::kV4Only:
      return "has no A records (the cluster's dns_lookup_family is V4_ONLY)";
    case Family::kV6Only:
      return "has no AAAA records (the cluster's dns_lookup_family is "
             "V6_ONLY)";
    default:
      return "has no A or AAAA records";
  }
}

}  // namespace

DnsClusterUpdate CombineDnsAnswers(
    const std::vector<DnsHost>& hosts,
    const std::vector<DnsHostAnswer::State>& answers, Family family) {
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
    const std::vector<std::string> serving = OfFamily(a.addresses, family);
    if (serving.empty()) {
      empty.push_back(
          absl::StrCat("DNS name '", hosts[i].host, "' ",
                       a.exists ? MissingRecords(family) : "does not exist"));
      continue;
    }
    for (const std::string& address : serving) {
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

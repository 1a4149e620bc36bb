#include "src/model/endpoint_set.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace mesh::internal {

absl::Status ValidateEndpointList(const std::vector<Endpoint>& endpoints) {
  absl::flat_hash_set<absl::string_view> seen;
  seen.reserve(endpoints.size());
  for (const Endpoint& e : endpoints) {
    absl::Status s = ValidateEndpoint(e);
    if (!s.ok()) return s;
    if (!seen.insert(e.address).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "address '", e.address, "' appears twice in one update"));
    }
  }
  return absl::OkStatus();
}

std::vector<const Endpoint*> SortedByAddress(
    const std::vector<Endpoint>& endpoints) {
  std::vector<const Endpoint*> sorted;
  sorted.reserve(endpoints.size());
  for (const Endpoint& e : endpoints) sorted.push_back(&e);
  auto less = [](const Endpoint* a, const Endpoint* b) {
    return a->address < b->address;
  };
  // Discovery sources often deliver a sorted list.
  if (!std::is_sorted(sorted.begin(), sorted.end(), less)) {
    std::sort(sorted.begin(), sorted.end(), less);
  }
  return sorted;
}

}  // namespace mesh::internal

#include "src/model/endpoint_set.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace mesh::internal {
namespace {

absl::Status ValidateAll(const std::vector<Endpoint>& endpoints) {
  absl::flat_hash_set<absl::string_view> seen;
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

}  // namespace

absl::Status EndpointSet::Apply(const EndpointUpdate& update) {
  switch (update.kind) {
    case EndpointUpdate::Kind::kReset:
    case EndpointUpdate::Kind::kAdd: {
      absl::Status s = ValidateAll(update.endpoints);
      if (!s.ok()) return s;
      if (update.kind == EndpointUpdate::Kind::kReset) {
        // clear() frees a large table; reserving avoids growing it again
        // step by step for a big Reset.
        endpoints_.clear();
        endpoints_.reserve(update.endpoints.size());
      }
      for (const Endpoint& e : update.endpoints) endpoints_[e.address] = e;
      exists_ = true;
      break;
    }
    case EndpointUpdate::Kind::kRemove:
      for (const std::string& a : update.addresses) endpoints_.erase(a);
      break;
    case EndpointUpdate::Kind::kNoEndpoints:
      endpoints_.clear();
      exists_ = update.exists;
      break;
  }
  has_update_ = true;
  return absl::OkStatus();
}

std::vector<Endpoint> EndpointSet::Endpoints() const {
  std::vector<Endpoint> out;
  out.reserve(endpoints_.size());
  for (const auto& [address, e] : endpoints_) out.push_back(e);
  std::sort(out.begin(), out.end(), [](const Endpoint& a, const Endpoint& b) {
    return a.address < b.address;
  });
  return out;
}

}  // namespace mesh::internal

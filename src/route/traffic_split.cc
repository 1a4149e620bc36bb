#include "src/route/traffic_split.h"

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "src/model/address.h"

namespace mesh::internal {

std::shared_ptr<const TrafficSplit> TrafficSplit::Build(
    const std::vector<WeightedBackend>& backends,
    std::vector<std::string>* dropped) {
  auto drop = [dropped](std::string line) {
    if (dropped != nullptr) dropped->push_back(std::move(line));
  };
  auto split = std::make_shared<TrafficSplit>();
  for (const WeightedBackend& b : backends) {
    if (b.weight == 0) {
      drop(absl::StrCat("backend '", b.authority, "' dropped: weight 0"));
      continue;
    }
    if (absl::Status s = ValidateDestination(b.authority); !s.ok()) {
      drop(absl::StrCat("backend '", b.authority, "' dropped: ", s.message()));
      continue;
    }
    bool merged = false;
    for (WeightedBackend& kept : split->backends_) {
      if (kept.authority == b.authority) {
        kept.weight += b.weight;
        merged = true;
      }
    }
    if (!merged) {
      if (split->backends_.size() == kMaxBackends) {
        drop(absl::StrCat("backend '", b.authority, "' dropped: more than ",
                          kMaxBackends, " backends"));
        continue;
      }
      split->backends_.push_back(b);
    }
  }
  if (split->backends_.empty()) return nullptr;
  return split;
}

size_t TrafficSplit::Draw(absl::BitGenRef gen, uint64_t excluded) const {
  uint64_t total = 0;
  for (size_t i = 0; i < backends_.size(); ++i) {
    if ((excluded >> i & 1) == 0) total += backends_[i].weight;
  }
  if (total == 0) return backends_.size();
  uint64_t r = absl::Uniform<uint64_t>(gen, 0, total);
  for (size_t i = 0; i < backends_.size(); ++i) {
    if ((excluded >> i & 1) != 0) continue;
    if (r < backends_[i].weight) return i;
    r -= backends_[i].weight;
  }
  return backends_.size();  // not reached
}

}  // namespace mesh::internal

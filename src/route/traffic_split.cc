#include "src/route/traffic_split.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "src/base/utf8.h"
#include "src/model/address.h"
#include "src/route/route_table.h"

namespace mesh::internal {

std::string TrafficSplit::KeyOf(const WeightedBackend& b) {
  return b.cluster.empty() ? b.authority : absl::StrCat(" cluster ", b.cluster);
}

const std::string& TrafficSplit::NameOf(const WeightedBackend& b) {
  return b.cluster.empty() ? b.authority : b.cluster;
}

std::shared_ptr<const TrafficSplit> TrafficSplit::Build(
    const std::vector<WeightedBackend>& backends,
    std::vector<std::string>* dropped, bool first_available) {
  auto drop = [dropped](std::string line) {
    if (dropped != nullptr) dropped->push_back(std::move(line));
  };
  auto split = std::make_shared<TrafficSplit>();
  split->first_available_ = first_available;
  std::vector<uint64_t> wide;  // merged weights, beside split->backends_
  for (const WeightedBackend& b : backends) {
    if (b.weight == 0) {
      drop(absl::StrCat("backend '", PrintableText(NameOf(b)),
                        "' dropped: weight 0"));
      continue;
    }
    if (!b.cluster.empty()) {
      if (!b.authority.empty()) {
        drop(absl::StrCat("backend '", PrintableText(b.authority),
                          "' dropped: it names cluster '",
                          PrintableText(b.cluster), "' too"));
        continue;
      }
      if (b.cluster.size() > kMaxClusterName) {
        drop(absl::StrCat(
            "backend cluster '", PrintableText(b.cluster.substr(0, 64)),
            "…' dropped: its name is longer than ", kMaxClusterName, " bytes"));
        continue;
      }
    } else if (absl::Status s = ValidateDestination(b.authority); !s.ok()) {
      drop(absl::StrCat("backend '", PrintableText(b.authority),
                        "' dropped: ", s.message()));
      continue;
    }
    absl::Status filters = ValidateHeaderModifier(b.request_headers);
    if (filters.ok()) filters = ValidateHeaderModifier(b.response_headers);
    if (!filters.ok()) {
      drop(absl::StrCat("backend '", PrintableText(NameOf(b)),
                        "' dropped: its filters: ", filters.message()));
      continue;
    }
    bool merged = false;
    for (size_t i = 0; i < split->backends_.size(); ++i) {
      if (split->backends_[i].authority == b.authority &&
          split->backends_[i].cluster == b.cluster) {
        wide[i] += b.weight;  // at most 2^32 per input: cannot overflow
        merged = true;
      }
    }
    if (!merged) {
      if (split->backends_.size() == kMaxBackends) {
        drop(absl::StrCat("backend '", PrintableText(NameOf(b)),
                          "' dropped: more than ", kMaxBackends, " backends"));
        continue;
      }
      split->backends_.push_back(b);
      split->keys_.push_back(KeyOf(b));
      wide.push_back(b.weight);
    }
  }
  if (split->backends_.empty()) return nullptr;
  uint64_t max = *std::max_element(wide.begin(), wide.end());
  constexpr uint64_t kMaxWeight = std::numeric_limits<uint32_t>::max();
  for (size_t i = 0; i < wide.size(); ++i) {
    uint64_t w = wide[i];
    if (max > kMaxWeight) {
      // In long double: w × kMaxWeight does not fit 64 bits.
      long double scaled = static_cast<long double>(w) * kMaxWeight / max;
      w = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(scaled)));
    }
    split->backends_[i].weight = static_cast<uint32_t>(w);
  }
  return split;
}

size_t TrafficSplit::Draw(absl::BitGenRef gen, uint64_t excluded) const {
  if (first_available_) {
    for (size_t i = 0; i < backends_.size(); ++i) {
      if ((excluded >> i & 1) == 0) return i;
    }
    return backends_.size();
  }
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

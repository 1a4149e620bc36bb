// AddressSet: an immutable set of strings (endpoint addresses) in one
// buffer, for membership tests off the hot path. Each member costs its
// characters and a 4-byte offset, instead of a std::string (32 bytes, plus a
// heap block past 15 characters) and a hash slot.
//
//   AddressSet live({"10.0.0.1:80", "10.0.0.2:80"});
//   live.contains("10.0.0.2:80");  // true; O(log n)
//
// Thread-compatible (immutable once built).
#ifndef MESH_SRC_MODEL_ADDRESS_SET_H_
#define MESH_SRC_MODEL_ADDRESS_SET_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace mesh::internal {

class AddressSet {
 public:
  AddressSet() = default;
  // Duplicates are kept once. REQUIRES: total size < 4 GiB.
  explicit AddressSet(const std::vector<std::string>& members) {
    std::vector<absl::string_view> sorted(members.begin(), members.end());
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    size_t chars = 0;
    for (absl::string_view m : sorted) chars += m.size();
    chars_.reserve(chars);
    starts_.reserve(sorted.size() + 1);
    for (absl::string_view m : sorted) {
      starts_.push_back(static_cast<uint32_t>(chars_.size()));
      chars_.append(m.data(), m.size());
    }
    starts_.push_back(static_cast<uint32_t>(chars_.size()));
  }

  size_t size() const { return starts_.empty() ? 0 : starts_.size() - 1; }

  bool contains(absl::string_view s) const {
    size_t lo = 0, hi = size();  // search [lo, hi)
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      absl::string_view m = At(mid);
      if (m == s) return true;
      if (m < s) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return false;
  }

 private:
  absl::string_view At(size_t i) const {
    return absl::string_view(chars_).substr(starts_[i],
                                            starts_[i + 1] - starts_[i]);
  }

  std::string chars_;             // the members, sorted, back to back
  std::vector<uint32_t> starts_;  // member i is [starts_[i], starts_[i + 1])
};

}  // namespace mesh::internal

#endif  // MESH_SRC_MODEL_ADDRESS_SET_H_

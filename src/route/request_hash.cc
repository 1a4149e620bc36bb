#include "src/route/request_hash.h"

#include <re2/re2.h>

#include "src/base/xxhash.h"

namespace mesh::internal {

std::optional<uint64_t> RequestHash(
    const CompiledRoute& route,
    const std::vector<std::pair<std::string, std::string>>* headers,
    uint64_t channel_id) {
  std::optional<uint64_t> hash;
  for (const CompiledRoute::HashPolicy& p : route.hash_policies) {
    std::optional<uint64_t> value;
    if (p.policy.kind == RequestHashPolicy::Kind::kChannel) {
      value = channel_id;
    } else if (headers != nullptr) {
      std::string joined;
      bool found = false;
      for (const auto& [name, v] : *headers) {
        if (name != p.policy.header) continue;
        if (found) joined += ',';
        joined += v;
        found = true;
      }
      if (found) {
        if (p.regex != nullptr) {
          re2::RE2::GlobalReplace(&joined, *p.regex, p.policy.substitution);
        }
        value = XxHash64(joined);
      }
    }
    if (!value) continue;
    hash = hash ? ((*hash << 1 | *hash >> 63) ^ *value) : *value;
    if (p.policy.terminal) break;
  }
  return hash;
}

}  // namespace mesh::internal

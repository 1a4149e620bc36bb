#include "src/base/xxhash.h"

#include <cstddef>
#include <cstring>

#include "absl/base/config.h"

namespace mesh::internal {
namespace {

// The five primes of the specification.
constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kPrime5 = 0x27D4EB2F165667C5ULL;

constexpr uint64_t Rotl(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

// Lanes are read little-endian whatever the host's byte order.
uint64_t Read64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
#ifdef ABSL_IS_BIG_ENDIAN
  v = __builtin_bswap64(v);
#endif
  return v;
}

uint32_t Read32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
#ifdef ABSL_IS_BIG_ENDIAN
  v = __builtin_bswap32(v);
#endif
  return v;
}

uint64_t Round(uint64_t acc, uint64_t lane) {
  acc += lane * kPrime2;
  acc = Rotl(acc, 31);
  return acc * kPrime1;
}

uint64_t MergeAccumulator(uint64_t acc, uint64_t lane_acc) {
  acc ^= Round(0, lane_acc);
  return acc * kPrime1 + kPrime4;
}

uint64_t Avalanche(uint64_t acc) {
  acc ^= acc >> 33;
  acc *= kPrime2;
  acc ^= acc >> 29;
  acc *= kPrime3;
  acc ^= acc >> 32;
  return acc;
}

}  // namespace

uint64_t XxHash64(absl::string_view data, uint64_t seed) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t len = data.size();
  const unsigned char* const end = p + len;
  uint64_t acc;
  if (len >= 32) {
    // Four accumulators over 32-byte stripes, one 8-byte lane each.
    uint64_t v1 = seed + kPrime1 + kPrime2;
    uint64_t v2 = seed + kPrime2;
    uint64_t v3 = seed;
    uint64_t v4 = seed - kPrime1;
    const unsigned char* const last_stripe = end - 32;
    do {
      v1 = Round(v1, Read64(p));
      v2 = Round(v2, Read64(p + 8));
      v3 = Round(v3, Read64(p + 16));
      v4 = Round(v4, Read64(p + 24));
      p += 32;
    } while (p <= last_stripe);
    acc = Rotl(v1, 1) + Rotl(v2, 7) + Rotl(v3, 12) + Rotl(v4, 18);
    acc = MergeAccumulator(acc, v1);
    acc = MergeAccumulator(acc, v2);
    acc = MergeAccumulator(acc, v3);
    acc = MergeAccumulator(acc, v4);
  } else {
    acc = seed + kPrime5;
  }
  acc += static_cast<uint64_t>(len);
  // The fewer than 32 bytes left: 8 at a time, then 4, then one by one.
  for (; end - p >= 8; p += 8) {
    acc ^= Round(0, Read64(p));
    acc = Rotl(acc, 27) * kPrime1 + kPrime4;
  }
  if (end - p >= 4) {
    acc ^= static_cast<uint64_t>(Read32(p)) * kPrime1;
    acc = Rotl(acc, 23) * kPrime2 + kPrime3;
    p += 4;
  }
  for (; p < end; ++p) {
    acc ^= static_cast<uint64_t>(*p) * kPrime5;
    acc = Rotl(acc, 11) * kPrime1;
  }
  return Avalanche(acc);
}

}  // namespace mesh::internal

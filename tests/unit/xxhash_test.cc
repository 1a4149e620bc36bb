// XxHash64 against the reference implementation. The expected values were
// computed once with `xxhsum -H64` (xxhsum 0.8.1, Debian's xxhash package),
// seed 0, e.g. `printf '%s' abc | xxhsum -H64`, and, for other seeds (which
// xxhsum cannot take), with XXH64() of the same package's libxxhash.so.0
// called through Python's ctypes. The test needs neither.
#include "src/base/xxhash.h"

#include <string>

#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

// "The quick brown fox jumps over the lazy dog. " repeated, cut at `n`.
std::string Fox(size_t n) {
  std::string s;
  while (s.size() < n) s += "The quick brown fox jumps over the lazy dog. ";
  s.resize(n);
  return s;
}

TEST(XxHash64Test, MatchesXxhsum) {
  // Lengths chosen to cover each path: no stripe (0, 1, 3, 13, 14 bytes:
  // 1-, 4- and 8-byte tails), exactly one stripe (32), stripes plus every
  // tail (39 = 32 + 4 + 3), several stripes (100, 1000).
  EXPECT_EQ(XxHash64(""), 0xef46db3751d8e999ULL);
  EXPECT_EQ(XxHash64("a"), 0xd24ec4f1a98c6e5bULL);
  EXPECT_EQ(XxHash64("abc"), 0x44bc2cf5ad770999ULL);
  EXPECT_EQ(XxHash64("10.0.0.1:80_0"), 0x75041381e7371a08ULL);
  EXPECT_EQ(XxHash64("message digest"), 0x066ed728fceeb3beULL);
  EXPECT_EQ(XxHash64("abcdefghijklmnopqrstuvwxyz012345"),
            0xbf2cd639b4143b80ULL);
  EXPECT_EQ(XxHash64("abcdefghijklmnopqrstuvwxyz0123456789ABC"),
            0x272531ad3653d0ddULL);
  EXPECT_EQ(XxHash64(Fox(100)), 0x748b482c10d9fb2aULL);
  EXPECT_EQ(XxHash64(std::string(1000, 'x')), 0x4cb9a3b69cb700e1ULL);
}

TEST(XxHash64Test, MatchesLibxxhashWithSeeds) {
  EXPECT_EQ(XxHash64("abc", 0), XxHash64("abc"));
  EXPECT_EQ(XxHash64("abc", 1), 0xbea9ca8199328908ULL);
  EXPECT_EQ(XxHash64("", 2654435761ULL), 0xac75fda2929b17efULL);
  EXPECT_EQ(XxHash64(Fox(100), 1), 0xc6774a97b67b07ecULL);
  // Seed = the first prime: the fourth accumulator starts at 0.
  EXPECT_EQ(XxHash64(Fox(100), 0x9E3779B185EBCA87ULL), 0xb114e76d26512d6aULL);
}

TEST(XxHash64Test, ReadsOnlyTheView) {
  // A view into a longer buffer, at an odd (unaligned) offset.
  std::string buffer = "#" + Fox(100) + "trailing";
  EXPECT_EQ(XxHash64(absl::string_view(buffer).substr(1, 100)),
            0x748b482c10d9fb2aULL);
}

}  // namespace
}  // namespace mesh::internal

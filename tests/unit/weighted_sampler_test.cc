#include "src/balance/weighted_sampler.h"

#include <cmath>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

// `draw(n)` gives distinct pairs below n, each ordered pair equally often
// (within 6 standard deviations of a binomial count), for n = 2, 3, 7.
void ExpectDistinctUniformPairs(
    const std::function<std::pair<size_t, size_t>(size_t)>& draw) {
  for (size_t n : {2u, 3u, 7u}) {
    std::vector<int> counts(n * n, 0);
    const int kDraws = 20000;
    for (int i = 0; i < kDraws; ++i) {
      auto [a, b] = draw(n);
      ASSERT_LT(a, n);
      ASSERT_LT(b, n);
      ASSERT_NE(a, b);
      ++counts[a * n + b];
    }
    double expected = static_cast<double>(kDraws) / (n * (n - 1));
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = 0; b < n; ++b) {
        if (a == b) continue;
        double sd = std::sqrt(expected * (1 - 1.0 / (n * (n - 1))));
        EXPECT_NEAR(counts[a * n + b], expected, 6 * sd) << n << " " << a << b;
      }
    }
  }
}

TEST(DrawDistinctPairTest, AlwaysDistinctAndUniformOverOrderedPairs) {
  std::mt19937_64 gen(42);
  ExpectDistinctUniformPairs(
      [&](size_t n) { return DrawDistinctPair(n, gen); });
}

TEST(DistinctPairFromBitsTest, AlwaysDistinctAndUniformOverOrderedPairs) {
  std::mt19937_64 gen(7);
  ExpectDistinctUniformPairs(
      [&](size_t n) { return DistinctPairFromBits(n, gen()); });
}

TEST(DistinctPairFromBitsTest, TheExtremeBitsStayInRange) {
  for (size_t n : {2u, 1000u, 100000u}) {
    for (uint64_t bits : {uint64_t{0}, ~uint64_t{0}, uint64_t{0xffffffff},
                          uint64_t{0xffffffff} << 32}) {
      auto [a, b] = DistinctPairFromBits(n, bits);
      EXPECT_LT(a, n);
      EXPECT_LT(b, n);
      EXPECT_NE(a, b);
    }
  }
}

TEST(WeightedSamplerTest, EqualWeightsAreUniform) {
  WeightedSampler s({3, 3, 3});
  EXPECT_TRUE(s.uniform());
}

TEST(WeightedSamplerTest, SamplesInProportionToWeights) {
  std::vector<uint32_t> weights = {1, 2, 3, 4};
  WeightedSampler s(weights);
  ASSERT_FALSE(s.uniform());
  std::mt19937_64 gen(7);
  std::vector<int> counts(4, 0);
  const int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) ++counts[s.Sample(gen)];
  for (size_t i = 0; i < weights.size(); ++i) {
    double p = weights[i] / 10.0;
    double sd = std::sqrt(kDraws * p * (1 - p));
    EXPECT_NEAR(counts[i], kDraws * p, 6 * sd) << "index " << i;
  }
}

TEST(WeightedSamplerTest, DistinctPairsFromWeightedDraws) {
  WeightedSampler s({1, 100});
  std::mt19937_64 gen(3);
  for (int i = 0; i < 1000; ++i) {
    auto [a, b] = s.SampleDistinctPair(gen);
    ASSERT_NE(a, b);
  }
}

}  // namespace
}  // namespace mesh::internal

// The ring-hash balancer (gRFC A42) and its ring: sizes and entries, the
// spread of hashes, what a change of the set moves, ejection, and Create's
// checks of the ring sizes.
#include "src/balance/ring_hash_balancer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/balancer.h"
#include "src/balance/balancer.h"
#include "src/balance/hash_ring.h"
#include "src/base/xxhash.h"
#include "tests/support/fake_clock.h"

namespace mesh {
namespace {

using ::mesh::internal::Balancer;
using ::mesh::internal::CallHandle;
using ::mesh::internal::CallOutcome;
using ::mesh::internal::HashRing;
using ::mesh::internal::RingHashBalancer;
using ::mesh::internal::XxHash64;
using ::mesh::testing::FakeClock;

std::vector<Endpoint> Endpoints(int n, uint32_t weight = 1) {
  std::vector<Endpoint> out;
  for (int i = 1; i <= n; ++i) {
    out.emplace_back("10.0.0." + std::to_string(i) + ":80", weight);
  }
  return out;
}

HashRing RingOf(const std::vector<Endpoint>& eps, uint64_t min_size = 1024,
                uint64_t max_size = 8 * 1024 * 1024) {
  return HashRing(
      eps.size(), [&](size_t i) -> const Endpoint& { return eps[i]; }, min_size,
      max_size);
}

// `n` random hashes, the same in every test.
std::vector<uint64_t> Hashes(size_t n) {
  std::mt19937_64 gen(42);
  std::vector<uint64_t> out(n);
  for (auto& h : out) h = gen();
  return out;
}

// Entries per endpoint index.
std::map<uint32_t, size_t> Counts(const HashRing& ring) {
  std::map<uint32_t, size_t> counts;
  for (size_t p = 0; p < ring.size(); ++p) ++counts[ring.index(p)];
  return counts;
}

// The bound of the spread tests: an endpoint that owns a share p of a ring
// of R entries at pseudo-random places owns an arc of expected length p with
// variance p(1 - p) / (R + 1) (a Beta(pR, (1 - p)R) sum of spacings), and N
// random hashes then land on it with a further binomial variance
// p(1 - p) / N. Six standard deviations of the sum, as a share.
double SixSigma(double p, double ring_size, double n) {
  return 6 * std::sqrt(p * (1 - p) / (ring_size + 1) + p * (1 - p) / n);
}

class RingHashTest : public ::testing::Test {
 protected:
  std::unique_ptr<Balancer> Make(BalancerOptions options = {}) {
    options.kind = BalancerKind::kRingHash;
    absl::StatusOr<std::unique_ptr<Balancer>> b =
        Balancer::Create(options, &clock_, &rng_ref_);
    EXPECT_TRUE(b.ok()) << b.status();
    return *std::move(b);
  }

  static std::string At(Balancer& b, uint64_t hash) {
    absl::StatusOr<CallHandle> h = b.PickHashed(hash);
    EXPECT_TRUE(h.ok()) << h.status();
    return h.ok() ? h->endpoint().address : "";
  }

  FakeClock clock_;
  std::mt19937_64 rng_{1234};
  absl::BitGenRef rng_ref_{rng_};
};

TEST(HashRingTest, EntriesAreXxHashesOfAddressAndCount) {
  std::vector<Endpoint> one = {Endpoint("10.0.0.1:80")};
  HashRing ring = RingOf(one, 3, 3);
  ASSERT_EQ(ring.size(), 3u);
  std::vector<uint64_t> want = {XxHash64("10.0.0.1:80_0"),
                                XxHash64("10.0.0.1:80_1"),
                                XxHash64("10.0.0.1:80_2")};
  std::sort(want.begin(), want.end());
  for (size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(ring.hash(p), want[p]);
    EXPECT_EQ(ring.index(p), 0u);
  }
  // The first entry at or after a hash, wrapping past the last.
  EXPECT_EQ(ring.Find(want[0]), 0u);
  EXPECT_EQ(ring.Find(want[0] + 1), 1u);
  EXPECT_EQ(ring.Find(want[2]), 2u);
  if (want[2] != UINT64_MAX) {
    EXPECT_EQ(ring.Find(want[2] + 1), 0u);
  }
  EXPECT_EQ(ring.Find(0), 0u);
}

TEST(HashRingTest, SizesFollowA42) {
  // Equal weights: ceil(min_size / n) entries each.
  EXPECT_EQ(RingOf(Endpoints(4)).size(), 1024u);
  EXPECT_EQ(RingOf(Endpoints(3)).size(), 3 * 342u);
  EXPECT_EQ(RingOf(Endpoints(1000)).size(), 2000u);
  EXPECT_EQ(RingOf(Endpoints(4), 1, 4).size(), 4u);
  EXPECT_EQ(RingOf(Endpoints(1), 1, 1).size(), 1u);
  // max_size caps even below one entry per endpoint.
  EXPECT_EQ(RingOf(Endpoints(4), 1, 1).size(), 1u);
  EXPECT_EQ(RingOf({}).size(), 0u);
  // Weights 1:3: the lighter gets min_size / 4 entries.
  HashRing weighted =
      RingOf({Endpoint("10.0.0.1:80", 1), Endpoint("10.0.0.2:80", 3)});
  EXPECT_THAT(Counts(weighted),
              ::testing::ElementsAre(::testing::Pair(0u, 256u),
                                     ::testing::Pair(1u, 768u)));
  // Skewed weights grow the ring until max_size caps it, in either order;
  // below max_size, min_size is the floor.
  std::vector<Endpoint> skewed = {Endpoint("10.0.0.1:80", 1),
                                  Endpoint("10.0.0.2:80", 10000)};
  EXPECT_EQ(RingOf(skewed, 1024, 4096).size(), 4096u);
  EXPECT_EQ(RingOf({skewed[1], skewed[0]}, 1024, 4096).size(), 4096u);
  EXPECT_EQ(RingOf(skewed, 1024).size(), 10001u);
  EXPECT_EQ(RingOf(Endpoints(7), 5000, 5000).size(), 5000u);
}

// What A42 moves when an endpoint joins: equal weights go from
// ceil(1024 / 4) = 256 entries each to ceil(1024 / 5) = 205, so besides the
// newcomer's entries, the rescaling drops entries 205..255 of the others. A
// hash may move to the newcomer, or away from a dropped entry; nothing else.
TEST(HashRingTest, JoiningMovesHashesOnlyToTheNewcomerOrOffDroppedEntries) {
  std::vector<Endpoint> five = Endpoints(5);
  std::vector<Endpoint> four(five.begin(), five.begin() + 4);
  HashRing before = RingOf(four), after = RingOf(five);
  auto present = [](const HashRing& ring, uint64_t hash) {
    return ring.hash(ring.Find(hash)) == hash;
  };
  size_t to_newcomer = 0, off_dropped = 0;
  for (uint64_t h : Hashes(10000)) {
    size_t old_pos = before.Find(h), new_pos = after.Find(h);
    if (before.index(old_pos) == after.index(new_pos)) continue;
    if (after.index(new_pos) == 4) {
      ++to_newcomer;
    } else {
      EXPECT_FALSE(present(after, before.hash(old_pos))) << h;
      ++off_dropped;
    }
  }
  EXPECT_GT(to_newcomer, 1500u);
  EXPECT_LT(off_dropped, to_newcomer);
}

// And when one leaves: its hashes move, and a survivor's hash moves only
// onto an entry the rescaling added (205 → 256 entries each).
TEST(HashRingTest, LeavingMovesItsHashesAndHashesOntoAddedEntries) {
  std::vector<Endpoint> five = Endpoints(5);
  std::vector<Endpoint> four = {five[0], five[1], five[3], five[4]};
  const uint32_t old_index[] = {0, 1, 3, 4};  // of four[i] in five
  HashRing before = RingOf(five), after = RingOf(four);
  size_t survivors_moved = 0;
  for (uint64_t h : Hashes(10000)) {
    uint32_t was = before.index(before.Find(h));
    size_t new_pos = after.Find(h);
    if (was == 2 || was == old_index[after.index(new_pos)]) continue;
    EXPECT_NE(before.hash(before.Find(after.hash(new_pos))),
              after.hash(new_pos))
        << h;
    ++survivors_moved;
  }
  EXPECT_LT(survivors_moved, 1500u);
}

TEST_F(RingHashTest, NoEndpointsFailsUnavailable) {
  auto b = Make();
  EXPECT_EQ(b->Pick().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(b->PickHashed(7).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(RingHashTest, SameHashSameEndpoint) {
  auto b = Make();
  b->SetEndpoints(Endpoints(4));
  auto other = Make();
  std::vector<Endpoint> reversed = Endpoints(4);
  std::reverse(reversed.begin(), reversed.end());
  other->SetEndpoints(reversed);
  std::vector<uint64_t> hashes = Hashes(1000);
  std::vector<std::string> first;
  for (uint64_t h : hashes) first.push_back(At(*b, h));
  // Again, on another balancer of the same set, and after an update that
  // changes only labels.
  std::vector<Endpoint> labelled = Endpoints(4);
  for (auto& e : labelled) e.labels["zone"] = "b";
  for (size_t i = 0; i < hashes.size(); ++i) {
    EXPECT_EQ(At(*b, hashes[i]), first[i]);
    EXPECT_EQ(At(*other, hashes[i]), first[i]);
  }
  b->SetEndpoints(labelled);
  for (size_t i = 0; i < hashes.size(); ++i) {
    EXPECT_EQ(At(*b, hashes[i]), first[i]);
  }
}

TEST_F(RingHashTest, RandomHashesSpreadOverEqualEndpoints) {
  auto b = Make();
  b->SetEndpoints(Endpoints(4));
  std::map<std::string, int> picks;
  const int kN = 10000;
  for (uint64_t h : Hashes(kN)) ++picks[At(*b, h)];
  ASSERT_EQ(picks.size(), 4u);
  // 1024 entries, p = 1/4: the bound is 25% ± 8.5%.
  double bound = SixSigma(0.25, 1024, kN);
  for (const auto& [address, n] : picks) {
    EXPECT_NEAR(n / double{kN}, 0.25, bound) << address;
  }
}

TEST_F(RingHashTest, RandomHashesFollowWeights) {
  auto b = Make();
  b->SetEndpoints({Endpoint("10.0.0.1:80", 1), Endpoint("10.0.0.2:80", 3)});
  std::map<std::string, int> picks;
  const int kN = 10000;
  for (uint64_t h : Hashes(kN)) ++picks[At(*b, h)];
  // 256 and 768 entries: 25% ± 8.5%.
  EXPECT_NEAR(picks["10.0.0.1:80"] / double{kN}, 0.25,
              SixSigma(0.25, 1024, kN));
}

TEST_F(RingHashTest, PickWithoutHashSpreads) {
  auto b = Make();
  b->SetEndpoints(Endpoints(4));
  std::map<std::string, int> picks;
  const int kN = 10000;
  for (int i = 0; i < kN; ++i) {
    absl::StatusOr<CallHandle> h = b->Pick();
    ASSERT_TRUE(h.ok());
    ++picks[h->endpoint().address];
  }
  ASSERT_EQ(picks.size(), 4u);
  for (const auto& [address, n] : picks) {
    EXPECT_NEAR(n / double{kN}, 0.25, SixSigma(0.25, 1024, kN)) << address;
  }
}

TEST_F(RingHashTest, AFifthEndpointTakesAboutAFifth) {
  auto b = Make();
  b->SetEndpoints(Endpoints(4));
  std::vector<uint64_t> hashes = Hashes(10000);
  std::vector<std::string> before;
  for (uint64_t h : hashes) before.push_back(At(*b, h));
  b->SetEndpoints(Endpoints(5));
  int moved = 0, to_newcomer = 0;
  for (size_t i = 0; i < hashes.size(); ++i) {
    std::string now = At(*b, hashes[i]);
    if (now == before[i]) continue;
    ++moved;
    to_newcomer += now == "10.0.0.5:80";
  }
  // A42's rescaling (see HashRingTest above) moves about 10% more between
  // the others: about 30% move, about 20% to the newcomer.
  EXPECT_LT(moved, 3500);
  EXPECT_NEAR(to_newcomer / 10000.0, 0.2, SixSigma(0.2, 1025, 10000));
}

TEST_F(RingHashTest, RemovingAnEndpointMovesItsHashesAndFewOthers) {
  auto b = Make();
  b->SetEndpoints(Endpoints(5));
  std::vector<uint64_t> hashes = Hashes(10000);
  std::vector<std::string> before;
  for (uint64_t h : hashes) before.push_back(At(*b, h));
  std::vector<Endpoint> four = Endpoints(5);
  four.erase(four.begin() + 2);
  b->SetEndpoints(four);
  int its = 0, others_moved = 0;
  for (size_t i = 0; i < hashes.size(); ++i) {
    std::string now = At(*b, hashes[i]);
    EXPECT_NE(now, "10.0.0.3:80");
    if (before[i] == "10.0.0.3:80") {
      ++its;
    } else {
      others_moved += now != before[i];
    }
  }
  EXPECT_NEAR(its / 10000.0, 0.2, SixSigma(0.2, 1025, 10000));
  EXPECT_LT(others_moved, 1500);
}

TEST_F(RingHashTest, EjectedEndpointsHashesGoToTheNextOnTheRingAndComeBack) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  auto b = Make(o);
  std::vector<Endpoint> eps = Endpoints(4);
  b->SetEndpoints(eps);
  HashRing ring = RingOf(eps);
  std::vector<uint64_t> hashes = Hashes(2000);
  std::vector<std::string> before;
  for (uint64_t h : hashes) before.push_back(At(*b, h));

  b->PickHashed(hashes[0])->Complete(CallOutcome::kEndpointFailure);
  const std::string& out = before[0];
  int moved = 0;
  for (size_t i = 0; i < hashes.size(); ++i) {
    std::string now = At(*b, hashes[i]);
    if (before[i] != out) {
      EXPECT_EQ(now, before[i]);
      continue;
    }
    // The next entry of another endpoint, walking on from the hash's own.
    size_t p = ring.Find(hashes[i]);
    while (eps[ring.index(p)].address == out) p = (p + 1) % ring.size();
    EXPECT_EQ(now, eps[ring.index(p)].address);
    ++moved;
  }
  EXPECT_GT(moved, 0);
  clock_.Advance(absl::Seconds(1));
  for (size_t i = 0; i < hashes.size(); ++i) {
    EXPECT_EQ(At(*b, hashes[i]), before[i]);
  }
}

TEST_F(RingHashTest, WithEveryEndpointEjectedAHashKeepsItsOwn) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  auto b = Make(o);
  // Two of four ejected 100 ms apart, then an update that keeps only them.
  b->SetEndpoints(Endpoints(4));
  std::vector<uint64_t> hashes = Hashes(1000);
  auto eject = [&](const std::string& address) {
    for (uint64_t h : hashes) {
      absl::StatusOr<CallHandle> c = b->PickHashed(h);
      if (c->endpoint().address == address) {
        c->Complete(CallOutcome::kEndpointFailure);
        return;
      }
    }
    FAIL() << "no hash reaches " << address;
  };
  eject("10.0.0.1:80");
  clock_.Advance(absl::Milliseconds(100));
  eject("10.0.0.2:80");
  b->SetEndpoints(Endpoints(2));
  std::vector<std::string> own;
  for (uint64_t h : hashes) own.push_back(At(*b, h));
  ASSERT_THAT(b->Stats(),
              ::testing::Each(::testing::Field(&EndpointStats::ejected, true)));
  for (size_t i = 0; i < hashes.size(); ++i) {
    EXPECT_EQ(At(*b, hashes[i]), own[i]);
  }
  // 10.0.0.1's ejection ends first: every hash goes to it (the picks that
  // found both ejected must not have remembered that for too long)...
  clock_.Advance(absl::Milliseconds(900));
  for (uint64_t h : hashes) EXPECT_EQ(At(*b, h), "10.0.0.1:80");
  // ...and after 10.0.0.2's, each to its own again.
  clock_.Advance(absl::Milliseconds(100));
  for (size_t i = 0; i < hashes.size(); ++i) {
    EXPECT_EQ(At(*b, hashes[i]), own[i]);
  }
}

TEST_F(RingHashTest, PicksAreCountedButNoRttIsEstimated) {
  auto b = Make();
  b->SetEndpoints(Endpoints(2));
  absl::StatusOr<CallHandle> held = b->PickHashed(99);
  ASSERT_TRUE(held.ok());
  std::string address = held->endpoint().address;
  for (const auto& s : b->Stats()) {
    EXPECT_EQ(s.pending, s.address == address ? 1 : 0) << s.address;
    EXPECT_EQ(s.picks, s.address == address ? 1u : 0u) << s.address;
  }
  clock_.Advance(absl::Milliseconds(50));
  held->Complete(CallOutcome::kSuccess);
  std::vector<EndpointStats> stats = b->Stats();
  ASSERT_EQ(stats.size(), 2u);
  for (const auto& s : stats) EXPECT_EQ(s.pending, 0) << s.address;
  // Unlike the others, ring hash keeps no RTT estimate (it picks by hash
  // alone, and a success then reads no clock): the 50 ms call left the
  // picked endpoint's estimate where the other's is.
  EXPECT_DOUBLE_EQ(stats[0].rtt_estimate_ms, stats[1].rtt_estimate_ms);
  EXPECT_GT(stats[0].rtt_estimate_ms, 0);
}

TEST_F(RingHashTest, RingSizesAreHonoured) {
  BalancerOptions o;
  o.ring_min_size = 100;
  o.ring_max_size = 300;
  auto b = Make(o);
  auto& ring_hash = static_cast<RingHashBalancer&>(*b);
  EXPECT_EQ(ring_hash.RingSize(), 0u);
  b->SetEndpoints(Endpoints(4));
  EXPECT_EQ(ring_hash.RingSize(), 100u);
  b->SetEndpoints({Endpoint("10.0.0.1:80", 1), Endpoint("10.0.0.2:80", 1000)});
  EXPECT_EQ(ring_hash.RingSize(), 300u);
  // Each entry of the 300 is reachable: the heavy endpoint gets ~all.
  int light = 0;
  for (uint64_t h : Hashes(1000)) light += At(*b, h) == "10.0.0.1:80";
  EXPECT_LT(light, 50);
}

TEST_F(RingHashTest, CreateRejectsBadRingSizesNamingTheField) {
  auto message = [](uint64_t min_size, uint64_t max_size) {
    BalancerOptions o;
    o.kind = BalancerKind::kRingHash;
    o.ring_min_size = min_size;
    o.ring_max_size = max_size;
    absl::Status s = Balancer::Create(o).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
        << min_size << " " << max_size;
    return std::string(s.message());
  };
  const uint64_t k8M = 8 * 1024 * 1024;
  EXPECT_THAT(message(0, 1024), ::testing::HasSubstr("ring_min_size"));
  EXPECT_THAT(message(k8M + 1, k8M + 1), ::testing::HasSubstr("ring_min_size"));
  EXPECT_THAT(message(1024, 1023), ::testing::HasSubstr("ring_max_size"));
  EXPECT_THAT(message(1024, k8M + 1), ::testing::HasSubstr("ring_max_size"));
  for (uint64_t size : {uint64_t{1}, k8M}) {
    BalancerOptions o;
    o.kind = BalancerKind::kRingHash;
    o.ring_min_size = o.ring_max_size = size;
    EXPECT_TRUE(Balancer::Create(o).ok()) << size;
  }
}

TEST(RingHashConcurrencyTest, UpdatesWhilePicking) {
  BalancerOptions o;
  o.kind = BalancerKind::kRingHash;
  absl::StatusOr<std::unique_ptr<Balancer>> made = Balancer::Create(o);
  ASSERT_TRUE(made.ok());
  Balancer& b = **made;
  std::vector<Endpoint> set_a = Endpoints(20), set_b = Endpoints(30, 2);
  b.SetEndpoints(set_a);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> bad{0}, picks{0};
  std::vector<std::thread> pickers;
  for (int t = 0; t < 2; ++t) {
    pickers.emplace_back([&, t] {
      std::mt19937_64 gen(t);
      while (!stop.load()) {
        absl::StatusOr<CallHandle> h = t == 0 ? b.PickHashed(gen()) : b.Pick();
        if (!h.ok() || h->endpoint().address.rfind("10.0.0.", 0) != 0) {
          bad.fetch_add(1);
        }
        picks.fetch_add(1);
      }
    });
  }
  for (int i = 0; i < 500 || picks.load() < 2000; ++i) {
    b.SetEndpoints(i % 2 ? set_a : set_b);
  }
  stop.store(true);
  for (auto& t : pickers) t.join();
  EXPECT_EQ(bad.load(), 0);
  for (const auto& s : b.Stats()) EXPECT_EQ(s.pending, 0) << s.address;
}

}  // namespace
}  // namespace mesh

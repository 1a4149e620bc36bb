#include <atomic>
#include <cmath>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/balancer.h"
#include "src/balance/balancer.h"
#include "tests/support/fake_clock.h"

namespace mesh {
namespace {

using ::mesh::internal::Balancer;
using ::mesh::internal::CallHandle;
using ::mesh::internal::CallOutcome;

using ::mesh::testing::FakeClock;

Endpoint Ep(const std::string& address, uint32_t weight = 1) {
  Endpoint e;
  e.address = address;
  e.weight = weight;
  return e;
}

class P2cTest : public ::testing::Test {
 protected:
  std::unique_ptr<Balancer> Make(BalancerOptions options = {}) {
    absl::StatusOr<std::unique_ptr<Balancer>> b =
        Balancer::Create(options, &clock_, &rng_ref_);
    EXPECT_TRUE(b.ok()) << b.status();
    return *std::move(b);
  }

  // Makes `address` look slow: one call to it that took `rtt`.
  void GiveSample(Balancer& b, const std::string& address, absl::Duration rtt) {
    for (int i = 0; i < 1000; ++i) {
      absl::StatusOr<CallHandle> h = b.Pick();
      ASSERT_TRUE(h.ok());
      if (h->endpoint().address != address) continue;
      clock_.Advance(rtt);
      h->Complete(CallOutcome::kSuccess);
      return;
    }
    FAIL() << "never picked " << address;
  }

  static const EndpointStats& StatsOf(const std::vector<EndpointStats>& all,
                                      const std::string& address) {
    for (const auto& s : all) {
      if (s.address == address) return s;
    }
    static EndpointStats none;
    ADD_FAILURE() << "no stats for " << address;
    return none;
  }

  FakeClock clock_;
  std::mt19937_64 rng_{1234};
  absl::BitGenRef rng_ref_{rng_};
};

TEST_F(P2cTest, NoEndpointsFailsUnavailable) {
  auto b = Make();
  absl::StatusOr<CallHandle> h = b->Pick();
  EXPECT_EQ(h.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(P2cTest, OneEndpointIsAlwaysPicked) {
  auto b = Make();
  b->SetEndpoints({Ep("10.0.0.1:80")});
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<CallHandle> h = b->Pick();
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->endpoint().address, "10.0.0.1:80");
  }
}

TEST_F(P2cTest, PickExceptNeverOffersATriedEndpoint) {
  auto b = Make();
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80"), Ep("10.0.0.3:80")});
  // The untried endpoint is the most loaded and the slowest: a plain pick
  // would avoid it, a hedge's must take it.
  GiveSample(*b, "10.0.0.3:80", absl::Seconds(1));
  std::vector<CallHandle> held;
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<CallHandle> h =
        b->PickExcept({"10.0.0.1:80", "10.0.0.2:80"});
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->endpoint().address, "10.0.0.3:80");
    held.push_back(*std::move(h));
  }
  // Of two untried, the cheaper wins, as in any pick.
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<CallHandle> h = b->PickExcept({"10.0.0.1:80"});
    ASSERT_TRUE(h.ok());
    EXPECT_NE(h->endpoint().address, "10.0.0.1:80");
    seen.insert(h->endpoint().address);
    h->Complete(CallOutcome::kCancelled);
  }
  EXPECT_EQ(seen, (std::set<std::string>{"10.0.0.2:80"}));
  absl::StatusOr<CallHandle> none =
      b->PickExcept({"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(none.status().message()),
              ::testing::HasSubstr("every endpoint was tried"));
}

TEST_F(P2cTest, InvalidOptionsNameTheField) {
  BalancerOptions o;
  o.default_rtt = absl::ZeroDuration();
  EXPECT_THAT(std::string(Balancer::Create(o).status().message()),
              ::testing::HasSubstr("default_rtt"));
  o = {};
  o.decay = -absl::Seconds(1);
  EXPECT_THAT(std::string(Balancer::Create(o).status().message()),
              ::testing::HasSubstr("decay"));
}

TEST_F(P2cTest, InvalidEjectionOptionsNameTheField) {
  auto message = [](const BalancerOptions& o) {
    absl::Status s = Balancer::Create(o).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    return std::string(s.message());
  };
  for (absl::Duration base : {absl::ZeroDuration(), -absl::Seconds(1)}) {
    BalancerOptions o;
    o.ejection_base = base;
    EXPECT_THAT(message(o), ::testing::HasSubstr("ejection_base"));
  }
  BalancerOptions o;
  o.ejection_base = absl::Seconds(2);
  o.ejection_max = absl::Seconds(1);
  EXPECT_THAT(message(o), ::testing::HasSubstr("ejection_max"));
  for (double share : {-0.1, 1.5, std::nan("")}) {
    o = {};
    o.ejection_max_share = share;
    EXPECT_THAT(message(o), ::testing::HasSubstr("ejection_max_share"))
        << share;
  }
  // The bounds themselves are valid, and so is max == base.
  for (double share : {0.0, 1.0}) {
    o = {};
    o.ejection_max_share = share;
    o.ejection_max = o.ejection_base;
    EXPECT_TRUE(Balancer::Create(o).ok()) << share;
  }
}

TEST_F(P2cTest, LowerCostWinsAndPendingRaisesCost) {
  auto b = Make();
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80")});
  GiveSample(*b, "10.0.0.1:80", absl::Milliseconds(100));
  // 10.0.0.2 costs 30 ms × (pending + 1); 10.0.0.1 costs 100 ms × 1. With the
  // clock stopped, estimates stay put, so the order of picks is exact.
  std::vector<CallHandle> held;
  std::vector<std::string> order;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<CallHandle> h = b->Pick();
    ASSERT_TRUE(h.ok());
    order.push_back(h->endpoint().address);
    held.push_back(*std::move(h));
  }
  EXPECT_THAT(order, ::testing::ElementsAre("10.0.0.2:80", "10.0.0.2:80",
                                            "10.0.0.2:80", "10.0.0.1:80"));
  auto stats = b->Stats();
  EXPECT_EQ(StatsOf(stats, "10.0.0.2:80").pending, 3);
  EXPECT_EQ(StatsOf(stats, "10.0.0.1:80").pending, 1);
  held.clear();  // handles settle pending when they go
  stats = b->Stats();
  EXPECT_EQ(StatsOf(stats, "10.0.0.2:80").pending, 0);
  EXPECT_EQ(StatsOf(stats, "10.0.0.1:80").pending, 0);
}

TEST_F(P2cTest, WeightTwoGetsTwiceThePicksAtEqualCost) {
  auto b = Make();
  b->SetEndpoints({Ep("10.0.0.1:80", 2), Ep("10.0.0.2:80", 1)});
  std::map<std::string, int> picks;
  const int kPicks = 30000;
  for (int i = 0; i < kPicks; ++i) {
    absl::StatusOr<CallHandle> h = b->Pick();
    ASSERT_TRUE(h.ok());
    ++picks[h->endpoint().address];
  }
  double p = 2.0 / 3.0;
  double sd = std::sqrt(kPicks * p * (1 - p));
  EXPECT_NEAR(picks["10.0.0.1:80"], kPicks * p, 6 * sd);
}

TEST_F(P2cTest, WeightsAmongManyEndpoints) {
  auto b = Make();
  b->SetEndpoints({Ep("10.0.0.1:80", 1), Ep("10.0.0.2:80", 2),
                   Ep("10.0.0.3:80", 3), Ep("10.0.0.4:80", 4)});
  std::map<std::string, int> picks;
  const int kPicks = 40000;
  for (int i = 0; i < kPicks; ++i) ++picks[b->Pick()->endpoint().address];
  for (int w = 1; w <= 4; ++w) {
    double p = w / 10.0;
    double sd = std::sqrt(kPicks * p * (1 - p));
    EXPECT_NEAR(picks["10.0.0." + std::to_string(w) + ":80"], kPicks * p,
                6 * sd)
        << "weight " << w;
  }
}

TEST_F(P2cTest, StatisticsSurviveResetAndAttributeChanges) {
  auto b = Make();
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80")});
  GiveSample(*b, "10.0.0.1:80", absl::Milliseconds(100));
  absl::StatusOr<CallHandle> held = b->Pick();
  ASSERT_TRUE(held.ok());
  std::string held_address = held->endpoint().address;

  // A Reset that keeps both, adds one, and changes 10.0.0.1's weight.
  b->SetEndpoints({Ep("10.0.0.1:80", 3), Ep("10.0.0.2:80"), Ep("10.0.0.3:80")});
  auto stats = b->Stats();
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_NEAR(StatsOf(stats, "10.0.0.1:80").rtt_estimate_ms, 100.0, 1e-6);
  EXPECT_EQ(StatsOf(stats, "10.0.0.1:80").weight, 3u);
  // The newcomer starts at its peers' mean: 100 ms and 30 ms decayed by the
  // 100 ms the clock moved.
  EXPECT_NEAR(StatsOf(stats, "10.0.0.3:80").rtt_estimate_ms,
              (100.0 + 30.0 * std::exp(-0.1 / 10)) / 2, 1e-6);
  if (held_address == "10.0.0.2:80") {
    EXPECT_EQ(StatsOf(stats, "10.0.0.2:80").pending, 1);
  }
  held->Complete(CallOutcome::kSuccess);
  stats = b->Stats();
  EXPECT_EQ(StatsOf(stats, "10.0.0.2:80").pending, 0);
}

// A record is found by address whatever the order of the lists: both in
// address order (walked side by side), the new one out of order (a map), and
// the current one out of order (a map from the start).
TEST_F(P2cTest, StatisticsSurviveResetsInAnyOrder) {
  auto b = Make();
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80"), Ep("10.0.0.3:80")});
  GiveSample(*b, "10.0.0.2:80", absl::Milliseconds(200));
  const double kept = StatsOf(b->Stats(), "10.0.0.2:80").rtt_estimate_ms;
  ASSERT_GT(kept, 100.0);
  // Sorted to sorted, with one gone before and one added after.
  b->SetEndpoints({Ep("10.0.0.2:80"), Ep("10.0.0.3:80"), Ep("10.0.0.4:80")});
  EXPECT_DOUBLE_EQ(StatsOf(b->Stats(), "10.0.0.2:80").rtt_estimate_ms, kept);
  // Sorted to a list out of order after its first entries.
  b->SetEndpoints({Ep("10.0.0.3:80"), Ep("10.0.0.4:80"), Ep("10.0.0.2:80")});
  EXPECT_DOUBLE_EQ(StatsOf(b->Stats(), "10.0.0.2:80").rtt_estimate_ms, kept);
  // From that unsorted list to a sorted one.
  b->SetEndpoints({Ep("10.0.0.2:80"), Ep("10.0.0.5:80")});
  auto stats = b->Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_DOUBLE_EQ(StatsOf(stats, "10.0.0.2:80").rtt_estimate_ms, kept);
  // The newcomer was seeded from its peers, not found as an old record.
  EXPECT_NE(StatsOf(stats, "10.0.0.5:80").rtt_estimate_ms, kept);
}

TEST_F(P2cTest, NewcomerStartsAtItsPeersMeanEstimate) {
  auto b = Make();
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80")});
  GiveSample(*b, "10.0.0.1:80", absl::Milliseconds(60));
  // 10.0.0.1 is at 60 ms, 10.0.0.2 at its default 30 ms decayed over the
  // 60 ms the clock moved.
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80"), Ep("10.0.0.3:80")});
  EXPECT_NEAR(StatsOf(b->Stats(), "10.0.0.3:80").rtt_estimate_ms,
              (60.0 + 30.0 * std::exp(-0.06 / 10)) / 2, 1e-6);
  // The very first set has no peers: default_rtt.
  auto fresh = Make();
  fresh->SetEndpoints({Ep("10.0.0.9:80")});
  EXPECT_NEAR(fresh->Stats()[0].rtt_estimate_ms, 30.0, 1e-6);
}

TEST_F(P2cTest, RemovedEndpointIsNeverPickedAgain) {
  auto b = Make();
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80"), Ep("10.0.0.3:80")});
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.3:80")});
  for (int i = 0; i < 500; ++i) {
    EXPECT_NE(b->Pick()->endpoint().address, "10.0.0.2:80");
  }
}

TEST_F(P2cTest, FailingEndpointIsEjectedThenTriedAgain) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  auto b = Make(o);
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80")});
  for (int i = 0; i < 1000; ++i) {
    absl::StatusOr<CallHandle> h = b->Pick();
    if (h->endpoint().address == "10.0.0.1:80") {
      h->Complete(CallOutcome::kEndpointFailure);
      break;
    }
  }
  EXPECT_TRUE(StatsOf(b->Stats(), "10.0.0.1:80").ejected);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(b->Pick()->endpoint().address, "10.0.0.2:80");
  }
  clock_.Advance(absl::Milliseconds(1001));
  EXPECT_FALSE(StatsOf(b->Stats(), "10.0.0.1:80").ejected);
  int back = 0;
  for (int i = 0; i < 200; ++i) {
    back += b->Pick()->endpoint().address == "10.0.0.1:80";
  }
  EXPECT_GT(back, 0);
}

TEST_F(P2cTest, PicksNeverFailEvenWhenEveryEndpointIsEjected) {
  BalancerOptions o;
  o.ejection_base = absl::Seconds(1);
  auto b = Make(o);
  // Failures never eject both of two endpoints...
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80")});
  for (int i = 0; i < 10; ++i)
    b->Pick()->Complete(CallOutcome::kEndpointFailure);
  auto stats = b->Stats();
  EXPECT_EQ(stats[0].ejected + stats[1].ejected, 1);
  // ...but an update can leave only ejected ones: two of four were ejected,
  // and the other two leave.
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80"), Ep("10.0.0.3:80"),
                   Ep("10.0.0.4:80")});
  for (int i = 0; i < 1000; ++i) {
    absl::StatusOr<CallHandle> h = b->Pick();
    ASSERT_TRUE(h.ok());
    h->Complete(h->endpoint().address <= "10.0.0.2:80"
                    ? CallOutcome::kEndpointFailure
                    : CallOutcome::kCancelled);
  }
  b->SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80")});
  stats = b->Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_TRUE(stats[0].ejected);
  EXPECT_TRUE(stats[1].ejected);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(b->Pick().ok());
  clock_.Advance(absl::Seconds(1));
  stats = b->Stats();
  EXPECT_FALSE(stats[0].ejected);
  EXPECT_FALSE(stats[1].ejected);
}

TEST(P2cConcurrencyTest, UpdatesWhilePicking) {
  absl::StatusOr<std::unique_ptr<Balancer>> made = Balancer::Create({});
  ASSERT_TRUE(made.ok());
  Balancer& b = **made;
  std::vector<Endpoint> set_a, set_b;
  for (int i = 1; i <= 20; ++i)
    set_a.push_back(Ep("10.0.1." + std::to_string(i) + ":80"));
  for (int i = 1; i <= 20; ++i)
    set_b.push_back(Ep("10.0.2." + std::to_string(i) + ":80", 1 + i % 3));
  b.SetEndpoints(set_a);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> bad{0}, picks{0};
  std::vector<std::thread> pickers;
  for (int t = 0; t < 2; ++t) {
    pickers.emplace_back([&] {
      std::vector<CallHandle> held;
      while (!stop.load()) {
        absl::StatusOr<CallHandle> h = b.Pick();
        if (!h.ok()) {
          bad.fetch_add(1);
          continue;
        }
        const std::string& a = h->endpoint().address;
        if (a.rfind("10.0.1.", 0) != 0 && a.rfind("10.0.2.", 0) != 0)
          bad.fetch_add(1);
        held.push_back(*std::move(h));
        if (held.size() > 8) held.erase(held.begin());
        picks.fetch_add(1);
      }
    });
  }
  // Updates overlap picks: at least 2000 of each (bounded by 20 s).
  absl::Time give_up = absl::Now() + absl::Seconds(20);
  for (int i = 0; (i < 2000 || picks.load() < 2000) && absl::Now() < give_up;
       ++i) {
    b.SetEndpoints(i % 2 ? set_a : set_b);
  }
  stop.store(true);
  for (auto& t : pickers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GE(picks.load(), 2000);
  for (const auto& s : b.Stats()) EXPECT_EQ(s.pending, 0) << s.address;
}

TEST(RoundRobinTest, VisitsEachEndpointInTurnAndSkipsEjected) {
  FakeClock clock;
  BalancerOptions o;
  o.kind = BalancerKind::kRoundRobin;
  absl::StatusOr<std::unique_ptr<Balancer>> made = Balancer::Create(o, &clock);
  ASSERT_TRUE(made.ok());
  Balancer& b = **made;
  EXPECT_EQ(b.Pick().status().code(), absl::StatusCode::kUnavailable);
  b.SetEndpoints({Ep("10.0.0.1:80"), Ep("10.0.0.2:80"), Ep("10.0.0.3:80")});
  std::map<std::string, int> picks;
  for (int i = 0; i < 300; ++i) ++picks[b.Pick()->endpoint().address];
  EXPECT_EQ(picks["10.0.0.1:80"], 100);
  EXPECT_EQ(picks["10.0.0.2:80"], 100);
  EXPECT_EQ(picks["10.0.0.3:80"], 100);

  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<CallHandle> h = b.Pick();
    if (h->endpoint().address == "10.0.0.2:80")
      h->Complete(CallOutcome::kEndpointFailure);
  }
  picks.clear();
  for (int i = 0; i < 300; ++i) ++picks[b.Pick()->endpoint().address];
  EXPECT_EQ(picks["10.0.0.2:80"], 0);
  EXPECT_EQ(picks["10.0.0.1:80"] + picks["10.0.0.3:80"], 300);
}

}  // namespace
}  // namespace mesh

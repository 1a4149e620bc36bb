// Helpers for balancer tests: end calls on a chosen endpoint, read one
// endpoint's stats, and time an ejection on a FakeClock.
//
//   EndOn(*b, "10.0.0.1:80", CallOutcome::kFailure, 5);
//   EXPECT_TRUE(StatsOf(*b, "10.0.0.1:80").ejected);
//
// Thread-compatible, as the balancers' tests use them.
#ifndef MESH_TESTS_SUPPORT_BALANCER_CALLS_H_
#define MESH_TESTS_SUPPORT_BALANCER_CALLS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "mesh/balancer.h"
#include "src/balance/balancer.h"
#include "src/balance/call_handle.h"
#include "tests/support/fake_clock.h"

namespace mesh::testing {

// Ends `times` calls to `address` with `outcome`. Calls picked elsewhere
// meanwhile end kCancelled, which changes no failure count. A test failure
// if `address` is not picked within `max_picks` picks.
inline void EndOn(internal::Balancer& b, const std::string& address,
                  internal::CallOutcome outcome, int times = 1,
                  int max_picks = 100000) {
  for (int done = 0, i = 0; done < times; ++i) {
    ASSERT_LT(i, max_picks) << "never picked " << address;
    absl::StatusOr<internal::CallHandle> h = b.Pick();
    ASSERT_TRUE(h.ok()) << h.status();
    if (h->endpoint().address != address) {
      h->Complete(internal::CallOutcome::kCancelled);
      continue;
    }
    h->Complete(outcome);
    ++done;
  }
}

// The stats of `address`; a test failure (and empty stats) if it has none.
inline EndpointStats StatsOf(const internal::Balancer& b,
                             const std::string& address) {
  for (const auto& s : b.Stats()) {
    if (s.address == address) return s;
  }
  ADD_FAILURE() << "no stats for " << address;
  return {};
}

// True if `address` is ejected now and for `d` less 1 ms, and not at `d`
// (`clock` ends `d` later).
inline bool EjectedForExactly(FakeClock& clock, const internal::Balancer& b,
                              const std::string& address, absl::Duration d) {
  bool ok = StatsOf(b, address).ejected;
  clock.Advance(d - absl::Milliseconds(1));
  ok = ok && StatsOf(b, address).ejected;
  clock.Advance(absl::Milliseconds(1));
  return ok && !StatsOf(b, address).ejected;
}

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_BALANCER_CALLS_H_

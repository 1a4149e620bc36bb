// PolicyBackends: which backend policy a Linkerd target's endpoint
// observers get from the outbound policies routing to it — at registration,
// at each change, cleared by the parent that set it only, never after the
// registration ends — and that it keeps no entry for an unused target.
#include "src/discovery/linkerd/policy_backends.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace mesh::internal::linkerd {
namespace {

// Records the ejection thresholds it is told, 0 for "no ejection".
class Recorder final : public EndpointObserver {
 public:
  void OnBackendPolicy(const BackendPolicy& policy) override {
    told.push_back(policy.ejection ? policy.ejection->consecutive_failures : 0);
  }
  void OnEndpointUpdate(const EndpointUpdate&) override {}
  std::vector<uint32_t> told;
};

BackendPolicy Accrual(uint32_t failures) {
  BackendPolicy::Ejection e;
  e.consecutive_failures = failures;
  e.interval_rules = false;
  BackendPolicy p;
  p.ejection = e;
  return p;
}

TEST(PolicyBackendsTest, ObserversGetTheParentsPolicyNowAndOnChange) {
  PolicyBackends backends;
  Recorder early, late, other;
  auto r1 = backends.Register("books:80", &early);
  auto r2 = backends.Register("shelves:80", &other);
  backends.SetFromParent("web:80", {{"books:80", Accrual(3)}});
  EXPECT_EQ(early.told, std::vector<uint32_t>({3}));
  EXPECT_TRUE(other.told.empty());                 // not a backend of web's
  auto r3 = backends.Register("books:80", &late);  // gets it at once
  EXPECT_EQ(late.told, std::vector<uint32_t>({3}));
  backends.SetFromParent("web:80", {{"books:80", Accrual(7)}});
  EXPECT_EQ(early.told, std::vector<uint32_t>({3, 7}));
  // The policy moves its routes to shelves: books is cleared.
  backends.SetFromParent("web:80", {{"shelves:80", Accrual(7)}});
  EXPECT_EQ(early.told, std::vector<uint32_t>({3, 7, 0}));
  EXPECT_EQ(other.told, std::vector<uint32_t>({7}));
  // Nothing left to set (accrual off), then the policy goes.
  backends.SetFromParent("web:80", {});
  EXPECT_EQ(other.told, std::vector<uint32_t>({7, 0}));
  backends.ClearParent("web:80");
  EXPECT_EQ(other.told.size(), 2u);
}

TEST(PolicyBackendsTest, AParentClearsOnlyWhatItSet) {
  PolicyBackends backends;
  Recorder books;
  auto r = backends.Register("books:80", &books);
  backends.SetFromParent("web:80", {{"books:80", Accrual(3)}});
  backends.SetFromParent("api:80", {{"books:80", Accrual(5)}});  // last wins
  backends.ClearParent("web:80");  // no longer books's setter
  EXPECT_EQ(books.told, std::vector<uint32_t>({3, 5}));
  backends.ClearParent("api:80");
  EXPECT_EQ(books.told, std::vector<uint32_t>({3, 5, 0}));
}

TEST(PolicyBackendsTest, AnEndedRegistrationHearsNothingAndLeavesNoEntry) {
  PolicyBackends backends;
  Recorder books;
  auto r = backends.Register("books:80", &books);
  EXPECT_EQ(backends.EntriesForTest(), 1u);
  r.reset();
  EXPECT_EQ(backends.EntriesForTest(), 0u);
  backends.SetFromParent("web:80", {{"books:80", Accrual(3)}});
  EXPECT_TRUE(books.told.empty());
  // The policy is kept for a destination that comes later; cleared, the
  // entry goes.
  EXPECT_EQ(backends.EntriesForTest(), 1u);
  backends.ClearParent("web:80");
  EXPECT_EQ(backends.EntriesForTest(), 0u);
}

}  // namespace
}  // namespace mesh::internal::linkerd
